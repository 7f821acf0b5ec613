"""The step log inside the checkpoint document on Firestore (``ports/inline_log.py``).

A hop writes the checkpoint and nothing else while the log fits; the step
protocol's promises hold as with a document per entry: one outcome under
duplicate deliveries, a crash anywhere, a commit whose precondition fails
(the transaction keeps the inline log), time travel over inline and spilled
entries, erasure of what the inline entries hold, the caps (bytes, the
document beside the state, the retention window) spilling and moving the
inline entries out to documents that fold the same.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.errors import LeaseHeld, StepMoved
from inboxflow.naming import trace_path
from inboxflow.ports import inline_log
from inboxflow.ports.checkpoint import Checkpoint, StepLog

pytestmark = pytest.mark.emulator

T0 = 1_780_000_000.0
DAY = 86400.0


@pytest.fixture
def stores(firestore_env: Any) -> Iterator[Any]:
    """Opens a new Firestore store (a worker of its own) on the emulator, with ``policy``."""
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    opened: list[Any] = []

    def open_store(policy: inline_log.InlineLog | None = None) -> Any:
        store = FirestoreCheckpointStore.from_env(os.environ)
        if policy is not None:
            store.inline_policy = policy
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        store.close()


def _checkpoint(trace_id: str, step: int, at: float, **state: Any) -> Checkpoint:
    return Checkpoint(
        trace_id=trace_id,
        graph="g",
        status="running",
        step=step,
        node="n",
        state={"n": step - 1, **state},
        created_at=T0,
        updated_at=at,
        expire_at=at + 30 * DAY,
    )


def _entry(step: int, at: float, **delta: Any) -> StepLog:
    return StepLog(
        step_name="n",
        step_order=step,
        output_delta={"n": step, **delta},
        started_at=at,
        worker=f"w{step}",
        expire_at=at + 30 * DAY,
    )


def _start(store: Any, trace_id: str, **state: Any) -> None:
    assert store.create_trace(_checkpoint(trace_id, 1, T0, **state), _entry(0, T0, **state))


def _hop(store: Any, trace_id: str, step: int, at: float = T0, **delta: Any) -> None:
    """Lease step ``step``, then commit it: the checkpoint moves to ``step + 1``."""
    owner = f"w{step}"
    leased = store.take_lease(trace_id, step, owner, now=at, ttl_s=60)
    new = _checkpoint(trace_id, step + 1, at)
    new = new.model_copy(update={"state": {**leased.state, "n": step, **delta}})
    store.commit_step(new, owner, _entry(step, at, **delta))


def _raw(store: Any, trace_id: str) -> dict[str, Any]:
    return store.get(trace_path(trace_id)) or {}


def _spilled(store: Any, trace_id: str) -> list[str]:
    return [doc_id for doc_id, _ in store.list(f"{trace_path(trace_id)}/steps")]


def _fold_at(store: Any, trace_id: str, upto: int) -> dict[str, Any]:
    from inboxflow.engine.runtime import fold

    checkpoint = store.get_trace(trace_id)
    return fold(store.step_logs(trace_id), upto=upto, checkpoint_state=checkpoint.state)


def test_a_hop_writes_the_checkpoint_only_and_the_log_reads_back_in_order(stores) -> None:
    store = stores()
    _start(store, "t")
    for step in (1, 2, 3):
        _hop(store, "t", step)
    assert _spilled(store, "t") == []
    assert sorted(_raw(store, "t")["log"]) == ["000000", "000001", "000002", "000003"]
    assert [e.step_order for e in store.step_logs("t")] == [0, 1, 2, 3]
    assert [e.worker for e in store.step_logs("t")] == ["w0", "w1", "w2", "w3"]
    assert _fold_at(store, "t", 2)["n"] == 2  # time travel over inline entries


def test_a_hop_is_one_write_and_a_start_one(stores) -> None:
    """Counted at the RPC layer, as ``bench/emulated.py`` counts them."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from firestore_ops import count_operations, writes_by_collection

    store = stores()
    counter = count_operations(store)
    before = counter.snapshot()
    _start(store, "t")
    started = counter.snapshot()
    _hop(store, "t", 1)
    hopped = counter.snapshot()
    assert started["writes"] - before["writes"] == 1
    assert hopped["writes"] - started["writes"] == 2  # the lease, the commit
    assert hopped["reads"] - started["reads"] == 1
    assert writes_by_collection(counter.since(before)) == {"traces": 3}  # no traces/steps


def test_a_duplicate_delivery_commits_once(stores) -> None:
    first, second = stores(), stores()
    _start(first, "t")
    first.take_lease("t", 1, "a", now=T0, ttl_s=60)
    with pytest.raises(LeaseHeld):
        second.take_lease("t", 1, "b", now=T0, ttl_s=60)
    first.commit_step(_checkpoint("t", 2, T0), "a", _entry(1, T0))
    with pytest.raises(StepMoved):  # the duplicate arrives after the commit
        second.take_lease("t", 1, "b", now=T0, ttl_s=60)
    with pytest.raises(StepMoved):  # or commits on a lease it never got
        second.commit_step(_checkpoint("t", 2, T0, dup=True), "b", _entry(1, T0, dup=True))
    logs = first.step_logs("t")
    assert [e.step_order for e in logs] == [0, 1]
    assert "dup" not in logs[1].output_delta and "dup" not in first.get_trace("t").state


def test_a_crash_between_lease_and_commit_leaves_one_outcome(stores) -> None:
    crashed, taker = stores(), stores()
    _start(crashed, "t")
    _hop(crashed, "t", 1)
    crashed.take_lease("t", 2, "crashed", now=T0, ttl_s=10)  # ... and dies
    taker.take_lease("t", 2, "taker", now=T0 + 11, ttl_s=60)  # the lease expired
    taker.commit_step(_checkpoint("t", 3, T0 + 11), "taker", _entry(2, T0 + 11, by="taker"))
    with pytest.raises(StepMoved):  # the crashed worker wakes up and commits late
        crashed.commit_step(_checkpoint("t", 3, T0), "crashed", _entry(2, T0, by="crashed"))
    logs = taker.step_logs("t")
    assert [e.step_order for e in logs] == [0, 1, 2]
    assert logs[2].output_delta["by"] == "taker"
    assert sorted(_raw(taker, "t")["log"]) == ["000000", "000001", "000002"]


def test_a_commit_whose_precondition_fails_keeps_the_inline_log(stores) -> None:
    """Someone writes the checkpoint under the lease (a fork's note): the conditional
    commit fails, the port's transaction commits over the document it reads, log and all."""
    store = stores()
    _start(store, "t")
    _hop(store, "t", 1)
    store.take_lease("t", 2, "w2", now=T0, ttl_s=60)

    def note_fork(tx: Any) -> None:
        doc = tx.get(trace_path("t"))
        tx.set(trace_path("t"), {**doc, "forks": [{"trace_id": "f", "step": 1, "at": T0}]})

    store.run_transaction(note_fork)
    fell_back: list[bool] = []
    on_mark = store._commit_on_mark
    store._commit_on_mark = lambda *a: fell_back.append(not on_mark(*a)) or not fell_back[-1]
    store.commit_step(_checkpoint("t", 3, T0), "w2", _entry(2, T0))
    raw = _raw(store, "t")
    assert sorted(raw["log"]) == ["000000", "000001", "000002"]
    assert raw["step"] == 3 and raw["lease"] is None
    assert fell_back == [True]
    assert [e.step_order for e in store.step_logs("t")] == [0, 1, 2]
    assert _spilled(store, "t") == []


def test_past_the_byte_budget_entries_spill_and_the_log_still_folds(stores) -> None:
    store = stores(inline_log.InlineLog(log_bytes=4 * 1024, min_charge=1024))
    _start(store, "t")
    for step in range(1, 7):
        _hop(store, "t", step)
    raw = _raw(store, "t")
    assert sorted(raw["log"]) == ["000000", "000001", "000002", "000003"]
    assert raw["log_spilled"] is True
    assert _spilled(store, "t") == ["000004", "000005", "000006"]
    assert [e.step_order for e in store.step_logs("t")] == list(range(7))
    for upto in (2, 5):  # time travel on both sides of the spill
        assert _fold_at(store, "t", upto)["n"] == upto


def test_a_state_that_grows_moves_the_inline_entries_out(stores) -> None:
    """The checkpoint with its inline log stays under ``document_bytes``: a state that
    grows takes the log out to documents, and later entries spill."""
    store = stores(inline_log.InlineLog(document_bytes=64 * 1024))
    _start(store, "t")
    _hop(store, "t", 1)
    _hop(store, "t", 2, big="x" * 64_000)  # with 2 inline entries > 64 KiB
    raw = _raw(store, "t")
    assert raw["log"] == {} and raw["log_bytes"] == 0 and raw["log_spilled"] is True
    assert _spilled(store, "t") == ["000000", "000001", "000002"]
    assert [e.step_order for e in store.step_logs("t")] == [0, 1, 2]
    assert _fold_at(store, "t", 1)["n"] == 1


def test_past_the_window_the_inline_entries_get_their_own_expiry(stores) -> None:
    """An inline entry lives as long as the checkpoint: a commit past the window moves
    them to documents that expire when they did before."""
    store = stores()
    _start(store, "t")
    _hop(store, "t", 1, at=T0 + 60)
    _hop(store, "t", 2, at=T0 + 2 * 3600)  # resumed two hours later
    assert _raw(store, "t")["log"] == {}
    assert _spilled(store, "t") == ["000000", "000001", "000002"]
    entry1 = store.get(f"{trace_path('t')}/steps/000001")
    assert entry1["expire_at"] == T0 + 60 + 30 * DAY
    assert [e.step_order for e in store.step_logs("t")] == [0, 1, 2]


def test_erasure_erases_the_inline_entries(stores, tmp_path: Path) -> None:
    from inboxflow.adapters.sqlite_vectors import SqliteVectorIndex
    from inboxflow.clock import FakeClock
    from inboxflow.dev.personal.access import access_document
    from inboxflow.personal.erasure import Eraser
    from inboxflow.personal.finder import PersonFinder

    person = "kim@example.com"
    store, vectors = stores(), SqliteVectorIndex(tmp_path / "v.db")
    email = {
        "message_id": "m-kim",
        "sender": {"address": person, "name": "Kim"},
        "to": [{"address": "help@shop.example", "name": ""}],
        "subject": "My order",
        "body_text": "Where is it?",
    }
    _start(store, "about", email=email)
    _hop(store, "about", 1, reply=f"Dear {person}, it ships today.")
    _start(store, "other")
    _hop(store, "other", 1, note=f"cc {person} on this")
    held = PersonFinder(store, vectors).find(person)
    steps = {d["trace_id"]: d["steps"] for d in access_document(held, T0)["decisions"]}
    assert any(person in str(s.get("output_delta")) for s in steps["about"])

    Eraser(store, vectors, FakeClock(T0)).erase(person, by="dpo")
    assert store.get(trace_path("about")) is None
    other = _raw(store, "other")
    assert person not in str(other)
    assert other["log"]["000001"]["output_delta"]["note"] == "cc [erased] on this"
    assert store.step_logs("other")[1].output_delta["note"] == "cc [erased] on this"
    vectors.close()


def test_a_trace_written_before_inline_logs_keeps_its_documents(stores) -> None:
    """A checkpoint without the counters (an older trace) spills every further entry."""
    store = stores(None)
    legacy = dataclasses.replace(inline_log.InlineLog(), log_bytes=0)
    store.inline_policy = legacy  # nothing fits: entry 0 and 1 go to documents
    _start(store, "t")
    _hop(store, "t", 1)
    store.inline_policy = inline_log.InlineLog()
    raw = _raw(store, "t")
    for name in inline_log.FIELDS:
        raw.pop(name, None)
    store.set(trace_path("t"), raw)
    _hop(store, "t", 2)
    assert _spilled(store, "t") == ["000000", "000001", "000002"]
    assert [e.step_order for e in store.step_logs("t")] == [0, 1, 2]


def test_retry_keeps_the_failed_inline_entry_and_the_rerun_replaces_it(
    stores, tmp_path: Path
) -> None:
    """``inboxflow retry`` records the failed step's entry (inline here) in ``retried``, and
    the re-run's entry takes its place in the log."""
    from tests.harness.runtimes import runtime_for
    from tests.harness.toy_graph import ATTEMPTS, OUTBOXES, TOY, Outbox

    from inboxflow.adapters.inprocess_bus import InProcessBus
    from inboxflow.clock import FakeClock
    from inboxflow.dev.ops.repair import retry

    store, clock = stores(), FakeClock()
    bus = InProcessBus(clock=clock)
    runtime = runtime_for(tmp_path, clock=clock, graphs={"toy": TOY}, store=store, bus=bus)
    OUTBOXES[store], ATTEMPTS[store] = Outbox(), {}
    trace_id = runtime.start("toy", {"text": "hi", "bad_route": True})
    bus.drain()
    assert store.get_trace(trace_id).status == "needs_review"
    failed = _raw(store, trace_id)["log"]["000001"]
    assert failed["error"] and _spilled(store, trace_id) == []

    clock.advance(5)
    retry(runtime, trace_id)
    [(_, kept)] = store.list(f"{trace_path(trace_id)}/retried")
    assert kept == failed
    bus.drain()
    logs = store.step_logs(trace_id)
    assert [e.step_order for e in logs] == [0, 1]
    assert logs[1].started_at > failed["started_at"]  # the re-run's entry

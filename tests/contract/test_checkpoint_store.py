"""The documents and checkpoint ports' contract, run against every adapter ``tests/contract/adapters.py`` lists."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from tests.contract.conftest import StoreFactory

from inboxflow.errors import LeaseHeld, StepMoved
from inboxflow.naming import effect_path, step_path, trace_path
from inboxflow.ports.checkpoint import Checkpoint, CheckpointStore, StepLog, TraceRoute
from inboxflow.ports.documents import DocumentExists

# --- primitives -------------------------------------------------------------------------


def test_get_missing_is_none(store: CheckpointStore) -> None:
    assert store.get("traces/nope") is None
    assert store.get("traces/nope/steps/000001") is None


def test_set_replaces_whole_document(store: CheckpointStore) -> None:
    store.set("mailboxes/a@example.com", {"history_id": "10", "labels": ["INBOX"]})
    store.set("mailboxes/a@example.com", {"history_id": "11"})
    assert store.get("mailboxes/a@example.com") == {"history_id": "11"}


def test_create_is_create_only(store: CheckpointStore) -> None:
    assert store.create("claims/msg-1", {"trace_id": "t1"}) is True
    assert store.create("claims/msg-1", {"trace_id": "t2"}) is False
    assert store.get("claims/msg-1") == {"trace_id": "t1"}


def test_paths_with_subcollections_and_colons(store: CheckpointStore) -> None:
    store.set(step_path("abc", 1), {"step_order": 1})
    store.set(effect_path("abc", 3, "dispatch"), {"status": "started"})
    store.set(trace_path("abc"), {"step": 2})
    assert store.get("traces/abc/steps/000001") == {"step_order": 1}
    assert store.get("effects/abc:3:dispatch") == {"status": "started"}
    # A subcollection's documents are not in the parent collection, and vice versa.
    assert [doc_id for doc_id, _ in store.list("traces")] == ["abc"]
    assert [doc_id for doc_id, _ in store.list("traces/abc/steps")] == ["000001"]


ODD_DOCUMENT: dict[str, Any] = {
    "nested_lists": [[1, 2], [], [[3, [4]], "x"], [{"a": [[5]]}]],
    "unicode": "Grüße, 日本語, emoji \U0001f4e7, \u0000 nul",
    "floats": [0.1, 1e-300, -2.5, 1.7976931348623157e308, 12345678.123456789],
    "ints": [0, -1, 2**62, 9007199254740993],
    "none": None,
    "bools": [True, False],
    "empty": {"list": [], "dict": {}, "string": ""},
    "keys": {"": "empty key", "__dunder__": 1, "__lead": 2, "~tilde": 3, "a.b": 4, "sp ace": 5},
    "deep": {"a": {"b": {"c": [{"d": [[None, 1.5, "s"]]}]}}},
    "expire_at": 1767225600.123457,
}


def test_round_trip_is_exact(store: CheckpointStore) -> None:
    store.set("kb/odd", ODD_DOCUMENT)
    assert store.get("kb/odd") == ODD_DOCUMENT
    got = store.get("kb/odd")
    assert got is not None
    assert type(got["ints"][0]) is int and type(got["floats"][2]) is float
    assert type(got["bools"][0]) is bool
    assert store.list("kb") == [("odd", ODD_DOCUMENT)]


def test_round_trip_through_transaction_and_create(store: CheckpointStore) -> None:
    store.create("kb/created", ODD_DOCUMENT)
    store.run_transaction(lambda tx: tx.set("kb/in_tx", tx.get("kb/created")))
    assert store.get("kb/in_tx") == ODD_DOCUMENT
    assert store.run_transaction(lambda tx: tx.get("kb/in_tx")) == ODD_DOCUMENT


def test_expire_at_can_be_none_or_absent(store: CheckpointStore) -> None:
    store.set("steps_doc/a", {"expire_at": None})
    store.set("steps_doc/b", {"other": 1})
    store.set("steps_doc/c", {"expire_at": 1700000000})
    assert store.get("steps_doc/a") == {"expire_at": None}
    assert store.get("steps_doc/b") == {"other": 1}
    assert store.get("steps_doc/c") == {"expire_at": 1700000000}


def _seed(store: CheckpointStore) -> None:
    rows = [
        ("t1", "done", 5, 30.5),
        ("t2", "running", 2, 10.0),
        ("t3", "waiting", 9, 20.25),
        ("t4", "done", 1, 40.0),
        ("t5", "needs_review", 3, 5.0),
    ]
    for trace_id, status, step, updated_at in rows:
        store.set(
            f"traces/{trace_id}",
            {
                "status": status,
                "step": step,
                "updated_at": updated_at,
                "expire_at": updated_at,
                "reviewers": [f"r{step}@example.com", "all@example.com"],
            },
        )


def _ids(rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [doc_id for doc_id, _ in rows]


def test_list_default_order_is_document_id(store: CheckpointStore) -> None:
    _seed(store)
    assert _ids(store.list("traces")) == ["t1", "t2", "t3", "t4", "t5"]
    assert _ids(store.list("traces", descending=True)) == ["t5", "t4", "t3", "t2", "t1"]
    assert _ids(store.list("traces", limit=2)) == ["t1", "t2"]
    assert store.list("nothing_here") == []


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ([("status", "==", "done")], {"t1", "t4"}),
        ([("status", "!=", "done")], {"t2", "t3", "t5"}),
        ([("step", "<", 3)], {"t2", "t4"}),
        ([("step", "<=", 3)], {"t2", "t4", "t5"}),
        ([("step", ">", 3)], {"t1", "t3"}),
        ([("step", ">=", 5)], {"t1", "t3"}),
        ([("status", "in", ["waiting", "needs_review"])], {"t3", "t5"}),
        ([("status", "==", "done"), ("step", ">", 2)], {"t1"}),
        ([("expire_at", "<", 20.25)], {"t2", "t5"}),
        ([("missing_field", "==", 1)], set()),
        ([("reviewers", "array_contains", "r9@example.com")], {"t3"}),
        (
            [("reviewers", "array_contains", "all@example.com"), ("status", "==", "done")],
            {"t1", "t4"},
        ),
        ([("reviewers", "array_contains", "nobody@example.com")], set()),
    ],
)
def test_list_filters(store: CheckpointStore, where: list[Any], expected: set[str]) -> None:
    _seed(store)
    assert set(_ids(store.list("traces", where=where))) == expected


def test_list_order_and_limit(store: CheckpointStore) -> None:
    _seed(store)
    assert _ids(store.list("traces", order_by="updated_at")) == ["t5", "t2", "t3", "t1", "t4"]
    newest = store.list("traces", order_by="updated_at", descending=True, limit=2)
    assert _ids(newest) == ["t4", "t1"]
    assert newest[0][1] == {
        "status": "done",
        "step": 1,
        "updated_at": 40.0,
        "expire_at": 40.0,
        "reviewers": ["r1@example.com", "all@example.com"],
    }
    done = store.list("traces", where=[("status", "==", "done")], order_by="step")
    assert _ids(done) == ["t4", "t1"]
    assert _ids(store.list("traces", order_by="expire_at", limit=1)) == ["t5"]


def test_list_order_by_skips_documents_without_the_field(store: CheckpointStore) -> None:
    _seed(store)
    store.set("traces/t0", {"status": "done"})
    assert "t0" not in _ids(store.list("traces", order_by="updated_at"))
    assert "t0" in _ids(store.list("traces"))


# --- transactions -------------------------------------------------------------------------


def test_transaction_returns_result_and_applies_all_writes(store: CheckpointStore) -> None:
    store.set("counters/a", {"n": 1})
    store.set("counters/gone", {"n": 0})

    def body(tx: Any) -> int:
        n = tx.get("counters/a")["n"]
        tx.set("counters/a", {"n": n + 1})
        tx.create("counters/b", {"n": 10})
        tx.delete("counters/gone")
        tx.delete("counters/never_existed")
        return n

    assert store.run_transaction(body) == 1
    assert store.get("counters/a") == {"n": 2}
    assert store.get("counters/b") == {"n": 10}
    assert store.get("counters/gone") is None


def test_exception_inside_transaction_rolls_everything_back(store: CheckpointStore) -> None:
    store.set("counters/a", {"n": 1})

    class Boom(Exception):
        pass

    def body(tx: Any) -> None:
        tx.get("counters/a")
        tx.set("counters/a", {"n": 99})
        tx.create("counters/new", {"n": 1})
        tx.delete("counters/a")
        raise Boom("node crashed mid-commit")

    with pytest.raises(Boom):
        store.run_transaction(body)
    assert store.get("counters/a") == {"n": 1}
    assert store.get("counters/new") is None


def test_create_in_transaction_on_existing_document(store: CheckpointStore) -> None:
    store.set("claims/m1", {"trace_id": "first"})

    def body(tx: Any) -> None:
        tx.set("claims/other", {"written": True})
        tx.create("claims/m1", {"trace_id": "second"})

    with pytest.raises(DocumentExists):
        store.run_transaction(body)
    assert store.get("claims/m1") == {"trace_id": "first"}
    assert store.get("claims/other") is None  # the whole transaction failed


def test_read_after_write_is_refused(store: CheckpointStore) -> None:
    def body(tx: Any) -> None:
        tx.set("counters/a", {"n": 1})
        tx.get("counters/a")

    with pytest.raises(RuntimeError, match="reads must come before writes"):
        store.run_transaction(body)
    assert store.get("counters/a") is None


def _increment(store: CheckpointStore, path: str) -> None:
    def body(tx: Any) -> None:
        doc = tx.get(path) or {"n": 0}
        tx.set(path, {"n": doc["n"] + 1})

    store.run_transaction(body)


def _hammer(
    stores: list[CheckpointStore], threads_per_store: int, path: str
) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(stores) * threads_per_store)

    def worker(worker_store: CheckpointStore) -> None:
        try:
            barrier.wait()
            _increment(worker_store, path)
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(s,)) for s in stores for _ in range(threads_per_store)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


def test_concurrent_transactions_lose_no_update(store: CheckpointStore) -> None:
    store.set("counters/c", {"n": 0})
    assert _hammer([store], 20, "counters/c") == []
    assert store.get("counters/c") == {"n": 20}


@pytest.mark.slow
def test_concurrent_transactions_across_clients(make_store: StoreFactory) -> None:
    """Separate connections/clients (as separate function instances) contend for one document."""
    stores = [make_store() for _ in range(3)]
    stores[0].set("counters/x", {"n": 0})
    assert _hammer(stores, 2, "counters/x") == []
    assert stores[0].get("counters/x") == {"n": 6}


# --- the step protocol built on the primitives ------------------------------------------


def _checkpoint(trace_id: str = "tr1", step: int = 1, now: float = 1000.0) -> Checkpoint:
    return Checkpoint(
        trace_id=trace_id,
        graph="pipeline",
        status="running",
        step=step,
        node="classify",
        state={"subject": "Hello", "labels": [["a", "b"]]},
        next=[{"trace_id": trace_id, "graph": "pipeline", "node": "classify", "step": step}],
        created_at=now,
        updated_at=now,
        expire_at=now + 86400 * 30,
    )


def _start_log(now: float = 1000.0) -> StepLog:
    return StepLog(
        step_name="__start__", step_order=0, output_delta={"subject": "Hello"}, started_at=now
    )


def test_create_trace_once(store: CheckpointStore) -> None:
    checkpoint = _checkpoint()
    assert store.create_trace(checkpoint, _start_log()) is True
    assert store.get_trace("tr1") == checkpoint
    assert store.create_trace(_checkpoint(now=2000.0), _start_log(2000.0)) is False
    assert store.get_trace("tr1") == checkpoint
    assert [log.step_name for log in store.step_logs("tr1")] == ["__start__"]


def test_the_route_of_a_trace_is_kept_on_the_checkpoint_and_step_zero(
    store: CheckpointStore,
) -> None:
    route = TraceRoute(rule="vip", profile=None, mailbox="maya@brightlane.io", blocked="list mail")
    checkpoint = _checkpoint().model_copy(update={"route": route, "status": "done", "next": []})
    start = _start_log().model_copy(update={"route": route, "routed_to": "__end__"})
    assert store.create_trace(checkpoint, start) is True
    stored = store.get_trace("tr1")
    assert stored is not None and stored.route == route and stored == checkpoint
    assert store.step_logs("tr1")[0].route == route
    older = _checkpoint("tr0").model_dump(exclude={"route"})  # stored before the field existed
    store.set(trace_path("tr0"), older)
    loaded = store.get_trace("tr0")
    assert loaded is not None and loaded.route is None


def test_take_lease_blocks_other_owner_until_expiry(store: CheckpointStore) -> None:
    store.create_trace(_checkpoint(), _start_log())
    leased = store.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    assert leased.lease is not None and leased.lease.owner == "worker-a"
    stored = store.get_trace("tr1")
    assert stored is not None and stored.lease is not None
    assert stored.lease.expires_at == 1060.0
    with pytest.raises(LeaseHeld):
        store.take_lease("tr1", 1, "worker-b", now=1030.0, ttl_s=60)
    # The same owner may re-take (a retry inside one delivery).
    store.take_lease("tr1", 1, "worker-a", now=1030.0, ttl_s=60)
    # After expiry another owner takes over.
    taken = store.take_lease("tr1", 1, "worker-b", now=1100.0, ttl_s=60)
    assert taken.lease is not None and taken.lease.owner == "worker-b"
    stored = store.get_trace("tr1")
    assert stored is not None and stored.lease is not None and stored.lease.owner == "worker-b"


def test_take_lease_on_moved_step(store: CheckpointStore) -> None:
    store.create_trace(_checkpoint(step=2), _start_log())
    with pytest.raises(StepMoved):
        store.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    with pytest.raises(StepMoved):
        store.take_lease("missing", 1, "worker-a", now=1000.0, ttl_s=60)


def test_release_lease_lets_another_owner_in(store: CheckpointStore) -> None:
    store.create_trace(_checkpoint(), _start_log())
    store.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    store.release_lease("tr1", 1, "worker-b")  # not the holder: no effect
    with pytest.raises(LeaseHeld):
        store.take_lease("tr1", 1, "worker-b", now=1001.0, ttl_s=60)
    store.release_lease("tr1", 1, "worker-a")
    store.take_lease("tr1", 1, "worker-b", now=1001.0, ttl_s=60)


def _advance(checkpoint: Checkpoint, now: float) -> Checkpoint:
    return checkpoint.model_copy(
        update={"step": checkpoint.step + 1, "node": "draft", "updated_at": now, "lease": None}
    )


def test_commit_step_requires_step_and_lease(store: CheckpointStore) -> None:
    checkpoint = _checkpoint()
    store.create_trace(checkpoint, _start_log())
    store.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    log = StepLog(
        step_name="classify", step_order=1, output_delta={"label": "x"}, started_at=1001.0
    )
    with pytest.raises(StepMoved):  # not the lease holder
        store.commit_step(_advance(checkpoint, 1002.0), "worker-b", log)
    store.commit_step(_advance(checkpoint, 1002.0), "worker-a", log)
    stored = store.get_trace("tr1")
    assert stored is not None and stored.step == 2 and stored.node == "draft"
    with pytest.raises(StepMoved):  # the step already moved on
        store.commit_step(_advance(checkpoint, 1003.0), "worker-a", log)
    stored = store.get_trace("tr1")
    assert stored is not None and stored.updated_at == 1002.0


def test_step_logs_are_ordered_deltas(store: CheckpointStore) -> None:
    checkpoint = _checkpoint()
    store.create_trace(checkpoint, _start_log())
    for step, name in enumerate(["classify", "draft", "send", "audit", "notify"], start=1):
        now = 1000.0 + step
        store.take_lease("tr1", step, "w", now=now, ttl_s=60)
        log = StepLog(
            step_name=name,
            step_order=step,
            output_delta={name: step, "matrix": [[step]]},
            started_at=now,
            expire_at=now + 10,
        )
        store.commit_step(checkpoint.model_copy(update={"step": step + 1}), "w", log)
    logs = store.step_logs("tr1")
    assert [log.step_order for log in logs] == [0, 1, 2, 3, 4, 5]
    assert [log.step_name for log in logs] == [
        "__start__",
        "classify",
        "draft",
        "send",
        "audit",
        "notify",
    ]
    assert logs[3].output_delta == {"send": 3, "matrix": [[3]]}
    assert logs[3].expire_at == 1003.0 + 10


def test_concurrent_leases_one_winner(make_store: StoreFactory) -> None:
    """Duplicate deliveries racing for one step: exactly one owner gets the lease."""
    stores = [make_store() for _ in range(2)]
    stores[0].create_trace(_checkpoint(), _start_log())
    winners: list[str] = []
    losers: list[BaseException] = []
    barrier = threading.Barrier(4)
    now = time.time()

    def race(index: int) -> None:
        owner = f"worker-{index}"
        barrier.wait()
        try:
            stores[index % 2].take_lease("tr1", 1, owner, now=now, ttl_s=60)
            winners.append(owner)
        except LeaseHeld as exc:
            losers.append(exc)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(winners) == 1 and len(losers) == 3
    stored = stores[0].get_trace("tr1")
    assert stored is not None and stored.lease is not None and stored.lease.owner == winners[0]

"""The embedded store's own promises, beyond the checkpoint store contract it shares with Firestore."""

from __future__ import annotations

import datetime as dt
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.errors import StepMoved
from inboxflow.ports.checkpoint import Checkpoint, Lease, StepLog
from inboxflow.ports.documents import Listing


def _checkpoint(state: dict | None = None) -> Checkpoint:
    return Checkpoint(
        trace_id="tr1",
        graph="toy",
        status="running",
        step=1,
        node="classify",
        state=state if state is not None else {"text": "hi"},
        created_at=1000.0,
        updated_at=1000.0,
        expire_at=9999.0,
    )


def _start() -> StepLog:
    return StepLog(step_name="__start__", step_order=0, started_at=1000.0)


def _log(step: int = 1) -> StepLog:
    return StepLog(step_name="classify", step_order=step, started_at=1001.0)


def test_a_committed_step_survives_the_process_being_killed_right_after(tmp_path: Path) -> None:
    """Durability (WAL, synchronous=NORMAL): once commit_step returns, a SIGKILL loses nothing."""
    path = tmp_path / "store.sqlite"
    script = textwrap.dedent(
        f"""
        import os, signal
        from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
        from inboxflow.ports.checkpoint import Checkpoint, StepLog
        store = SqliteCheckpointStore({str(path)!r})
        checkpoint = Checkpoint(trace_id="tr1", graph="toy", status="running", step=1,
            node="classify", state={{"text": "hi"}}, created_at=1.0, updated_at=1.0, expire_at=9.0)
        store.create_trace(checkpoint, StepLog(step_name="__start__", step_order=0, started_at=1.0))
        store.take_lease("tr1", 1, "worker-a", now=2.0, ttl_s=60)
        done = checkpoint.model_copy(update={{"step": 2, "status": "done", "state": {{"text": "bye"}}}})
        store.commit_step(done, "worker-a", StepLog(step_name="classify", step_order=1, started_at=2.0))
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert killed.returncode == -9, killed.stderr.decode()
    store = SqliteCheckpointStore(path)
    stored = store.get_trace("tr1")
    assert stored is not None and stored.step == 2 and stored.status == "done"
    assert stored.state == {"text": "bye"} and stored.lease is None
    assert [entry.step_order for entry in store.step_logs("tr1")] == [0, 1]


@pytest.mark.parametrize("stores", [1, 2], ids=["one-store", "lease-and-commit-apart"])
def test_commit_needs_the_same_step_and_the_lease_holder(tmp_path: Path, stores: int) -> None:
    """The SQL commit, and the port's check it falls back to when another store (connection)
    took the lease, keep one rule."""
    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    leaser = store if stores == 1 else SqliteCheckpointStore(tmp_path / "store.sqlite")
    checkpoint = _checkpoint()
    store.create_trace(checkpoint, _start())
    advanced = checkpoint.model_copy(update={"step": 2, "node": "draft"})
    with pytest.raises(StepMoved):  # nobody holds a lease
        store.commit_step(advanced, "worker-a", _log())
    leaser.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    with pytest.raises(StepMoved):  # someone else does
        store.commit_step(advanced, "worker-b", _log())
    assert store.get("traces/tr1/steps/000001") is None  # a refused commit writes nothing
    store.commit_step(advanced, "worker-a", _log(), {"approvals/a1": {"status": "pending"}})
    with pytest.raises(StepMoved):  # the step moved on
        store.commit_step(advanced, "worker-a", _log())
    stored = store.get_trace("tr1")
    assert stored is not None and stored.step == 2 and stored.node == "draft"
    assert store.get("approvals/a1") == {"status": "pending"}


def test_a_checkpoint_written_since_the_lease_is_checked_again(tmp_path: Path) -> None:
    """The lease holder extended its own lease elsewhere: the body changed, the rule holds."""
    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    other = SqliteCheckpointStore(tmp_path / "store.sqlite")
    checkpoint = _checkpoint()
    store.create_trace(checkpoint, _start())
    store.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    other.take_lease("tr1", 1, "worker-a", now=1010.0, ttl_s=60)  # same owner, later expiry
    store.commit_step(checkpoint.model_copy(update={"step": 2}), "worker-a", _log())
    assert store.get_trace("tr1").step == 2  # type: ignore[union-attr]
    store.take_lease("tr1", 2, "worker-a", now=1020.0, ttl_s=60)
    other.take_lease("tr1", 2, "worker-b", now=1090.0, ttl_s=60)  # a's lease expired: b took it
    with pytest.raises(StepMoved):
        store.commit_step(checkpoint.model_copy(update={"step": 3}), "worker-a", _log(2))
    assert store.get_trace("tr1").step == 2  # type: ignore[union-attr]


def test_checkpoints_round_trip_infinities_and_any_script(tmp_path: Path) -> None:
    state = {"score": math.inf, "low": -math.inf, "text": 'Café 日本 \u2028 "quoted"', "n": 2**70}
    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    store.create_trace(_checkpoint(state), _start())
    store.take_lease("tr1", 1, "w", now=1000.0, ttl_s=60)
    store.commit_step(_checkpoint(state).model_copy(update={"step": 2}), "w", _log())
    stored = store.get_trace("tr1")
    assert stored is not None and stored.state == state
    nan = _checkpoint({"x": math.nan}).model_copy(update={"trace_id": "tr2"})
    store.create_trace(nan, _start())
    assert math.isnan(store.get("traces/tr2")["state"]["x"])  # type: ignore[index]


def test_a_document_that_is_not_json_is_refused(tmp_path: Path) -> None:
    """No silent conversion: a datetime or a set is an error, not a string in the store."""
    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    with pytest.raises(TypeError, match="not JSON serializable"):
        store.set("notes/n1", {"at": dt.datetime(2026, 1, 1, tzinfo=dt.UTC)})
    with pytest.raises(TypeError, match="not JSON serializable"):
        store.create("notes/n2", {"tags": {"a", "b"}})
    assert store.list("notes") == []


def _reference(docs: dict[str, dict], where: list, order_by: str | None, descending: bool, limit):
    """What ``list`` returned before it ran in SQL: every document filtered and sorted in Python."""
    from inboxflow.adapters.sqlite_store import matches

    rows = sorted((doc_id, doc) for doc_id, doc in docs.items() if matches(doc, where))
    if order_by is not None:
        rows = [row for row in rows if order_by in row[1]]
        rows.sort(key=lambda row: row[1][order_by], reverse=descending)
    elif descending:
        rows.reverse()
    return rows[:limit] if limit is not None else rows


def test_list_in_sql_returns_what_filtering_in_python_did(tmp_path: Path) -> None:
    """Queries run in SQL (issue 31: the inbox is a query) and answer exactly as before, mixed
    types, missing fields and bodies SQLite's JSON cannot read (``Infinity``) included."""
    import random

    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    rng = random.Random(31)
    values = ["pending", "decided", "a", "é", "Z", 3, 3.5, -1, None, True, [1], {"x": 1}]
    docs: dict[str, dict] = {}
    for number in range(300):
        doc = {
            field: rng.choice(values)
            for field in ("status", "deadline", "graph")
            if rng.random() < 0.85
        }
        doc["may_decide"] = rng.sample(["ana", "ben", "cy", 7], rng.randint(0, 3))
        if number == 7:
            doc["deadline"] = math.inf
        docs[f"d{number:03d}"] = doc
        store.set(f"approvals/d{number:03d}", doc)
    queries = [
        ([("status", "==", "pending"), ("deadline", ">=", -10)], "deadline", False, 5),
        (
            [
                ("status", "==", "pending"),
                ("deadline", ">", -5),
                ("may_decide", "array_contains", "ana"),
            ],
            "deadline",
            False,
            3,
        ),
        ([("may_decide", "array_contains", 7), ("deadline", ">=", 0)], "deadline", True, None),
        ([("deadline", "<", 3.2)], None, True, 4),
        ([("status", ">", "a")], "status", False, 10),
        ([("status", "in", ["a", "Z"])], "graph", False, 2),
        ([("graph", "!=", "a"), ("status", "==", 3)], None, False, None),
        ([], "deadline", True, 7),
    ]
    for where, order_by, descending, limit in queries:
        try:
            expected = _reference(docs, where, order_by, descending, limit)
        except TypeError:
            continue  # mixed types in the order: Python refused to sort them
        assert store.list("approvals", where, order_by, descending, limit) == expected, where
    del docs["d007"]  # without the unreadable body the query runs in SQL
    store.set("approvals/d007", {"status": "gone"})
    for where, order_by, descending, limit in queries[:4]:
        assert store.list("approvals", where, order_by, descending, limit) == _reference(
            docs | {"d007": {"status": "gone"}}, where, order_by, descending, limit
        )


def test_an_inbox_query_is_an_index_range(tmp_path: Path) -> None:
    from inboxflow.adapters.sqlite_store import _query_sql

    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    where = (("may_decide", "array_contains", "ana"), ("status", "==", "pending"))
    query = _query_sql(Listing("approvals", where, "deadline", False, 50))
    assert query is not None
    plan = " ".join(
        str(row[3]) for row in store._conn.execute("EXPLAIN QUERY PLAN " + query[0], query[1])
    )
    assert "USING INDEX docs_approvals_" in plan and "LIMIT" in query[0]


def _handed_over(store: SqliteCheckpointStore) -> Checkpoint:
    """Step 1 of ``tr1`` committed with step 2's lease handed to ``worker-b`` (``Runtime._handoff``)."""
    checkpoint = _checkpoint({"text": "hi", "seen": 1})
    store.create_trace(checkpoint, _start())
    store.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    handed = Lease(step=2, owner="worker-b", expires_at=2000.0)
    committed = checkpoint.model_copy(update={"step": 2, "node": "draft", "lease": handed})
    store.commit_step(committed, "worker-a", _log())
    return committed


def test_a_handed_over_lease_is_admitted_on_the_checkpoint_the_commit_wrote(tmp_path: Path) -> None:
    """The store keeps what its commit wrote: the next step's lease admits the delivery on it
    (no JSON decoded again), as a copy the caller may change, and only once."""
    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    committed = _handed_over(store)
    leased = store.take_lease("tr1", 2, "worker-b", now=1010.0, ttl_s=60)
    assert leased.state == committed.state and leased.node == "draft" and leased.step == 2
    assert leased.state is committed.state  # the kept model, not a decoded one
    assert leased is not committed and committed.lease.owner == "worker-b"  # type: ignore[union-attr]
    assert leased.lease == Lease(step=2, owner="worker-b", expires_at=1070.0)
    assert store.get_trace("tr1").lease.expires_at == 2000.0  # type: ignore[union-attr]  # not written
    again = store.take_lease("tr1", 2, "worker-b", now=1020.0, ttl_s=60)  # a redelivery: decoded
    assert again.state == committed.state and again.state is not committed.state


def test_a_handed_over_checkpoint_changed_since_its_commit_is_read_from_its_row(
    tmp_path: Path,
) -> None:
    """Another connection rewrote the checkpoint after the commit (the lease kept): the lease
    admits the delivery on what is stored, never on what this store wrote before."""
    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    other = SqliteCheckpointStore(tmp_path / "store.sqlite")
    _handed_over(store)
    changed = other.get("traces/tr1")
    assert changed is not None
    other.set("traces/tr1", {**changed, "state": {"text": "repaired"}})
    seen: list[str] = []
    leased = store.take_lease(
        "tr1", 2, "worker-b", now=1010.0, ttl_s=60, admit=lambda c: seen.append(c.status)
    )
    assert leased.state == {"text": "repaired"}
    other.set("traces/tr1", {**changed, "status": "needs_review"})
    assert store.get_trace("tr1").status == "needs_review"  # type: ignore[union-attr]
    assert seen == ["running"]  # admission saw the stored checkpoint

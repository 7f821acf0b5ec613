"""``get_versioned`` and ``update_if_unchanged`` on every store (SQLite, the Firestore emulator):
the conditional write an approval decision is (first writer wins, nothing read again)."""

from __future__ import annotations

import threading

from tests.contract.conftest import StoreFactory

from inboxflow.ports.checkpoint import CheckpointStore


def test_an_unchanged_document_takes_the_fields_and_the_other_documents(
    store: CheckpointStore,
) -> None:
    store.set("approvals/a1", {"status": "pending", "payload": {"draft": "hi"}, "round": 0})
    found = store.get_versioned("approvals/a1")
    assert found is not None and found.doc["status"] == "pending"
    token = {"approval_id": "a1", "used_at": 5.0}
    assert store.update_if_unchanged(
        "approvals/a1",
        found.version,
        {"status": "decided", "payload": {"draft": "edited"}},
        {"approval_tokens/t1": token},
    )
    assert store.get("approvals/a1") == {
        "status": "decided",
        "payload": {"draft": "edited"},
        "round": 0,
    }
    assert store.get("approval_tokens/t1") == token


def test_a_changed_document_takes_nothing(store: CheckpointStore) -> None:
    store.set("approvals/a2", {"status": "pending", "round": 0})
    found = store.get_versioned("approvals/a2")
    assert found is not None
    store.set("approvals/a2", {"status": "pending", "round": 1})  # an escalation meanwhile
    assert not store.update_if_unchanged(
        "approvals/a2", found.version, {"status": "decided"}, {"approval_tokens/t2": {"x": 1}}
    )
    assert store.get("approvals/a2") == {"status": "pending", "round": 1}
    assert store.get("approval_tokens/t2") is None
    again = store.get_versioned("approvals/a2")
    assert again is not None and again.version != found.version
    assert store.update_if_unchanged("approvals/a2", again.version, {"status": "decided"})


def test_a_transaction_write_changes_the_version(store: CheckpointStore) -> None:
    store.set("approvals/a3", {"status": "pending", "round": 0})
    found = store.get_versioned("approvals/a3")
    assert found is not None

    def bump(tx: object) -> None:
        doc = tx.get("approvals/a3")  # type: ignore[attr-defined]
        tx.set("approvals/a3", {**doc, "round": 1})  # type: ignore[attr-defined]

    store.run_transaction(bump)
    assert not store.update_if_unchanged("approvals/a3", found.version, {"status": "decided"})
    assert store.get("approvals/a3") == {"status": "pending", "round": 1}


def test_a_missing_document_takes_nothing(store: CheckpointStore) -> None:
    assert store.get_versioned("approvals/none") is None
    store.set("approvals/gone", {"status": "pending"})
    found = store.get_versioned("approvals/gone")
    assert found is not None

    def delete(tx: object) -> None:
        tx.delete("approvals/gone")  # type: ignore[attr-defined]

    store.run_transaction(delete)
    assert not store.update_if_unchanged(
        "approvals/gone", found.version, {"status": "decided"}, {"approval_tokens/t4": {"x": 1}}
    )
    assert store.get("approvals/gone") is None and store.get("approval_tokens/t4") is None


def test_concurrent_conditional_updates_across_clients_one_winner(
    make_store: StoreFactory,
) -> None:
    make_store().set("approvals/hot", {"status": "pending", "decided_by": None})
    workers = 8
    stores = [make_store() for _ in range(workers)]
    found = [s.get_versioned("approvals/hot") for s in stores]
    barrier = threading.Barrier(workers)
    won: list[int] = []
    lock = threading.Lock()

    def decide(n: int) -> None:
        version = found[n].version  # type: ignore[union-attr]
        barrier.wait()
        fields = {"status": "decided", "decided_by": f"r{n}"}
        if stores[n].update_if_unchanged("approvals/hot", version, fields):
            with lock:
                won.append(n)

    threads = [threading.Thread(target=decide, args=(n,)) for n in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(won) == 1
    assert make_store().get("approvals/hot") == {"status": "decided", "decided_by": f"r{won[0]}"}

"""What only the Firestore adapters promise: encoding, TTL timestamps, contention, projections.

The ports' contracts (``test_checkpoint_store.py``, ``test_vector_index.py``)
hold for every adapter; these cases pin the Firestore adapters' own ways.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from tests.contract.test_checkpoint_store import ODD_DOCUMENT
from tests.contract.test_vector_index import angle

from inboxflow.ports.checkpoint import CheckpointStore


def test_firestore_encoding_round_trips_without_a_server() -> None:
    from inboxflow.adapters.firestore_store import decode_document, encode_document

    encoded = encode_document(ODD_DOCUMENT)
    assert encoded["nested_lists"][0] == {"__list": [1, 2]}
    assert set(encoded["keys"]) == {"~", "~__dunder__", "~__lead", "~~tilde", "a.b", "sp ace"}
    assert encoded["expire_at"].timestamp() == pytest.approx(ODD_DOCUMENT["expire_at"], abs=1e-6)
    assert decode_document(encoded) == ODD_DOCUMENT
    with pytest.raises(ValueError, match="64-bit"):
        encode_document({"n": 2**64})
    with pytest.raises(TypeError, match="keys must be strings"):
        encode_document({"m": {1: "x"}})


@pytest.mark.emulator
def test_firestore_stores_expire_at_as_a_timestamp(firestore_env: Any) -> None:
    """The TTL policy only deletes documents whose ``expire_at`` is a Timestamp."""
    import datetime as dt

    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    store = FirestoreCheckpointStore.from_env(os.environ)
    store.set("traces/ttl", {"expire_at": 1767225600.5, "matrix": [[1]]})
    raw = store.client.document("traces/ttl").get().to_dict()
    assert raw is not None
    assert isinstance(raw["expire_at"], dt.datetime)
    assert raw["expire_at"] == dt.datetime(2026, 1, 1, 0, 0, 0, 500000, tzinfo=dt.UTC)
    assert raw["matrix"] == [{"__list": [1]}]


@pytest.mark.emulator
@pytest.mark.slow
def test_firestore_exhausted_contention_is_retryable(firestore_env: Any) -> None:
    """Two clients both read, then both write: a loser surfaces ``Contention`` (retryable)."""
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
    from inboxflow.errors import Contention, RetryableError

    stores = [
        FirestoreCheckpointStore.from_env(os.environ, max_attempts=1, serialize_transactions=False)
        for _ in range(2)
    ]
    stores[0].set("counters/hot", {"n": 0})
    barrier = threading.Barrier(2)
    outcomes: list[BaseException | None] = []

    def body(tx: Any) -> None:
        n = tx.get("counters/hot")["n"]
        barrier.wait(timeout=30)
        tx.set("counters/hot", {"n": n + 1})

    def run(store: CheckpointStore) -> None:
        try:
            store.run_transaction(body)
            outcomes.append(None)
        except BaseException as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    errors = [exc for exc in outcomes if exc is not None]
    # Production aborts one of the two; the emulator sometimes aborts both.
    assert len(outcomes) == 2 and len(errors) >= 1
    assert all(isinstance(exc, Contention) for exc in errors), errors
    assert issubclass(Contention, RetryableError)
    assert stores[0].get("counters/hot") == {"n": 2 - len(errors)}


@pytest.mark.emulator
def test_firestore_transfers_only_the_asked_fields_and_the_distance(
    firestore_env: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google.cloud.firestore_v1.vector_query import VectorQuery

    from inboxflow.adapters.firestore_vectors import FirestoreVectorIndex

    received: list[dict] = []
    stream = VectorQuery.stream

    def recording(self: VectorQuery, *args: object, **kwargs: object) -> Iterator[object]:
        for snapshot in stream(self, *args, **kwargs):
            received.append(snapshot.to_dict())
            yield snapshot

    monkeypatch.setattr(VectorQuery, "stream", recording)
    index = FirestoreVectorIndex.from_env(os.environ)
    try:
        index.upsert("kb", "a", angle(0), {"title": "a", "text": "body", "a.b": 1})
        index.nearest("kb", angle(0), limit=1)
        assert set(received.pop()) == {"title", "text", "a.b", "embedding", "vector_distance"}
        index.nearest("kb", angle(0), limit=1, fields=["title", "a.b"])
        assert set(received.pop()) == {"title", "a.b", "vector_distance"}
    finally:
        index.close()

"""The erasure record: a hash of the address, never the address; mail from the address received
before its erasure is a replay and starts nothing, mail received after it starts as usual."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.personal.erasure import Eraser, ErasureRecords, address_hash
from inboxflow.routing import RouteDecision
from inboxflow.start import ErasedMailReplayed, start_email_trace
from tests.harness import support
from tests.harness.person import build

PERSON = "sam.rivera@example.org"


def _email(message_id: str, received: datetime):
    return support.email(
        PERSON, "Export question", "How do I export to PDF?", message_id, received_at=received
    )


def test_a_replay_of_erased_mail_starts_nothing_and_a_later_email_starts(tmp_path) -> None:
    runtime = build(tmp_path, SqliteCheckpointStore(tmp_path / "p.db"))
    decision = RouteDecision("support", None, "test", mailbox=support.MAILBOX)
    first = _email("first@example.org", datetime(2027, 1, 14, 9, 0, tzinfo=UTC))
    start_email_trace(runtime, first, decision)
    runtime.bus.drain()
    Eraser(runtime.ports.documents, runtime.ports.vectors, runtime.clock).erase(PERSON, by="dpo")

    (record_id, record), *_ = [(doc_id, doc) for doc_id, doc in runtime.store.list("erasures")]
    assert record_id == address_hash(PERSON) and PERSON not in json.dumps(record)
    assert ErasureRecords(runtime.ports.documents).replayed(
        PERSON.upper(), first.received_at.timestamp()
    )

    with pytest.raises(ErasedMailReplayed):
        start_email_trace(runtime, first, decision)
    assert runtime.store.list("traces") == []

    later = _email("later@example.org", datetime(2027, 2, 2, tzinfo=UTC))
    started = start_email_trace(runtime, later, decision)
    runtime.bus.drain()
    assert runtime.store.get_trace(started.trace_id).status == "done"
    assert not ErasureRecords(runtime.ports.documents).replayed("not an address", 0)

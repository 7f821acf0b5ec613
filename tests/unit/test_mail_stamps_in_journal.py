"""A message an effect writes carries the stamp drawn with the effect journal's ``started``
entry: no ``mail_stamps`` document of its own, the same stamp on a re-run, found again by the
effect's key (reconciliation) and by the stamp (which trace wrote it). A review email's stamp,
drawn with its approval (``about``), stays in ``mail_stamps`` and wins over the journal's."""

from __future__ import annotations

from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.engine.effects import EffectJournal
from inboxflow.mail import TRACE_HEADER
from inboxflow.mail_stamps import stamp_for, stamp_of, stamped, trace_key_of

KEY = "trace-1:4:send_email"


def _send(workspace: StoreWorkspace):
    def perform(key: str) -> dict[str, Any]:
        doc = workspace.send_reply("c@x.example", "Your quote", "Hello", "th-1", key)
        return {"stamp": doc["headers"][TRACE_HEADER]}

    return perform


@pytest.fixture
def world(tmp_path):
    store = SqliteCheckpointStore(tmp_path / "db.sqlite")
    clock = FakeClock()
    yield store, clock, StoreWorkspace(store, clock)
    store.close()


def test_a_sent_message_carries_the_journal_entrys_stamp_and_writes_no_stamp_document(world):
    store, clock, workspace = world
    result = EffectJournal(store, clock).run("trace-1", 4, "send_email", _send(workspace))
    entry = store.get(f"effects/{KEY}")
    assert entry is not None and result["stamp"] == entry["stamp"]
    assert store.list("mail_stamps") == []  # the saved write
    assert stamp_of(store, KEY) == entry["stamp"]  # what reconciliation looks for
    assert trace_key_of(store, entry["stamp"]) == KEY  # which trace wrote the message
    assert stamped(store, entry["stamp"]) is None  # not a review email's stamp


def test_a_crash_after_the_send_finds_the_message_by_the_same_stamp(world):
    store, clock, workspace = world

    def crash(at: str) -> None:
        if at == "after_effect:send_email":
            raise SimulatedCrash(at)

    with pytest.raises(SimulatedCrash):
        EffectJournal(store, clock, crash).run("trace-1", 4, "send_email", _send(workspace))
    (sent,) = workspace.sent()
    entry = store.get(f"effects/{KEY}")
    assert entry is not None and sent["headers"][TRACE_HEADER] == entry["stamp"]
    assert stamp_for(store, KEY) == entry["stamp"]  # a re-run draws nothing new
    found = EffectJournal(store, clock).run(
        "trace-1", 4, "send_email", _send(workspace), reconcile=workspace.find_by_trace_key
    )
    assert found["message_id"] == sent["message_id"] and len(workspace.sent()) == 1


def test_a_review_emails_stamp_stays_in_mail_stamps_and_wins(world):
    store, clock, workspace = world

    def perform(key: str) -> dict[str, Any]:
        drawn = stamp_for(store, key, clock.now(), about={"approval_id": "a-1"})
        return {"drawn": drawn, **_send(workspace)(key)}

    result = EffectJournal(store, clock).run("trace-1", 4, "send_email", perform)
    entry = store.get(f"effects/{KEY}")
    assert entry is not None and result["drawn"] == result["stamp"] != entry["stamp"]
    doc = stamped(store, result["stamp"])
    assert doc is not None and doc["approval_id"] == "a-1"  # a reply finds the approval


def test_a_write_outside_any_effect_still_draws_a_stamp_document(world):
    store, _, workspace = world
    doc = workspace.send_reply("c@x.example", "Hi", "Hello", "th-1", "no-effect-key")
    assert stamp_of(store, "no-effect-key") == doc["headers"][TRACE_HEADER]
    assert len(store.list("mail_stamps")) == 1

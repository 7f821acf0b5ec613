"""A customer's reply and its wait's deadline (or two replies) race for the same waiting step:
the first to decide the wait's approval is the one resume of that step, and the other is never
lost silently (the planner graph and the ``thread_chat`` plug-in, on SQLite and the Firestore
emulator).

The races are played on the in-process bus with nothing drained in between, so every resume
each side would publish is on the bus before either runs. Before the reply took the approval,
both sides published a resume for the step; the runtime ran the first and dropped the second
as a duplicate, and a reply that lost was gone while its claim said ``resumed``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.engine.runtime import Runtime
from inboxflow.ports.checkpoint import CheckpointStore
from tests.harness.planner import (
    DAY,
    CustomerWait,
    build,
    checkpoint,
    state,
)
from tests.harness.thread_chat import STORES, ChatWorld, eml

CUSTOMER = "jordan.rivera@example.com"
VIN = "The VIN is 2HGFC2F56KH512345."
LICENSE = "Driver's license D4821937 (CA), licensed for 12 years."


@pytest.fixture(params=STORES)
def planner(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Runtime]:
    """The planner on SQLite or an empty Firestore emulator."""
    if request.param == "sqlite":
        store: CheckpointStore = SqliteCheckpointStore(tmp_path / "planner.db")
    else:
        request.getfixturevalue("firestore_env")
        from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

        store = FirestoreCheckpointStore.from_env(os.environ)
    yield build(tmp_path, store=store)
    store.close()


def _after_the_claims_decision(
    ingestor: Any, monkeypatch: pytest.MonkeyPatch, then: Callable[[], Any]
) -> None:
    """``then`` runs once, right after ingest decides a claim (before it checks or takes the wait)."""
    real = ingestor.claims.decide

    def decide_then(*args: Any, **kwargs: Any) -> Any:
        claim = real(*args, **kwargs)
        monkeypatch.setattr(ingestor.claims, "decide", real)
        then()
        return claim

    monkeypatch.setattr(ingestor.claims, "decide", decide_then)


@pytest.mark.parametrize("deadline_ran", [False, True], ids=["deadline-on-the-bus", "deadline-ran"])
def test_a_reply_that_the_deadline_beat_to_the_wait_is_queued_and_read(
    planner: Runtime, monkeypatch: pytest.MonkeyPatch, deadline_ran: bool
) -> None:
    """The reminder deadline decides the wait (``no_reply``) after ingest chose to resume it
    with the reply: the reply loses, is recorded as such, and is handled as a reply arriving
    now (queued). The planner reads it either way: the deadline's run of the wait reads the
    queue first (and sends no reminder), or, if it already ran, the reply resumes the new wait."""
    world = CustomerWait(planner)
    reply_id = world.deliver(LICENSE, 1)
    planner.clock.advance(3 * DAY)  # type: ignore[attr-defined]

    def deadline() -> None:
        assert world.approvals.deadlines.on_timeout(world.wait)["action"] == "rejected"  # no_reply
        if deadline_ran:
            planner.bus.drain()  # type: ignore[attr-defined]

    _after_the_claims_decision(world.mailbox.ingestor, monkeypatch, deadline)
    report = world.notify()
    on_the_bus = len(planner.bus)  # type: ignore[arg-type]
    planner.bus.drain()  # type: ignore[attr-defined]

    assert state(planner, world.trace_id)["seen_reply_ids"] == [world.first_id, reply_id]
    moved = checkpoint(planner, world.trace_id)
    assert moved.step > world.checkpoint.step + 1 and moved.pause["kind"] == "agency_review"
    assert world.approval()["decision"] == "no_reply"  # the first decision stands
    # The deadline's run read the queued reply (no reminder), or it had run and reminded,
    # and the reply then resumed the new wait.
    assert len(world.reminders()) == (1 if deadline_ran else 0)
    assert world.runs("wait_customer") == (3 if deadline_ran else 2)

    assert report.resumed == [] and report.queued == [world.trace_id], report.summary()
    claim = world.claim(reply_id)
    assert claim["state"] == "queued" and claim["resume_trace_id"] == world.trace_id
    (failure,) = world.ingest_failures()
    assert reply_id in failure["reason"]
    if not deadline_ran:
        assert on_the_bus == 1  # the deadline's resume only
        assert "answered first: no_reply by deadline" in claim["reason"]
        assert "answered first: no_reply by deadline" in failure["reason"]


def test_a_reply_that_decided_the_wait_first_leaves_its_deadline_nothing_to_do(
    planner: Runtime,
) -> None:
    world = CustomerWait(planner)
    reply_id = world.deliver(LICENSE, 1)
    report = world.notify()
    assert report.resumed == [world.trace_id], report.summary()
    assert len(planner.bus) == 1  # type: ignore[arg-type]  # the reply's resume, not run yet
    decided = world.approval()
    assert decided["status"] == "decided" and decided["decision"] == "reply"
    assert decided["decided_by"] == CUSTOMER
    assert decided["applied_payload"]["email"]["gmail_id"] == reply_id

    planner.clock.advance(3 * DAY)  # type: ignore[attr-defined]
    assert world.approvals.deadlines.on_timeout(world.wait) == {
        "action": "none",
        "reason": "already reply",
    }
    # the trace still waits on the wait (its resume is on its way): the deadline publishes the
    # reply's resume again, rebuilt from the record, and the runtime drops the duplicate
    assert len(planner.bus) == 2  # type: ignore[arg-type]
    planner.bus.drain()  # type: ignore[attr-defined]

    assert world.runs("wait_customer") == 2  # the pause, one resume
    assert world.reminders() == []
    assert state(planner, world.trace_id)["seen_reply_ids"] == [world.first_id, reply_id]
    after = world.approval()
    assert after["decision"] == "reply" and after["timed_out_at"] is None
    assert world.claim(reply_id)["state"] == "resumed"
    assert planner.store.list("failures") == []


def test_two_replies_to_one_wait_resume_it_once_and_the_second_is_read_too(
    planner: Runtime,
) -> None:
    world = CustomerWait(planner)
    first = world.deliver(LICENSE, 1)
    assert world.notify().resumed == [world.trace_id]
    second = world.deliver(VIN, 2)  # the first reply's resume has not run yet
    report = world.notify()
    on_the_bus = len(planner.bus)  # type: ignore[arg-type]
    planner.bus.drain()  # type: ignore[attr-defined]

    assert world.runs("wait_customer") == 2  # the pause, one resume
    seen = state(planner, world.trace_id)["seen_reply_ids"]
    assert seen[0] == world.first_id and sorted(seen[1:]) == sorted([first, second])
    assert world.claim(first)["state"] == "resumed"
    assert report.resumed == [] and report.queued == [world.trace_id], report.summary()
    assert on_the_bus == 1
    claim = world.claim(second)
    assert claim["state"] == "queued" and f"answered first: reply by {CUSTOMER}" in claim["reason"]
    (failure,) = world.ingest_failures()
    assert second in failure["reason"]
    assert world.approval()["applied_payload"]["email"]["gmail_id"] == first


# --- the thread_chat plug-in: a wait that gives up (needs_review) and reads no queue -------------


def _got_runs(chat: ChatWorld, trace_id: str) -> int:
    return [e.step_name for e in chat.store.step_logs(trace_id)].count("got")


def test_a_reply_the_wait_gave_up_on_first_is_refused_and_recorded(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline gives the wait up between ingest's check of the pause and its taking the
    wait's approval: the reply is refused (the trace needs review), saying so."""
    trace_id, thread = chat.waiting_for_customer()
    wait = chat.trace(trace_id).pause["approval_id"]  # type: ignore[index]
    reply, history_id = chat.deliver(eml(2, body="The VIN is 1HGCM82633A004352."), thread)
    real_note = chat.ingestor.claims.note

    def note_after_the_deadline(*args: Any, **kwargs: Any) -> None:
        monkeypatch.setattr(chat.ingestor.claims, "note", real_note)
        chat.clock.advance(25 * 3600)
        assert chat.approvals.deadlines.on_timeout(wait)["action"] == "needs_review"
        real_note(*args, **kwargs)

    monkeypatch.setattr(chat.ingestor.claims, "note", note_after_the_deadline)
    report = chat.notify(history_id)
    assert report.resumed == [] and report.queued == [], report.summary()
    claim = chat.claim(reply)
    assert claim["state"] == "refused" and "timed out first" in claim["reason"]
    assert claim.get("resume_sent") is None
    ingest_failures = [d for _, d in chat.store.list("failures") if d["function"] == "ingest"]
    assert len(ingest_failures) == 1 and reply in ingest_failures[0]["reason"]
    assert len(chat.bus) == 0
    assert chat.trace(trace_id).status == "needs_review"


def test_two_replies_to_a_thread_chat_wait_resume_it_once_and_the_second_is_kept(
    chat: ChatWorld,
) -> None:
    trace_id, thread = chat.waiting_for_customer()
    first, _ = chat.deliver(eml(2, body="The VIN is 1HGCM82633A004352."), thread)
    assert chat.notify().resumed == [trace_id]
    second, _ = chat.deliver(eml(3, body="Sorry, the VIN is 2HGFC2F56KH512345."), thread)
    report = chat.notify()
    assert report.resumed == [] and report.queued == [trace_id], report.summary()
    assert len(chat.bus) == 1
    chat.bus.drain()

    assert _got_runs(chat, trace_id) == 1
    done = chat.trace(trace_id)
    assert done.status == "done" and done.state["reply"]["gmail_id"] == first
    claim = chat.claim(second)
    assert (
        claim["state"] == "queued"
        and "answered first: reply by dana@example.com" in claim["reason"]
    )
    (failure,) = [d for _, d in chat.store.list("failures")]
    assert second in failure["reason"] and failure["function"] == "ingest"
    assert [doc["gmail_id"] for _, doc in chat.store.list("trace_replies")] == [second]

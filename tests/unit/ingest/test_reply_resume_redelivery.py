"""A customer's reply resumes the trace waiting for it once, even when the ingest run dies
right after publishing the resume and before recording the claim (SQLite and the Firestore
emulator; the planner graph's customer wait on SQLite).

The redelivered notification (Pub/Sub's, or history sync meeting the message again) takes the
claim over and must find that this very reply's resume was already sent: the claim ends
``resumed``, with no failure recorded and nothing queued. A resume that never went out and
whose wait ended meanwhile is still refused and recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.engine.waits import customer_reply_resume
from inboxflow.ingest.claims import Claims, claim_path
from inboxflow.mail import Email
from tests.harness.planner import (
    DAY,
    MAILBOX,
    CustomerWait,
    build,
    checkpoint,
    fire_due_deadlines,
    pending,
    state,
)
from tests.harness.thread_chat import ChatWorld, eml

LEASE_S = Claims(store=None).lease_s  # type: ignore[arg-type]
ANSWER = "Driver's license D4821937 (CA), licensed for 12 years."


def _dies_after(runtime: Any, monkeypatch: pytest.MonkeyPatch, publish: bool = True) -> list[str]:
    """The next ``runtime.resume`` call kills the ingest run: after publishing (``publish``) or
    before. Returns the trace ids it was called for."""
    real_resume = runtime.resume
    calls: list[str] = []

    def resume(trace_id: str, decision: Any) -> Any:
        calls.append(trace_id)
        if len(calls) > 1:
            return real_resume(trace_id, decision)
        if publish:
            real_resume(trace_id, decision)
            raise SimulatedCrash("ingest died after publishing the resume")
        raise SimulatedCrash("ingest died before publishing the resume")

    monkeypatch.setattr(runtime, "resume", resume)
    return calls


def _queued(store: Any, trace_id: str) -> list[Any]:
    return list(store.list("trace_replies", where=[("trace_id", "==", trace_id)]))


def _resumed_runs(store: Any, trace_id: str, node: str) -> int:
    return [log.step_name for log in store.step_logs(trace_id)].count(node)


def _other_reply(thread: str) -> Email:
    """Another reply in the thread, resumed directly (not through ingest)."""
    return Email.model_validate(
        {
            "message_id": "other@example.com",
            "thread_id": thread,
            "mailbox": "desk@agency.test",
            "sender": {"address": "dana@example.com"},
            "subject": "Re: Car insurance quote",
            "body_text": "VIN 1HGCM82633A004352",
            "received_at": "2027-01-14T10:00:00Z",
            "gmail_id": "other",
        }
    )


@pytest.mark.parametrize("resume_ran_first", [True, False], ids=["ran", "not-yet-run"])
def test_a_redelivery_after_dying_between_the_resume_and_the_claim_finishes_it_resumed(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch, resume_ran_first: bool
) -> None:
    trace_id, thread = chat.waiting_for_customer()
    reply, history_id = chat.deliver(eml(2, body="The VIN is 1HGCM82633A004352."), thread)
    calls = _dies_after(chat.runtime, monkeypatch)
    with pytest.raises(SimulatedCrash):
        chat.notify(history_id)
    assert chat.claim(reply)["state"] == "claimed" and chat.claim(reply)["action"] == "resume"
    if resume_ran_first:
        chat.bus.drain()  # the published resume runs before Pub/Sub redelivers the notification
        assert chat.trace(trace_id).status == "done"

    chat.clock.advance(LEASE_S + 1)  # the dead run's lease on the claim runs out
    report = chat.notify(history_id)
    chat.bus.drain()
    assert report.resumed == [trace_id] and report.repaired == 1, report.summary()
    assert report.queued == [] and report.started == []
    assert chat.claim(reply)["state"] == "resumed" and chat.claim(reply)["trace_id"] == trace_id
    assert chat.store.list("failures") == []
    assert _queued(chat.store, trace_id) == []
    assert _resumed_runs(chat.store, trace_id, "got") == 1
    done = chat.trace(trace_id)
    assert done.status == "done" and done.state["reply"]["gmail_id"] == reply
    assert len(calls) == (1 if resume_ran_first else 2)
    assert chat.notify(history_id).outcome == "stale"


def test_a_resume_that_never_went_out_for_a_wait_that_ended_is_still_refused_and_recorded(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id, thread = chat.waiting_for_customer()
    reply, history_id = chat.deliver(eml(2, body="The VIN is 1HGCM82633A004352."), thread)

    def dies(*args: Any, **kwargs: Any) -> None:
        raise SimulatedCrash("ingest died before sending the resume")

    with monkeypatch.context() as patch:
        patch.setattr(chat.ingestor.claims, "note", dies)
        with pytest.raises(SimulatedCrash):
            chat.notify(history_id)
    other = _other_reply(thread)  # meanwhile another resume answers the wait
    step = chat.trace(trace_id).step
    chat.runtime.resume(trace_id, customer_reply_resume(other, trace_id, step))
    chat.bus.drain()
    assert chat.trace(trace_id).status == "done"

    chat.clock.advance(LEASE_S + 1)
    report = chat.notify(history_id)
    assert report.resumed == [] and report.repaired == 1
    claim = chat.claim(reply)
    assert claim["state"] == "refused" and "not paused" in claim["reason"]
    (failure,) = [doc for _, doc in chat.store.list("failures")]
    assert reply in failure["reason"] and failure["function"] == "ingest"
    assert chat.trace(trace_id).state["reply"]["gmail_id"] == "other"


def test_a_resume_refused_as_it_was_published_is_not_taken_for_sent_after_a_crash(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait ends between ingest's check and the publish (``runtime.resume`` refuses, nothing
    goes out), then the run dies recording that: the redelivery still refuses and records it."""
    trace_id, thread = chat.waiting_for_customer()
    reply, history_id = chat.deliver(eml(2, body="The VIN is 1HGCM82633A004352."), thread)
    real_resume = chat.runtime.resume
    other = _other_reply(thread)

    def resume_after_the_wait_ended(trace: str, decision: Any) -> Any:
        real_resume(trace, customer_reply_resume(other, trace, chat.trace(trace).step))
        chat.bus.drain()
        return real_resume(trace, decision)

    def dies(*args: Any, **kwargs: Any) -> None:
        raise SimulatedCrash("ingest died recording the refusal")

    with monkeypatch.context() as patch:
        patch.setattr(chat.runtime, "resume", resume_after_the_wait_ended)
        patch.setattr(chat.ingestor.failures, "record", dies)
        with pytest.raises(SimulatedCrash):
            chat.notify(history_id)
    assert chat.trace(trace_id).state["reply"]["gmail_id"] == "other"
    assert chat.claim(reply).get("resume_sent") is None

    chat.clock.advance(LEASE_S + 1)
    report = chat.notify(history_id)
    assert report.resumed == [] and chat.claim(reply)["state"] == "refused"
    (failure,) = [doc for _, doc in chat.store.list("failures")]
    assert reply in failure["reason"]


def test_a_sent_resume_whose_deadline_fires_before_it_runs_is_only_republished(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reply decided the wait's approval before its resume went out, so the deadline that
    fires before the resume runs finds it decided: it gives nothing up and only republishes the
    reply's resume (the run died before noting it published). The reply resumes the trace once.

    (Before the reply took the approval, this deadline gave the wait up and the reply was
    refused: the reply that came first lost to a later deadline.)"""
    trace_id, thread = chat.waiting_for_customer()
    wait = chat.trace(trace_id).pause["approval_id"]  # type: ignore[index]
    reply, history_id = chat.deliver(eml(2, body="The VIN is 1HGCM82633A004352."), thread)
    _dies_after(chat.runtime, monkeypatch)
    with pytest.raises(SimulatedCrash):
        chat.notify(history_id)
    chat.clock.advance(25 * 3600)  # the wait's deadline (needs_review) fires before the resume runs
    assert chat.approvals.deadlines.on_timeout(wait) == {
        "action": "none",
        "reason": "already reply",
    }
    chat.bus.drain()  # the resume and its republished copy: one runs, the other is a duplicate
    done = chat.trace(trace_id)
    assert done.status == "done" and done.state["reply"]["gmail_id"] == reply
    assert _resumed_runs(chat.store, trace_id, "got") == 1

    report = chat.notify(history_id)
    assert report.resumed == [trace_id] and report.repaired == 1
    assert chat.claim(reply)["state"] == "resumed"
    assert chat.store.list("failures") == []


def test_the_planner_customer_wait_is_resumed_once_when_ingest_dies_after_the_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wait = CustomerWait(build(tmp_path))
    runtime, mailbox, trace_id, first_id = wait.runtime, wait.mailbox, wait.trace_id, wait.first_id
    waiting = wait.checkpoint

    reply_id = wait.deliver(ANSWER, 1)
    _dies_after(runtime, monkeypatch)
    with pytest.raises(SimulatedCrash):
        mailbox.ingest()
    runtime.bus.drain()  # the resume runs: the planner reads the reply and plans on
    moved = checkpoint(runtime, trace_id)
    assert moved.step > waiting.step and moved.pause["kind"] == "agency_review"

    runtime.clock.advance(LEASE_S + 1)
    report = mailbox.ingest()
    assert report.resumed == [trace_id] and report.queued == [], report.summary()
    claim = runtime.store.get(claim_path(MAILBOX, reply_id))
    assert claim is not None and claim["state"] == "resumed"
    assert runtime.store.list("failures") == []
    assert _queued(runtime.store, trace_id) == []
    assert state(runtime, trace_id)["seen_reply_ids"] == [first_id, reply_id]
    assert _resumed_runs(runtime.store, trace_id, "wait_customer") == 2  # the pause, one resume
    assert pending(runtime, trace_id).approval_id == moved.pause["approval_id"]


def test_a_reply_that_decided_the_wait_is_resumed_by_its_deadline_when_the_run_died(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run died after deciding the wait with the reply and noting the resume, before the
    resume went out. The wait's first deadline finds the wait decided: no reminder, it
    republishes the reply's resume. The redelivery finds the reply ran: ``resumed``.

    (Before the reply took the approval, that deadline sent the reminder and the reply was
    queued as a later one: which of the two had run was not on record.)"""
    wait = CustomerWait(build(tmp_path))
    runtime, mailbox, trace_id, first_id = wait.runtime, wait.mailbox, wait.trace_id, wait.first_id
    waiting = wait.checkpoint
    reply_id = wait.deliver(ANSWER, 1)
    _dies_after(runtime, monkeypatch, publish=False)
    with pytest.raises(SimulatedCrash):
        mailbox.ingest()
    runtime.clock.advance(3 * DAY)  # type: ignore[attr-defined]
    assert fire_due_deadlines(runtime) >= 1
    moved = checkpoint(runtime, trace_id)
    assert moved.step > waiting.step and moved.pause["kind"] == "agency_review"
    assert [m["ref"] for m in moved.state["messages"] if m["ref"] == "reminder"] == []

    report = mailbox.ingest()
    assert report.resumed == [trace_id] and report.queued == [], report.summary()
    claim = runtime.store.get(claim_path(MAILBOX, reply_id))
    assert claim is not None and claim["state"] == "resumed"
    assert runtime.store.list("failures") == []
    assert _queued(runtime.store, trace_id) == []
    assert state(runtime, trace_id)["seen_reply_ids"] == [first_id, reply_id]
    assert _resumed_runs(runtime.store, trace_id, "wait_customer") == 2  # the pause, one resume

"""The planner with Gmail ingestion: the agency decides by replying to the review email, and a
customer's reply that arrives while the trace waits for the agency is queued, not a new trace."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from inboxflow.mail import Email
from tests.harness.planner import (
    AGENCY,
    MAILBOX,
    VALID_VIN,
    Mailbox,
    build,
    checkpoint,
    pending,
    reply_email,
    sample,
    state,
)


def _agency_reply(first: Email, in_reply_to: str, body: str, n: int, sender: str = AGENCY) -> Email:
    return Email.model_validate(
        {
            "message_id": f"agency-{n}@brightlane.io",
            "thread_id": f"review-{n}",
            "mailbox": MAILBOX,
            "sender": {"address": sender, "name": "Agent"},
            "subject": f"Re: Review the planned add_vehicle for: {first.subject}",
            "body_text": body,
            "received_at": datetime(2027, 1, 18, 11, 0, tzinfo=UTC),
            "in_reply_to": in_reply_to,
        }
    )


def test_the_agency_rejects_by_replying_to_the_review_email(tmp_path):
    runtime = build(tmp_path)
    mailbox = Mailbox(runtime)
    email = sample("42")
    _, report = mailbox.receive(email)
    (trace_id,) = report.started
    review = pending(runtime, trace_id)
    assert review.payload["tool"] == "add_vehicle"

    answer = _agency_reply(email, mailbox.review_message_id(review), "reject: VIN is incorrect", 1)
    _, report = mailbox.receive(answer)
    assert report.review_replies == [review.approval_id] and report.started == []
    decided = runtime.ports.approvals.get(review.approval_id)
    assert (decided.decision, decided.decided_by, decided.comment) == (
        "reject",
        AGENCY,
        "VIN is incorrect",
    )
    plan = pending(runtime, trace_id)
    assert plan.payload["tool"] == "ask_customer"
    assert json.loads(plan.payload["inputs"])["fields"] == ["vin"]


def test_someone_elses_reply_to_the_review_email_changes_nothing(tmp_path):
    runtime = build(tmp_path)
    mailbox = Mailbox(runtime)
    email = sample("42")
    _, report = mailbox.receive(email)
    (trace_id,) = report.started
    review = pending(runtime, trace_id)
    forged = _agency_reply(
        email, mailbox.review_message_id(review), "approve", 2, sender="mallory@example.com"
    )
    mailbox.receive(forged)
    assert pending(runtime, trace_id).approval_id == review.approval_id
    assert state(runtime, trace_id)["quote_session"]["vehicles"] == 0


def test_a_customer_reply_during_a_review_is_queued_and_read_at_the_next_step(tmp_path):
    runtime = build(tmp_path)
    mailbox = Mailbox(runtime)
    email = sample("41")
    first_id, report = mailbox.receive(email)
    (trace_id,) = report.started
    assert pending(runtime, trace_id).payload["tool"] == "ask_customer"

    early = reply_email(
        email,
        f"Also: license D4821937 (CA), licensed for 12 years. VIN {VALID_VIN}",
        "unused",
        message_id="early-1@example.com",
    )
    reply_id, report = mailbox.receive(early, thread_id=first_id)
    assert report.queued == [trace_id] and report.started == [] and report.resumed == []
    assert state(runtime, trace_id)["seen_reply_ids"] == [first_id]  # not read yet

    runtime.ports.approvals.decisions.decide_as(
        pending(runtime, trace_id).approval_id, AGENCY, "approve"
    )
    runtime.bus.drain()
    after = state(runtime, trace_id)
    assert after["seen_reply_ids"] == [first_id, reply_id]
    assert after["customer_info"]["vin"] == VALID_VIN
    assert pending(runtime, trace_id).payload["tool"] == "add_vehicle"
    assert checkpoint(runtime, trace_id).graph == "planner"
    assert len(runtime.store.list("traces")) == 1

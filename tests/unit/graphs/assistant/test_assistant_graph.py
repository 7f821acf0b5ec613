"""The assistant graph on the embedded default with the offline model: triage's three outcomes,
the notify pause, the reviewed tool loop (accept / edit / ignore / respond), mark_as_read."""

from __future__ import annotations

import pytest

from tests.harness.agent import build
from tests.harness.assistant import OWNER, decide, pending, sample, sent, start, state


@pytest.fixture
def runtime(tmp_path):
    return build(tmp_path)


def test_a_newsletter_is_ignored_without_asking(runtime):
    trace_id = start(runtime, sample("31"))
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done"
    assert (checkpoint.state["classification"], checkpoint.state["status"]) == ("ignore", "ignored")
    assert runtime.ports.approvals.pending() == []
    assert [log.step_name for log in runtime.store.step_logs(trace_id)] == [
        "__start__",
        "triage_router",
    ]


def test_a_notify_asks_the_owner_and_ignore_ends_it(runtime):
    trace_id = start(runtime, sample("32"))
    assert state(runtime, trace_id)["classification"] == "notify"
    approval = pending(runtime, trace_id)
    assert approval.kind == "notify" and approval.reviewers == [OWNER]
    assert approval.payload["from"] == "billing@acme-hosting.example"
    assert approval.mailbox == OWNER  # the reviewer's inbox filters by it
    decide(runtime, trace_id, "ignore")
    checkpoint = runtime.store.get_trace(trace_id)
    assert (checkpoint.status, checkpoint.state["status"]) == ("done", "ignored")
    assert checkpoint.state["memory_updates"] == ["triage_preferences@1"]


def test_notify_respond_with_an_instruction_becomes_the_agents_first_message(runtime):
    trace_id = start(runtime, sample("32"))
    decide(runtime, trace_id, "respond", comment="Ask them to switch us to yearly billing.")
    approval = pending(runtime, trace_id)
    assert approval.kind == "tool_review" and approval.payload["tool"] == "write_email"
    assert "Ask them to switch us to yearly billing." in approval.payload["content"]
    assert "Owner's instruction: Ask them" in state(runtime, trace_id)["messages"][0]["content"]


def test_a_request_is_answered_after_review_and_marked_read_once(runtime):
    email = sample("34")
    trace_id = start(runtime, email)
    approval = pending(runtime, trace_id)
    assert approval.kind == "tool_review" and approval.mailbox == OWNER
    assert approval.payload["to"] == "sam.ortiz@brightlane.io"
    assert approval.payload["content"].startswith("Hi Sam,")
    assert approval.payload["content"].endswith("Best regards")
    decide(runtime, trace_id, "accept")
    checkpoint = runtime.store.get_trace(trace_id)
    assert (checkpoint.status, checkpoint.state["status"]) == ("done", "completed"), (
        checkpoint.error
    )
    (message,) = sent(runtime, trace_id)
    assert message["subject"] == "Re: Slides for Thursday"
    assert runtime.ports.workspace.is_read(email.message_id)
    assert checkpoint.state["marked_read"]["found"] is True
    names = [log.step_name for log in runtime.store.step_logs(trace_id)]
    assert names == [
        "__start__",
        "triage_router",
        "llm_call",
        "tool_review",  # pauses
        "tool_review",  # resumed: sends
        "llm_call",
        "tool_review",  # Done
        "mark_as_read",
    ]


def test_a_meeting_request_checks_the_calendar_then_schedules_after_review(runtime):
    trace_id = start(runtime, sample("33"))
    approval = pending(runtime, trace_id)
    assert approval.payload["tool"] == "schedule_meeting"
    assert approval.payload["attendees"] == "dana.lee@partnerco.example"
    assert (approval.payload["start_time"], approval.payload["duration_minutes"]) == ("10:00", "30")
    log = state(runtime, trace_id)["tool_log"]
    assert [e["tool"] for e in log] == ["check_calendar_availability"]
    decide(runtime, trace_id, "accept")
    events = [doc for _, doc in runtime.store.list("calendar_events")]
    assert len(events) == 1 and events[0]["attendees"] == ["dana.lee@partnerco.example"]
    approval = pending(runtime, trace_id)
    assert approval.payload["tool"] == "write_email"
    assert "I have sent you an invitation for" in approval.payload["content"]
    decide(runtime, trace_id, "accept")
    assert state(runtime, trace_id)["status"] == "completed"
    assert len(sent(runtime, trace_id)) == 1


def test_ignoring_a_drafted_reply_ends_the_run_and_sends_nothing(runtime):
    trace_id = start(runtime, sample("34"))
    decide(runtime, trace_id, "ignore")
    checkpoint = runtime.store.get_trace(trace_id)
    assert (checkpoint.status, checkpoint.state["status"]) == ("done", "stopped")
    assert sent(runtime, trace_id) == [] and checkpoint.state["marked_read"] is None
    assert checkpoint.state["memory_updates"] == ["triage_preferences@1"]


def test_respond_sends_the_feedback_back_and_the_agent_tries_again(runtime):
    trace_id = start(runtime, sample("34"))
    decide(runtime, trace_id, "respond", comment="Say they will be ready Wednesday.")
    approval = pending(runtime, trace_id)
    assert "Say they will be ready Wednesday." in approval.payload["content"]
    tool_messages = [m for m in state(runtime, trace_id)["messages"] if m["role"] == "tool"]
    assert "Say they will be ready Wednesday." in tool_messages[0]["content"]
    assert sent(runtime, trace_id) == []


def test_an_edit_is_what_gets_sent(runtime):
    trace_id = start(runtime, sample("34"))
    draft = pending(runtime, trace_id).payload["content"]
    edited = draft.replace("Best regards", "Cheers,\nAlex")
    decide(runtime, trace_id, "edit", edit={"content": edited, "subject": "Re: slides"})
    (message,) = sent(runtime, trace_id)
    assert message["subject"] == "Re: slides"
    assert message["body"].rstrip().endswith("Cheers,\nAlex")

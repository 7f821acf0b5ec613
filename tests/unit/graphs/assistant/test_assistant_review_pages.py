"""The assistant's pauses through the approval function: the owner's review link for each
kind (notify, tool_review) shows the declared choices and fields, and deciding resumes the trace."""

from __future__ import annotations

import re

from inboxflow.routing import RouteDecision
from inboxflow.start import start_email_trace
from tests.harness.approval import Harness
from tests.harness.assistant import OWNER, sample


def test_the_owner_decides_notify_then_tool_review_from_the_links(tmp_path):
    h = Harness(tmp_path)
    email = sample("32")
    decision = RouteDecision("assistant", None, "test", mailbox=email.mailbox)
    trace_id = start_email_trace(h.runtime, email, decision).trace_id
    h.drain()

    (link,) = h.links(h.approval_of(trace_id).approval_id)
    assert link.to == OWNER
    page = h.client.get(link.path).get_data(as_text=True)
    buttons = re.findall(r'name="decision" value="(\w+)"[^>]*>([^<]+)</button>', page)
    assert buttons == [("respond", "Respond"), ("ignore", "Ignore")]
    assert "Instruction for the assistant (optional)" in page
    assert "Your December invoice" in page and "240.00 EUR, paid by card" in page  # the email
    assert "triage: information the owner may want to see" in page  # why the owner is asked
    response = h.client.post(
        f"/a/{link.approval_id}", data=h.form(link, "respond", comment="Ask for yearly billing.")
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    h.drain()

    review = h.approval_of(trace_id)
    assert review.kind == "tool_review"
    (link,) = h.links(review.approval_id)
    page = h.client.get(link.path).get_data(as_text=True)
    assert (
        "Review the assistant&#39;s write_email" in page
        or "Review the assistant's write_email" in page
    )
    buttons = [
        v for v, _ in re.findall(r'name="decision" value="(\w+)"[^>]*>([^<]+)</button>', page)
    ]
    assert buttons == ["accept", "edit", "ignore", "respond"]
    assert 'name="content"' in page and 'name="subject"' in page and 'name="to"' in page
    assert 'name="attendees"' not in page  # only the fields of the tool under review
    edited = "Hi Acme,\n\nPlease move us to yearly billing.\n\nThanks,\nAlex"
    response = h.client.post(f"/a/{link.approval_id}", data=h.form(link, "edit", content=edited))
    assert response.status_code == 200, response.get_data(as_text=True)
    h.drain()
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint.state["status"] == "completed", checkpoint.error
    (entry,) = [e for e in checkpoint.state["tool_log"] if e["tool"] == "write_email"]
    assert (entry["decision"], entry["arguments"]["content"]) == ("edit", edited)


QUESTION = "Hi Alex,\n\nWhich budget code should we use for the offsite dinner?\n\nSam"


def _asked(h: Harness, message_id: str) -> str:
    email = sample("34", body_text=QUESTION, message_id=message_id, thread_id=message_id)
    decision = RouteDecision("assistant", None, "test", mailbox=email.mailbox)
    trace_id = start_email_trace(h.runtime, email, decision).trace_id
    h.drain()
    return trace_id


def _reply_after_answer(h: Harness, trace_id: str) -> dict:
    review = h.approval_of(trace_id)
    assert review.payload["tool"] == "write_email"
    return review.payload


def test_the_owner_answers_a_question_in_its_answer_field(tmp_path):
    h = Harness(tmp_path)
    trace_id = _asked(h, "<budget-1@test>")
    approval = h.approval_of(trace_id)
    assert approval.payload == {
        "tool": "Question",
        "question": 'Sam asks: "Which budget code should we use for the offsite dinner?" '
        "What should I answer?",
        "answer": "",
    }
    (link,) = h.links(approval.approval_id)
    page = h.client.get(link.path).get_data(as_text=True)
    assert re.search(r'<textarea[^>]*name="answer"', page)  # the declared text field
    assert 'name="content"' not in page  # the question is shown, not edited
    assert "Which budget code should we use" in page
    buttons = re.findall(r'name="decision" value="(\w+)"[^>]*>([^<]+)</button>', page)
    assert ("edit", "Send my answer") in buttons
    response = h.client.post(
        f"/a/{link.approval_id}", data=h.form(link, "edit", answer="Use code OFF-2027.")
    )
    assert response.status_code == 200 and "Answered" in response.get_data(as_text=True)
    h.drain()
    checkpoint = h.store.get_trace(trace_id)
    (entry,) = [e for e in checkpoint.state["tool_log"] if e["tool"] == "Question"]
    assert (entry["decision"], entry["result"]) == ("edit", {"answer": "Use code OFF-2027."})
    tool_message = next(m for m in checkpoint.state["messages"] if m.get("name") == "Question")
    assert '"answer": "Use code OFF-2027."' in tool_message["content"]  # what the LLM is told
    assert "Use code OFF-2027." in _reply_after_answer(h, trace_id)["content"]


def test_the_json_api_answers_a_question(tmp_path):
    h = Harness(tmp_path)
    trace_id = _asked(h, "<budget-2@test>")
    (link,) = h.links(h.approval_of(trace_id).approval_id)
    auth = {"Authorization": f"Bearer {link.token}"}
    doc = h.client.get(f"/api/approvals/{link.approval_id}", headers=auth).get_json()
    assert {"name": "answer", "label": "Your answer", "kind": "text", "max_chars": 4000} in doc[
        "editable"
    ]
    assert {o["value"]: o["label"] for o in doc["options"]}["edit"] == "Send my answer"
    url = f"/api/approvals/{link.approval_id}/decision"
    response = h.client.post(
        url, json={"decision": "edit", "edit": {"answer": "Code OFF-9."}}, headers=auth
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    h.drain()
    assert "Code OFF-9." in _reply_after_answer(h, trace_id)["content"]

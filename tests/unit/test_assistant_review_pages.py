"""The assistant's pauses through the approval function: the owner's review link for each
kind (notify, tool_review) shows the declared choices and fields, and deciding resumes the trace."""

from __future__ import annotations

import re

from inboxflow.routing import RouteDecision
from inboxflow.start import start_email_trace
from tests.approval_harness import Harness
from tests.assistant_harness import OWNER, sample


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

"""Tickets reopen on a reply in their thread (issue 30, obs. 4), and a stranger in a customer's
thread is not the customer."""

from __future__ import annotations

import pytest

from inboxflow.graphs.support.matching import reply_ticket
from inboxflow.graphs.support.tickets import Reopening, TicketStore
from tests.harness.support import build, email, run, tickets

QUESTION = "How do I export a dashboard to PDF?"


@pytest.fixture
def runtime(tmp_path):
    runtime = build(tmp_path)
    yield runtime
    runtime.store.close()


def _answered(runtime) -> dict:
    state = run(runtime, email("sam.okafor@example.org", "PDF export", QUESTION, "<q-1@x>"))
    assert state["act"]["status"] == "drafted"  # answered: the ticket is completed
    [ticket] = tickets(runtime, "cus_free_sam")
    assert ticket.status == "completed"
    return state


def test_a_reply_in_the_thread_of_an_answered_ticket_reopens_it(runtime):
    first = _answered(runtime)
    reply = email(
        "sam.okafor@example.org",
        "Re: PDF export",
        "The Share menu has no Export entry for me, so that did not help.",
        "<q-2@x>",
        thread_id="<q-1@x>",
        headers={"in-reply-to": "<q-1@x>", "references": "<q-1@x>"},
    )
    second = run(runtime, reply)
    assert second["ticket"]["how"] == "reopened"
    assert second["ticket"]["ticket_id"] == first["ticket"]["ticket_id"]
    [ticket] = tickets(runtime, "cus_free_sam")
    [reopening] = ticket.reopenings
    assert reopening.trace_id == second["trace_id"] and reopening.message_id == "<q-2@x>"
    assert reopening.previous_outcome == "auto_respond" and "thread" in reopening.reason
    assert [m.direction for m in ticket.messages] == ["in", "out", "in"]
    assert second["status"] == "waiting"  # the first answer did not do: a person answers now
    assert ticket.traces == [first["trace_id"], second["trace_id"]]


def test_references_lead_to_the_ticket_when_the_thread_id_differs(runtime):
    first = _answered(runtime)
    reply = email(
        "sam.okafor@example.org",
        "Re: PDF export",
        "Still no Export entry in the Share menu.",
        "<q-3@x>",
        thread_id="gmail-thread-elsewhere",
        headers={"references": "<unrelated@y> <q-1@x>"},
    )
    second = run(runtime, reply)
    assert second["ticket"]["how"] == "reopened"
    assert second["ticket"]["ticket_id"] == first["ticket"]["ticket_id"]
    [ticket] = tickets(runtime, "cus_free_sam")
    assert "References" in ticket.reopenings[0].reason


def test_a_stranger_in_a_customers_thread_gets_their_own_ticket_and_no_reply(runtime):
    body = "Our invoice for May shows the wrong company address. Can you correct it?"
    first = run(runtime, email("ops@brightpath.example", "Invoice", body, "<inv-1@bp>"))
    stranger = email(
        "bp.finance@freemail.example",
        "Re: Invoice",
        "I do Brightpath's books now. Please send me the corrected invoice?",
        "<inv-2@fm>",
        thread_id="<inv-1@bp>",
        headers={"in-reply-to": "<inv-1@bp>", "references": "<inv-1@bp>"},
    )
    second = run(runtime, stranger)
    assert second["customer_known"] is False and second["ticket"]["how"] == "new"
    assert second["ticket"]["ticket_id"] != first["ticket"]["ticket_id"]
    assert second["sender"]["thread_of"] == first["tag"]
    drafts = runtime.ports.workspace.drafts() + runtime.ports.workspace.sent()
    assert all(d["to"] != "bp.finance@freemail.example" for d in drafts)
    [brightpath] = tickets(runtime, "cus_pro_brightpath")
    assert all(m.message_id != "<inv-2@fm>" for m in brightpath.messages)


def test_reopening_is_recorded_once_per_trace_and_only_on_a_completed_ticket(tmp_path):
    runtime = build(tmp_path)
    store = TicketStore(runtime.store)
    ticket = store.open("cus_free_sam", "PDF", "t-1")
    reopening = Reopening(at="2027-01-15T08:40:00+00:00", reason="r", trace_id="tr-2")
    assert store.reopen(ticket, reopening) == ticket  # an active ticket stays as it is
    done = store.complete(ticket, "auto_respond")
    again = store.reopen(store.reopen(done, reopening), reopening)
    assert again.status == "active" and again.outcome is None and len(again.reopenings) == 1
    assert store.get("cus_free_sam", ticket.ticket_id) == again
    found = reply_ticket(
        email("sam.okafor@example.org", "Re", "x", "m", thread_id="t-1"), "cus_free_sam", store
    )
    assert found.own == again and found.others == []
    runtime.store.close()

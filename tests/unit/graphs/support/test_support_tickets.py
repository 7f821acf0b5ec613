"""Tickets in the store, the matcher, and language detection of the support graph."""

from __future__ import annotations

import itertools
import json

import pytest

from inboxflow.adapters.embedded_crm import SAMPLE_CUSTOMERS, EmbeddedCRM
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.graphs.language import detect_language
from inboxflow.graphs.support.matching import continued_ticket, matcher_inputs
from inboxflow.graphs.support.offline import match_offline
from inboxflow.graphs.support.tasks import TRANSLATE, TicketMatch
from inboxflow.graphs.support.tickets import (
    TICKET_ID,
    Ticket,
    TicketMessage,
    TicketStore,
    ticket_path,
)


@pytest.fixture
def store(tmp_path):
    store = SqliteCheckpointStore(tmp_path / "tickets.db")
    yield store
    store.close()


def test_ticket_ids_are_tkt_and_8_digits_at_the_customer_path(store):
    ticket = TicketStore(store).open("cus_a", "Help", "thread-1")
    assert TICKET_ID.match(ticket.ticket_id)
    assert store.get(f"tickets/cus_a:{ticket.ticket_id}")["status"] == "active"
    assert ticket.key == f"cus_a:{ticket.ticket_id}"


def test_a_taken_id_is_drawn_again_never_overwritten(store):
    draws = itertools.chain([42, 42, 42], itertools.count(7))
    tickets = TicketStore(store, draw=lambda n: next(draws))
    first = tickets.open("cus_a", "First", "t1")
    second = tickets.open("cus_a", "Second", "t2")
    assert first.ticket_id == "TKT-00000042" and second.ticket_id == "TKT-00000007"
    assert tickets.get("cus_a", "TKT-00000042").subject == "First"


def test_a_random_source_that_only_repeats_is_an_error(store):
    tickets = TicketStore(store, draw=lambda n: 5)
    tickets.open("cus_a", "First", "t1")
    with pytest.raises(RuntimeError, match="no free ticket id"):
        tickets.open("cus_a", "Second", "t2")


def test_malformed_ticket_ids_are_refused():
    with pytest.raises(ValueError, match="TKT- followed by 8 digits"):
        ticket_path("cus_a", "TKT-123")


def test_completing_keeps_the_conversation_and_drops_the_working_state(store):
    tickets = TicketStore(store)
    ticket = tickets.open("cus_a", "Help", "t1")
    ticket.messages.append(TicketMessage(direction="in", text="hi", at="2027-01-01"))
    ticket.working["queue"] = "billing"
    tickets.save(ticket)
    done = tickets.complete(ticket, "auto_respond")
    stored = tickets.get("cus_a", ticket.ticket_id)
    assert stored == done
    assert (stored.status, stored.outcome, stored.working) == ("completed", "auto_respond", {})
    assert [m.text for m in stored.messages] == ["hi"]
    assert tickets.list("cus_a", "active") == [] and tickets.list(status="completed") == [stored]


def test_the_embedded_crm_has_customers_on_each_plan():
    assert {c.plan for c in SAMPLE_CUSTOMERS} == {"free", "pro", "enterprise"}
    crm = EmbeddedCRM()
    assert crm.find_by_email(" IT-Admin@Northwind.example ").plan == "enterprise"
    assert crm.find_by_email("stranger@example.com") is None


def _ticket(ticket_id: str, subject: str, text: str, thread: str = "t") -> Ticket:
    return Ticket(
        ticket_id=ticket_id,
        customer_id="cus_a",
        subject=subject,
        thread_ids=[thread],
        messages=[TicketMessage(direction="in", text=text, at="2027-01-01")],
    )


EXPORTS = _ticket("TKT-00000001", "Scheduled exports failing", "The weekly export fails to sync")
INVOICE = _ticket("TKT-00000002", "Invoice question", "Our invoice shows the wrong VAT number")


@pytest.mark.parametrize(
    ("subject", "text", "expected", "confidence"),
    [
        ("Exports", "The scheduled weekly export still fails to sync.", EXPORTS, "medium"),
        ("Question", "About TKT-00000002: any news?", INVOICE, "high"),
        ("New question", "How do I add a teammate?", None, "low"),
    ],
)
def test_the_offline_matcher(subject, text, expected, confidence):
    active = [EXPORTS, INVOICE]
    match = match_offline(matcher_inputs(subject, text, active))
    assert match.confidence == confidence
    assert continued_ticket(match, active) == expected


def test_a_low_match_never_continues_a_ticket():
    match = TicketMatch(ticket_id=EXPORTS.ticket_id, confidence="low", reason="maybe")
    assert continued_ticket(match, [EXPORTS]) is None
    unknown = TicketMatch(ticket_id="TKT-99999999", confidence="high", reason="made up")
    assert continued_ticket(unknown, [EXPORTS]) is None
    assert json.loads(matcher_inputs("s", "t", [EXPORTS])["tickets"])[0]["ticket_id"] == (
        EXPORTS.ticket_id
    )


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Hola, ¿cómo puedo exportar un panel a PDF? No encuentro la opción.", "es"),
        ("สวัสดีครับ ระบบล่มตั้งแต่เช้า ผู้ใช้ทุกคนเข้าสู่ระบบไม่ได้", "th"),
        ("How do I export my data to CSV?", "en"),
        ("Our dashboards are down for all users since this morning.", "en"),
        ("12345 !!!", "und"),
    ],
)
def test_language_detection(text, language):
    assert detect_language(text) == language


def test_the_offline_path_says_plainly_that_it_cannot_translate():
    answer = TRANSLATE.offline({"language": "es", "text": "Hola"})
    assert (answer.text, answer.translated) == ("Hola", False)
    assert "cannot translate from 'es'" in answer.note

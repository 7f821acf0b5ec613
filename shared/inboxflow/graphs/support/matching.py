"""Which of a customer's active tickets does a new message continue?

A reply in a ticket's Gmail thread, or one whose ``In-Reply-To``/``References``
name a message of the ticket, always continues it (no model asked); a completed
ticket is reopened by it (:func:`reply_ticket`). Only the customer's own tickets
count: a message in another customer's thread is not theirs. Otherwise the matcher task (``tasks.MATCH_TICKET``) compares the message with a summary of each active
ticket; a ``high`` or ``medium`` match continues that ticket, anything else
opens a new one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...mail import Email
from .tasks import TicketMatch
from .tickets import Ticket, TicketStore

MESSAGE_ID = re.compile(r"<[^<>\s]+>")

CONTINUES: frozenset[str] = frozenset({"high", "medium"})


def matcher_inputs(subject: str, text: str, active: Sequence[Ticket]) -> dict[str, str]:
    """The matcher task's inputs for a message and the customer's active tickets."""
    summaries = [{"ticket_id": t.ticket_id, "summary": t.summary()} for t in active]
    return {"subject": subject, "text": text, "tickets": json.dumps(summaries, ensure_ascii=False)}


def continued_ticket(match: TicketMatch, active: Sequence[Ticket]) -> Ticket | None:
    """The ticket a match continues: only a high or medium match of an active ticket."""
    if match.confidence not in CONTINUES or match.ticket_id is None:
        return None
    return next((t for t in active if t.ticket_id == match.ticket_id), None)


@dataclass(frozen=True)
class ThreadTickets:
    """The tickets a message is a reply to.

    Attributes:
        own: the customer's ticket it continues (an active one before a completed one), or None.
        reason: how it was found (thread, or the message ids it names).
        others: other customers' tickets in the same thread.
    """

    own: Ticket | None = None
    reason: str = ""
    others: list[Ticket] = field(default_factory=list)


def reply_ticket(email: Email, customer_id: str, tickets: TicketStore) -> ThreadTickets:
    """The ticket ``email`` replies to, by its Gmail thread, else by ``In-Reply-To`` and
    ``References`` (any of the customer's tickets, completed ones included)."""
    in_thread = tickets.in_thread(email.thread_id)
    own = [t for t in in_thread if t.customer_id == customer_id]
    others = [t for t in in_thread if t.customer_id != customer_id]
    reason = f"a reply in its thread {email.thread_id}"
    named = MESSAGE_ID.findall(f"{email.header('in-reply-to')} {email.header('references')}")
    if not own and named:
        own = [
            t
            for t in tickets.list(customer_id)
            if any(m.message_id in named for m in t.messages if m.message_id)
        ]
        reason = "In-Reply-To/References name one of its messages"
    if not own:
        return ThreadTickets(others=others)
    active = [t for t in own if t.status == "active"]
    chosen = (active or own)[-1]
    return ThreadTickets(own=chosen, reason=reason, others=others)

"""Which of a customer's active tickets does a new message continue?

A reply in a ticket's Gmail thread always continues it (no model asked).
Otherwise the matcher task (``tasks.MATCH_TICKET``) compares the message with a summary of each active
ticket; a ``high`` or ``medium`` match continues that ticket, anything else
opens a new one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .tasks import TicketMatch
from .tickets import Ticket

CONTINUES: frozenset[str] = frozenset({"high", "medium"})


def thread_ticket(thread_id: str, active: Sequence[Ticket]) -> Ticket | None:
    """The active ticket whose Gmail thread this is: a reply there always continues it."""
    return next((t for t in active if thread_id in t.thread_ids), None)


def matcher_inputs(subject: str, text: str, active: Sequence[Ticket]) -> dict[str, str]:
    """The matcher task's inputs for a message and the customer's active tickets."""
    summaries = [{"ticket_id": t.ticket_id, "summary": t.summary()} for t in active]
    return {"subject": subject, "text": text, "tickets": json.dumps(summaries, ensure_ascii=False)}


def continued_ticket(match: TicketMatch, active: Sequence[Ticket]) -> Ticket | None:
    """The ticket a match continues: only a high or medium match of an active ticket."""
    if match.confidence not in CONTINUES or match.ticket_id is None:
        return None
    return next((t for t in active if t.ticket_id == match.ticket_id), None)

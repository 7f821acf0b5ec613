"""Support tickets in the store: ``tickets/{customer_id}:{ticket_id}``.

A ticket id is ``TKT-`` and 8 random digits; a new one is written create-only,
so two tickets can never share an id (a collision draws again). An active
ticket keeps its conversation (messages in both directions), the traces that
worked on it and its working state; completing it keeps the conversation and
drops the working state. A completed ticket is reopened (``reopen``) when its
customer writes again in its thread: it becomes active again with its
conversation, and the reopening (when, why, which message and trace) is kept on
it (``reopenings``).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from ...field_defaults import empty_dict, empty_list
from ...ports.documents import DocumentStore
from ...schema import TICKETS

TICKET_ID = re.compile(r"^TKT-\d{8}$")
MAX_DRAWS = 20
TicketStatus = Literal["active", "completed"]


class TicketMessage(BaseModel):
    """One message of a ticket's conversation.

    Attributes:
        direction: ``in`` from the customer, ``out`` to them.
        text: the message as written (original language).
        at: ISO timestamp.
        message_id: the email's Message-ID, when it was an email.
    """

    direction: Literal["in", "out"]
    text: str
    at: str
    message_id: str | None = None


class Assignment(BaseModel):
    """A ticket's assignment to a specialist queue.

    Attributes:
        queue: the queue (``billing``, ``technical``, ``general``).
        assigned_at: ISO timestamp.
        trace_id: the trace that assigned it.
        notified: the queue's reviewers told of it.
    """

    queue: str
    assigned_at: str
    trace_id: str
    notified: list[str] = Field(default_factory=empty_list)


class Reopening(BaseModel):
    """A completed ticket taken up again.

    Attributes:
        at: ISO timestamp.
        reason: why (``a reply in its thread (References)`` ...).
        message_id: the customer's message that reopened it.
        trace_id: the trace that reopened it.
        previous_outcome: how it had been closed.
    """

    at: str
    reason: str
    message_id: str | None = None
    trace_id: str
    previous_outcome: str | None = None


class Ticket(BaseModel):
    """One support ticket.

    Attributes:
        ticket_id: ``TKT-`` + 8 digits.
        customer_id: the CRM customer it belongs to.
        status: ``active`` or ``completed``.
        subject: the first message's subject.
        thread_ids: Gmail threads of the ticket (a reply in one continues it).
        messages: the conversation, oldest first.
        traces: the traces that worked on it, oldest first.
        working: state of the work in progress (triage...); dropped on completion.
        outcome: how it was closed (``auto_respond``, ``escalate_human``), or None.
        opened_by: the effect key that created it (a crashed open is found by it).
        customer_known: False when the CRM did not know the sender (a guest prospect).
        customer_email: the address the customer wrote from.
        assigned_queue: the specialist queue the ticket is assigned to, if any.
        assignment: who was told of the assignment and when (``Assignment``).
        reopenings: each time the completed ticket was taken up again, oldest first.
    """

    ticket_id: str
    customer_id: str
    status: TicketStatus = "active"
    subject: str = ""
    thread_ids: list[str] = Field(default_factory=empty_list)
    messages: list[TicketMessage] = Field(default_factory=empty_list)
    traces: list[str] = Field(default_factory=empty_list)
    working: dict[str, Any] = Field(default_factory=empty_dict)
    outcome: str | None = None
    opened_by: str = ""
    customer_known: bool = True
    customer_email: str = ""
    assigned_queue: str | None = None
    assignment: Assignment | None = None
    reopenings: list[Reopening] = Field(default_factory=empty_list)

    @property
    def key(self) -> str:
        """``{customer_id}:{ticket_id}``: the document id and the traces' tag."""
        return f"{self.customer_id}:{self.ticket_id}"

    def summary(self, limit: int = 400) -> str:
        """One paragraph for the matcher: subject and the latest customer message."""
        last = next((m.text for m in reversed(self.messages) if m.direction == "in"), "")
        return f"{self.subject}: {last}"[:limit]


def ticket_path(customer_id: str, ticket_id: str) -> str:
    """The store path of a ticket."""
    if not TICKET_ID.match(ticket_id):
        raise ValueError(f"ticket id {ticket_id!r} is not TKT- followed by 8 digits")
    return TICKETS.path(f"{customer_id}:{ticket_id}")


def new_ticket_id(draw: Callable[[int], int] = secrets.randbelow) -> str:
    """``TKT-`` and 8 random digits (``draw(n)`` gives a number below ``n``)."""
    return f"TKT-{draw(10**8):08d}"


class TicketStore:
    """Tickets on a checkpoint store (SQLite or Firestore alike)."""

    def __init__(
        self, store: DocumentStore, draw: Callable[[int], int] = secrets.randbelow
    ) -> None:
        self.store = store
        self.draw = draw

    def open(
        self,
        customer_id: str,
        subject: str,
        thread_id: str,
        opened_by: str = "",
        customer_known: bool = True,
        customer_email: str = "",
    ) -> Ticket:
        """Create a new active ticket under a fresh id.

        Raises:
            RuntimeError: ``MAX_DRAWS`` ids in a row were taken (a broken random source).
        """
        for _ in range(MAX_DRAWS):
            ticket = Ticket(
                ticket_id=new_ticket_id(self.draw),
                customer_id=customer_id,
                subject=subject,
                thread_ids=[thread_id],
                opened_by=opened_by,
                customer_known=customer_known,
                customer_email=customer_email,
            )
            if self.store.create(ticket_path(customer_id, ticket.ticket_id), ticket.model_dump()):
                return ticket
        raise RuntimeError(f"no free ticket id after {MAX_DRAWS} draws")

    def get(self, customer_id: str, ticket_id: str) -> Ticket | None:
        """The ticket, or None."""
        doc = self.store.get(ticket_path(customer_id, ticket_id))
        return None if doc is None else Ticket.model_validate(doc)

    def find(self, ticket_id: str) -> Ticket | None:
        """The ticket with this id, whoever's it is."""
        found = self.store.list(TICKETS.name, where=[("ticket_id", "==", ticket_id)])
        return Ticket.model_validate(found[0][1]) if found else None

    def in_thread(self, thread_id: str) -> list[Ticket]:
        """The tickets (anyone's, any status) whose Gmail threads include ``thread_id``, by id."""
        docs = self.store.list(TICKETS.name, where=[("thread_ids", "array_contains", thread_id)])
        return sorted((Ticket.model_validate(doc) for _, doc in docs), key=lambda t: t.ticket_id)

    def opened_by(self, key: str) -> Ticket | None:
        """The ticket an effect key created, if it got that far."""
        found = self.store.list(TICKETS.name, where=[("opened_by", "==", key)])
        return Ticket.model_validate(found[0][1]) if found else None

    def list(
        self, customer_id: str | None = None, status: TicketStatus | None = None
    ) -> list[Ticket]:
        """Tickets, optionally of one customer and one status, by id."""
        where: list[Any] = []
        if customer_id is not None:
            where.append(("customer_id", "==", customer_id))
        if status is not None:
            where.append(("status", "==", status))
        docs = self.store.list(TICKETS.name, where=where)
        return sorted((Ticket.model_validate(doc) for _, doc in docs), key=lambda t: t.ticket_id)

    def save(self, ticket: Ticket) -> None:
        """Write the whole ticket."""
        self.store.set(ticket_path(ticket.customer_id, ticket.ticket_id), ticket.model_dump())

    def reopen(self, ticket: Ticket, reopening: Reopening) -> Ticket:
        """Take a completed ticket up again: active, its conversation kept, the reopening
        recorded (once per trace)."""
        if ticket.status == "active" or any(
            r.trace_id == reopening.trace_id for r in ticket.reopenings
        ):
            return ticket
        reopened = ticket.model_copy(
            update={
                "status": "active",
                "outcome": None,
                "reopenings": [*ticket.reopenings, reopening],
            }
        )
        self.save(reopened)
        return reopened

    def complete(self, ticket: Ticket, outcome: str) -> Ticket:
        """Close the ticket: conversation and traces kept, working state removed."""
        done = ticket.model_copy(update={"status": "completed", "outcome": outcome, "working": {}})
        self.save(done)
        return done

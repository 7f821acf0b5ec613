"""The support graph's state: the email, its customer and ticket, and what each agent made of it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...deferred import DeferredModel
from ...field_defaults import empty_dict, empty_list
from ...mail import Address, Email
from ..screen import ScreenReport
from .crm import Customer
from .matching import TicketMatch
from .senders import SenderTrust
from .tasks import Supervision, TriageResult


class TicketRef(DeferredModel):
    """The ticket this trace works on, and how it was chosen.

    Attributes:
        customer_id: the CRM customer.
        ticket_id: ``TKT-`` + 8 digits.
        how: ``thread`` (a reply in its thread), ``reopened`` (a reply in the thread of a
            completed ticket, which it reopened), ``matched`` (the matcher), ``new``.
        match: the matcher's answer, when it was asked.
    """

    customer_id: str
    ticket_id: str
    how: Literal["thread", "reopened", "matched", "new"]
    match: TicketMatch | None = None

    @property
    def key(self) -> str:
        """``{customer_id}:{ticket_id}``: the tag of the trace."""
        return f"{self.customer_id}:{self.ticket_id}"


class TranslationResult(DeferredModel):
    """The translator's output: the ticket's messages in English for the agents, originals kept."""

    original_language: str
    is_english: bool
    original_messages: list[str]
    translated_messages: list[str]
    notes: list[str] = Field(default_factory=empty_list)


class ActResult(DeferredModel):
    """What ``act`` did.

    Attributes:
        action: the recommended action it carried out.
        status: ``sent``, ``drafted``, ``rejected``, ``escalated`` or ``queued``.
        message_id: the reply written, if any.
        notified: the reviewers told about an escalation or an assignment.
        queue: the specialist queue a ``route_specialist`` assigned the ticket to.
        approved_by: the reviewer who approved the reply, if one did.
        learned: what the reviewer's edit or rejection taught the mailbox's drafts
            (``namespace@version``).
    """

    action: str
    status: Literal["sent", "drafted", "rejected", "escalated", "queued"]
    message_id: str | None = None
    notified: list[str] = Field(default_factory=empty_list)
    approved_by: str | None = None
    learned: list[str] = Field(default_factory=empty_list)
    queue: str | None = None


class SupportState(DeferredModel):
    """What one customer email accumulates on its way through the support graph."""

    email: Email
    customer: Customer | None = None
    customer_known: bool = True
    """False: the CRM did not know the sender; ``customer`` is a free-plan guest."""
    ticket: TicketRef | None = None
    translation: TranslationResult | None = None
    supervision: Supervision | None = None
    triage: TriageResult | None = None
    act: ActResult | None = None
    end_reason: str | None = None
    tag: str | None = None
    """``{customer_id}:{ticket_id}``: the ticket this trace worked on."""
    sender: SenderTrust | None = None
    """What intake could tell of the sender (authentication, look-alike, someone else's thread)."""
    writer: Address | None = None
    """The customer who wrote, when it is not the email's sender: the writer of a message a
    colleague or a configured forwarding source forwarded by hand (intake,
    ``mail/forward_writer.py``; ``sender.forward`` says why it was taken or not)."""
    kb_relevance: dict[str, float] = Field(default_factory=empty_dict)
    """The specialist's knowledge-base search: each source found, its relevance to the message
    (cosine similarity, best chunk), recorded by the node, never by the model."""
    review_reasons: list[str] = Field(default_factory=empty_list)
    """Why a person must approve the reply before it goes out (the ``reply_needs_person`` guard)."""
    screen: ScreenReport | None = None
    """What the safety screen found in the email (intake's ``safety_screen`` guard)."""

    @property
    def customer_address(self) -> Address:
        """Who the desk answers: a forward's writer taken by intake, else the email's sender."""
        return self.writer or self.email.sender

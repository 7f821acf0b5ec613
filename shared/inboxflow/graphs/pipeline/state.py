"""The pipeline's state: what one email accumulates on its way through the graph.

Every field is JSON-friendly (Firestore: maps and lists of maps, never a
list directly inside a list). Nodes replace whole top-level fields; the step
log stores only the fields a step changed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...deferred import DeferredModel
from ...field_defaults import empty_dict, empty_list
from ...mail import Email
from ..screen import ScreenReport

SCHEMA_VERSION = 1

Category = Literal["inquiry", "meeting_request", "complaint", "follow_up", "spam", "other"]
CATEGORIES: tuple[Category, ...] = (
    "inquiry",
    "meeting_request",
    "complaint",
    "follow_up",
    "spam",
    "other",
)
Tone = Literal["professional", "empathetic", "friendly"]

COMPLAINT_FLAG = "complaint_cues"
"""The flag the ``complaint_review`` guard sets: complaint cues in an email of another category."""


class Classification(DeferredModel):
    """What the email is, how sure we are, and why."""

    category: Category
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[str] = Field(default_factory=empty_list)
    flags: list[str] = Field(default_factory=empty_list)
    """Safety signals, e.g. ``prompt_injection``; any flag sends the draft to a human."""
    needs_reply: bool = True
    """False for a courtesy message (thanks, an acknowledgement) with nothing to answer."""

    @property
    def is_complaint(self) -> bool:
        """A complaint by its category or by the ``complaint_review`` guard's flag.

        Either way it is answered empathetically, reviewed by a person and never sent on its own.
        """
        return self.category == "complaint" or COMPLAINT_FLAG in self.flags


class SavedReply(DeferredModel):
    """A canned answer that matches the email."""

    id: str
    title: str
    answer: str
    score: float


class TimeSlot(DeferredModel):
    """A free slot in the mailbox owner's calendar."""

    start: str
    end: str
    label: str


class CalendarAvailability(DeferredModel):
    """Free slots found by ``check_calendar``."""

    timezone: str = "UTC"
    duration_minutes: int = 30
    slots: list[TimeSlot] = Field(default_factory=empty_list)
    busy_events: int = 0


class KnowledgeHit(DeferredModel):
    """A knowledge-base chunk near the email: a pointer and an excerpt, not the document."""

    id: str
    """Chunk id in ``kb_chunks`` (``{source}#{nnn}``)."""
    title: str
    section: str = ""
    source: str = ""
    excerpt: str
    distance: float
    """Cosine distance to the email (smaller is nearer)."""


class SimilarEmail(DeferredModel):
    """A past email near this one (from ``email_vectors``)."""

    message_id: str
    subject: str
    sender: str = ""
    category: str | None = None
    received_at: str | None = None
    excerpt: str = ""
    """The start of its unquoted body: untrusted text, like any email."""
    distance: float


class UpcomingEvent(DeferredModel):
    """An event in the mailbox owner's calendar over the coming days."""

    id: str
    summary: str
    start: str
    end: str
    attendees: list[str] = Field(default_factory=empty_list)


class Context(DeferredModel):
    """What the agent knows beyond the email."""

    sender_known: bool = False
    owner: dict[str, Any] | None = None
    """The mailbox owner's contact record (who signs the reply)."""
    contact: dict[str, Any] | None = None
    """The sender's contact record (CRM), when the sender is a contact."""
    similar: list[SavedReply] = Field(default_factory=empty_list)
    """Saved replies whose keywords the email mentions, best first."""
    calendar: CalendarAvailability | None = None
    knowledge: list[KnowledgeHit] = Field(default_factory=empty_list)
    """Knowledge-base chunks nearest to the email (vector search), nearest first."""
    similar_emails: list[SimilarEmail] = Field(default_factory=empty_list)
    """Past emails nearest to this one, nearest first (never the email itself)."""
    upcoming_events: list[UpcomingEvent] = Field(default_factory=empty_list)
    """For meeting requests: the owner's calendar over the coming business days."""
    retrieval_errors: list[str] = Field(default_factory=empty_list)
    """Parts of the context that could not be gathered, and why."""


class ToolCall(DeferredModel):
    """One tool the decide node chose, with its arguments."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=empty_dict)
    reason: str = ""


class ToolResult(DeferredModel):
    """How a read tool call went (data lands in ``context``; the full call is on the step log)."""

    name: str
    ok: bool
    error: str | None = None


class Draft(DeferredModel):
    """The reply the agent proposes."""

    to: str
    subject: str
    body: str
    tone: Tone


class Review(DeferredModel):
    """The review gate's verdict."""

    auto_dispatch: bool
    reasons: list[str] = Field(default_factory=empty_list)


class DispatchResult(DeferredModel):
    """What dispatch did (or why it did nothing: ``PipelineState.end_reason``)."""

    status: Literal["drafted", "sent", "rejected", "refused"]
    """``refused``: loop protection forbids writing to ``to``; nothing reached the mailbox."""
    action: str | None = None
    message_id: str | None = None
    to: str | None = None
    subject: str | None = None
    approved_by: str | None = None
    edited: bool = False
    learned: list[str] = Field(default_factory=empty_list)
    """What the reviewer's edit or rejection taught the mailbox's drafts (``namespace@version``)."""


class PipelineState(DeferredModel):
    """State of the email pipeline graph."""

    schema_version: int = SCHEMA_VERSION
    email: Email = Field(frozen=True)
    """The input: set when the trace starts, never changed (stored once, in the checkpoint)."""
    classification: Classification | None = None
    context: Context | None = None
    tool_plan: list[ToolCall] = Field(default_factory=empty_list)
    tool_results: list[ToolResult] = Field(default_factory=empty_list)
    planned_actions: list[ToolCall] = Field(default_factory=empty_list)
    draft: Draft | None = None
    review: Review | None = None
    dispatch: DispatchResult | None = None
    end_reason: str | None = None
    """Why the trace ended without a reply: confident spam, no reply needed, a refused recipient."""
    screen: ScreenReport | None = None
    """What the safety screen found in the email (classify's ``safety_screen`` guard)."""


__all__ = [
    "CATEGORIES",
    "COMPLAINT_FLAG",
    "SCHEMA_VERSION",
    "CalendarAvailability",
    "Category",
    "Classification",
    "Context",
    "DispatchResult",
    "Draft",
    "KnowledgeHit",
    "PipelineState",
    "Review",
    "SavedReply",
    "SimilarEmail",
    "TimeSlot",
    "Tone",
    "ToolCall",
    "ToolResult",
    "UpcomingEvent",
]

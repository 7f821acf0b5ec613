"""The pipeline's tools: read tools run by ``execute_tools``, action tools run at dispatch.

| tool             | kind   | what it does                                                   |
|------------------|--------|----------------------------------------------------------------|
| get_contact      | read   | the sender's contact record (name, company, tier, notes)       |
| check_calendar   | read   | free slots over the next N business days, from free/busy       |
| create_draft     | action | saves the reply as a draft in the thread                       |
| send_email       | action | sends the reply in the thread (In-Reply-To, References, Re:)   |
| mark_as_read     | action | removes UNREAD from the message answered                       |
| schedule_meeting | action | puts a meeting in the owner's calendar and invites attendees   |

Action tools run through the effect journal (``ctx.effect``), so each one
happens once per trace step even when the step is re-run after a crash:
mail is stamped ``X-Inboxflow-Trace`` with the journal key and found again
by it, calendar events get an id derived from the key. Every tool takes an
optional ``mailbox`` (the mailbox the agent acts for; default: the
workspace's own).

Each action tool declares what it is bound to (``binds``), resolved from the
email by :func:`bound_to`: a reply goes to its sender (From or Reply-To, or the
writer of the message it forwards: ``Email.writer``), a
meeting invites only people on the email (From, Reply-To, To, Cc), and only
the message answered is marked read. The runtime refuses any other call.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from ...engine.tools import Tool
from ...field_defaults import empty_list
from ...ports.workspace import OutgoingReply
from ...workspace import business_day
from ..kit import (
    CORRESPONDENT,
    MESSAGE_ANSWERED,
    PEOPLE_ON_THE_EMAIL,
    bound_to,
    workspace_of,
)
from .weekdays import WEEKDAYS, Weekday

if TYPE_CHECKING:
    from ...engine.context import NodeContext

WORKDAY_START_H, LUNCH_H, WORKDAY_END_H = 9, 12, 17
SLOT_STEP_MIN = 30


MAILBOX_FIELD = Field(
    default=None, description="Mailbox the agent acts for (default: the configured one)."
)


# --- get_contact ---------------------------------------------------------------------------


class GetContactParams(BaseModel):
    """Arguments of ``get_contact``."""

    email: str = Field(description="The email address to look up.")
    mailbox: str | None = MAILBOX_FIELD


def get_contact(params: GetContactParams, ctx: NodeContext) -> dict[str, Any]:
    """Look the address up in the contacts."""
    contact = workspace_of(ctx, params.mailbox).get_contact(params.email)
    if contact is None:
        return {"found": False, "email": params.email}
    return {"found": True, "contact": {k: v for k, v in contact.items() if k != "seeded"}}


# --- check_calendar ------------------------------------------------------------------------


class CheckCalendarParams(BaseModel):
    """Arguments of ``check_calendar``."""

    days: int = Field(
        default=5, ge=1, le=20, description="Business days to look ahead, from tomorrow."
    )
    duration_minutes: int = Field(default=30, ge=15, le=240, description="Length of the meeting.")
    preferred_weekdays: list[Weekday] = Field(
        default_factory=empty_list, description="Weekdays the sender asked for, offered first."
    )
    part_of_day: Literal["any", "morning", "afternoon"] = Field(
        default="any", description="Morning (9-12), afternoon (13-17) or any working hour, UTC."
    )
    max_slots: int = Field(default=3, ge=1, le=10, description="How many slots to offer.")
    mailbox: str | None = MAILBOX_FIELD


def check_calendar(params: CheckCalendarParams, ctx: NodeContext) -> dict[str, Any]:
    """Free slots in working hours (UTC) over the next business days, one per day first."""
    today = datetime.fromtimestamp(ctx.clock.now(), UTC).date()
    days = [business_day(today, n) for n in range(1, params.days + 1)]
    first, last = days[0], days[-1]
    window_start = datetime(first.year, first.month, first.day, WORKDAY_START_H, tzinfo=UTC)
    window_end = datetime(last.year, last.month, last.day, WORKDAY_END_H, tzinfo=UTC)
    busy = workspace_of(ctx, params.mailbox).free_busy(window_start, window_end)
    length = timedelta(minutes=params.duration_minutes)
    hours = {
        "any": (WORKDAY_START_H, WORKDAY_END_H),
        "morning": (WORKDAY_START_H, LUNCH_H),
        "afternoon": (LUNCH_H + 1, WORKDAY_END_H),
    }[params.part_of_day]

    preferred = set(params.preferred_weekdays)
    groups = [
        [d for d in days if WEEKDAYS[d.weekday()] in preferred],
        [d for d in days if WEEKDAYS[d.weekday()] not in preferred],
    ]
    chosen: list[datetime] = []
    for group in groups:  # the days asked for first, then the rest; one slot per day per round
        free_by_day = [_free_starts(day, hours, length, busy) for day in group]
        for rank in range(max((len(f) for f in free_by_day), default=0)):
            for free in free_by_day:
                if rank >= len(free) or len(chosen) >= params.max_slots:
                    continue
                if all(free[rank] >= c + length or free[rank] + length <= c for c in chosen):
                    chosen.append(free[rank])
    chosen.sort()
    return {
        "timezone": "UTC",
        "duration_minutes": params.duration_minutes,
        "busy_events": len(busy),
        "slots": [
            {
                "start": s.isoformat(),
                "end": (s + length).isoformat(),
                "label": slot_label(s, length),
            }
            for s in chosen
        ],
    }


def _free_starts(
    day: date, hours: tuple[int, int], length: timedelta, busy: list[tuple[datetime, datetime]]
) -> list[datetime]:
    free: list[datetime] = []
    start = datetime(day.year, day.month, day.day, hours[0], tzinfo=UTC)
    day_end = datetime(day.year, day.month, day.day, hours[1], tzinfo=UTC)
    while start + length <= day_end:
        if all(start + length <= b_start or start >= b_end for b_start, b_end in busy):
            free.append(start)
        start += timedelta(minutes=SLOT_STEP_MIN)
    return free


def slot_label(start: datetime, length: timedelta) -> str:
    """``Tuesday 19 January, 14:00-14:30 UTC``."""
    end = start + length
    return f"{start:%A} {start.day} {start:%B}, {start:%H:%M}\u2013{end:%H:%M} UTC"


# --- create_draft / send_email ------------------------------------------------------------


class ReplyParams(BaseModel):
    """Arguments of ``create_draft`` and ``send_email``: a reply in a thread."""

    to: str = Field(description="Recipient address.")
    subject: str = Field(description="Subject of the reply ('Re: ' is added when missing).")
    body: str = Field(default="", description="Plain-text body of the reply.")
    thread_id: str = Field(description="Thread the reply belongs to.")
    in_reply_to: str | None = Field(
        default=None, description="Message-ID of the message answered (threads the reply)."
    )
    references: list[str] = Field(
        default_factory=empty_list,
        description="Message-IDs of the References of the message answered.",
    )
    mailbox: str | None = MAILBOX_FIELD


CreateDraftParams = ReplyParams
SendEmailParams = ReplyParams


def create_draft(params: ReplyParams, ctx: NodeContext) -> dict[str, Any]:
    """Save the reply as a draft, exactly once per step (effect journal + trace header)."""
    return _reply(params, ctx, send=False)


def send_email(params: ReplyParams, ctx: NodeContext) -> dict[str, Any]:
    """Send the reply in its thread, exactly once per step (effect journal + trace header)."""
    return _reply(params, ctx, send=True)


def _reply(params: ReplyParams, ctx: NodeContext, send: bool) -> dict[str, Any]:
    workspace = workspace_of(ctx, params.mailbox)
    fields = (params.to, params.subject, params.body, params.thread_id)
    threading = (params.in_reply_to, params.references)
    return ctx.effect(
        "send_email" if send else "create_draft",
        lambda key: workspace.write_reply(OutgoingReply(*fields, key, *threading), send=send),
        workspace.find_by_trace_key,
    )


# --- mark_as_read ----------------------------------------------------------------------------


class MarkAsReadParams(BaseModel):
    """Arguments of ``mark_as_read``."""

    message_id: str = Field(description="Message-ID (or Gmail id) of the message to mark read.")
    mailbox: str | None = MAILBOX_FIELD


def mark_as_read(params: MarkAsReadParams, ctx: NodeContext) -> dict[str, Any]:
    """Remove UNREAD from the message (idempotent; journalled so it is recorded once)."""
    workspace = workspace_of(ctx, params.mailbox)
    return ctx.effect("mark_as_read", lambda key: workspace.mark_as_read(params.message_id))


# --- schedule_meeting ------------------------------------------------------------------------


class ScheduleMeetingParams(BaseModel):
    """Arguments of ``schedule_meeting``."""

    summary: str = Field(description="Title of the meeting.")
    start: datetime = Field(description="Start, ISO 8601 with an offset (e.g. 2026-01-06T14:00Z).")
    duration_minutes: int = Field(default=30, ge=15, le=480, description="Length of the meeting.")
    attendees: list[str] = Field(default_factory=empty_list, description="Addresses to invite.")
    description: str = Field(default="", description="Agenda or notes.")
    mailbox: str | None = MAILBOX_FIELD


def schedule_meeting(params: ScheduleMeetingParams, ctx: NodeContext) -> dict[str, Any]:
    """Insert the event once (its id derives from the journal key, so a re-run finds it)."""
    start = params.start if params.start.tzinfo else params.start.replace(tzinfo=UTC)
    end = start + timedelta(minutes=params.duration_minutes)
    workspace = workspace_of(ctx, params.mailbox)
    return ctx.effect(
        "schedule_meeting",
        lambda key: workspace.insert_event(
            params.summary, start, end, params.attendees, key, params.description
        ),
    )


# --- the set ---------------------------------------------------------------------------------

GET_CONTACT = Tool(
    "get_contact",
    "Look up the sender in the contacts: name, company, title, account tier, notes.",
    GetContactParams,
    get_contact,
)
CHECK_CALENDAR = Tool(
    "check_calendar",
    "Free meeting slots in the mailbox owner's calendar over the coming business days.",
    CheckCalendarParams,
    check_calendar,
    uses_calendar=True,
)
CREATE_DRAFT = Tool(
    "create_draft",
    "Save a reply as a Gmail draft in the thread (not sent).",
    CreateDraftParams,
    create_draft,
    action=True,
    binds=CORRESPONDENT,
)
SEND_EMAIL = Tool(
    "send_email",
    "Send a reply in the thread (In-Reply-To, References and a 'Re:' subject).",
    SendEmailParams,
    send_email,
    action=True,
    binds=CORRESPONDENT,
)
MARK_AS_READ = Tool(
    "mark_as_read",
    "Mark the message answered as read.",
    MarkAsReadParams,
    mark_as_read,
    action=True,
    binds=MESSAGE_ANSWERED,
)
SCHEDULE_MEETING = Tool(
    "schedule_meeting",
    "Put a meeting in the mailbox owner's calendar and invite the attendees.",
    ScheduleMeetingParams,
    schedule_meeting,
    action=True,
    binds=PEOPLE_ON_THE_EMAIL,
    uses_calendar=True,
)


def pipeline_tools() -> list[Tool]:
    """The tools of the email pipeline, for ``ToolRegistry(pipeline_tools())``."""
    return [GET_CONTACT, CHECK_CALENDAR, CREATE_DRAFT, SEND_EMAIL, MARK_AS_READ, SCHEDULE_MEETING]


__all__ = [
    "CHECK_CALENDAR",
    "CREATE_DRAFT",
    "GET_CONTACT",
    "MARK_AS_READ",
    "SCHEDULE_MEETING",
    "SEND_EMAIL",
    "WEEKDAYS",
    "CheckCalendarParams",
    "CreateDraftParams",
    "GetContactParams",
    "MarkAsReadParams",
    "ReplyParams",
    "ScheduleMeetingParams",
    "SendEmailParams",
    "Weekday",
    "bound_to",
    "pipeline_tools",
    "slot_label",
    "workspace_of",
]

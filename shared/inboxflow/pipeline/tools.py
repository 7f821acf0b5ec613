"""The pipeline's tools: read tools run by ``execute_tools``, action tools run at dispatch.

| tool           | kind   | what it does                                                     |
|----------------|--------|------------------------------------------------------------------|
| get_contact    | read   | the sender's contact record (name, company, tier, notes)         |
| check_calendar | read   | free slots over the next N business days, from calendar events   |
| create_draft   | action | saves the reply as a draft (through the effect journal)          |
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from ..tools import Tool
from ..workspace import Workspace, business_day

if TYPE_CHECKING:
    from ..context import NodeContext

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday"]
WEEKDAYS: tuple[Weekday, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday")
WORKDAY_START_H, LUNCH_H, WORKDAY_END_H = 9, 12, 17
SLOT_STEP_MIN = 30


def workspace_of(ctx: NodeContext) -> Workspace:
    """The workspace port from the runtime's services."""
    workspace = ctx.services.get("workspace") if ctx.services else None
    if not isinstance(workspace, Workspace):
        raise RuntimeError(
            "no workspace configured: build the runtime with services={'workspace': ...}"
        )
    return workspace


# --- get_contact ---------------------------------------------------------------------------


class GetContactParams(BaseModel):
    """Arguments of ``get_contact``."""

    email: str = Field(description="The email address to look up.")


def get_contact(params: GetContactParams, ctx: NodeContext) -> dict[str, Any]:
    """Look the address up in the contacts."""
    contact = workspace_of(ctx).get_contact(params.email)
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
        default_factory=list, description="Weekdays the sender asked for, offered first."
    )
    part_of_day: Literal["any", "morning", "afternoon"] = Field(
        default="any", description="Morning (9-12), afternoon (13-17) or any working hour, UTC."
    )
    max_slots: int = Field(default=3, ge=1, le=10, description="How many slots to offer.")


def check_calendar(params: CheckCalendarParams, ctx: NodeContext) -> dict[str, Any]:
    """Free slots in working hours (UTC) over the next business days, one per day first."""
    today = datetime.fromtimestamp(ctx.clock.now(), UTC).date()
    days = [business_day(today, n) for n in range(1, params.days + 1)]
    first, last = days[0], days[-1]
    window_start = datetime(first.year, first.month, first.day, WORKDAY_START_H, tzinfo=UTC)
    window_end = datetime(last.year, last.month, last.day, WORKDAY_END_H, tzinfo=UTC)
    events = workspace_of(ctx).list_events(window_start, window_end)
    busy = [(datetime.fromisoformat(e["start"]), datetime.fromisoformat(e["end"])) for e in events]
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
        "busy_events": len(events),
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


# --- create_draft --------------------------------------------------------------------------


class CreateDraftParams(BaseModel):
    """Arguments of ``create_draft``."""

    to: str = Field(description="Recipient address.")
    subject: str = Field(description="Subject of the reply.")
    body: str = Field(default="", description="Plain-text body of the reply.")
    thread_id: str = Field(description="Thread the reply belongs to.")


def create_draft(params: CreateDraftParams, ctx: NodeContext) -> dict[str, Any]:
    """Save the reply as a draft, exactly once per step (effect journal + trace header)."""
    workspace = workspace_of(ctx)
    return ctx.effect(
        "create_draft",
        lambda key: workspace.create_draft(
            params.to, params.subject, params.body, params.thread_id, key
        ),
        workspace.find_by_trace_key,
    )


# --- the set ---------------------------------------------------------------------------------

GET_CONTACT = Tool(
    name="get_contact",
    description="Look up the sender in the contacts: name, company, title, account tier, notes.",
    params=GetContactParams,
    handler=get_contact,
)
CHECK_CALENDAR = Tool(
    name="check_calendar",
    description="Free meeting slots in the mailbox owner's calendar over the coming business days.",
    params=CheckCalendarParams,
    handler=check_calendar,
)
CREATE_DRAFT = Tool(
    name="create_draft",
    description="Save a reply as a Gmail draft in the thread (not sent).",
    params=CreateDraftParams,
    handler=create_draft,
    action=True,
)


def pipeline_tools() -> list[Tool]:
    """The tools of the email pipeline, for ``ToolRegistry(pipeline_tools())``."""
    return [GET_CONTACT, CHECK_CALENDAR, CREATE_DRAFT]


__all__ = [
    "CHECK_CALENDAR",
    "CREATE_DRAFT",
    "GET_CONTACT",
    "WEEKDAYS",
    "CheckCalendarParams",
    "CreateDraftParams",
    "GetContactParams",
    "Weekday",
    "pipeline_tools",
    "slot_label",
    "workspace_of",
]

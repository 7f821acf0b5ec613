"""The response agent's tools.

| tool                         | reviewed | what it does                                            |
|------------------------------|----------|---------------------------------------------------------|
| write_email                  | yes      | sends the reply in the email's thread                   |
| schedule_meeting             | yes      | puts the meeting in the calendar, invites the attendees |
| check_calendar_availability  | no       | the day's busy times and free slots                     |
| Question                     | yes      | asks the owner; the answer comes back as the result     |
| Done                         | no       | ends the loop (then mark_as_read)                       |

Mail and calendar writes go through the effect journal (``ctx.effect``):
mail is stamped with the journal key and found again by it after a crash,
events get an id derived from the key; a re-run step never repeats one.

``write_email`` is bound to the sender of the email answered (From or
Reply-To), ``schedule_meeting`` to the people on it (From, Reply-To, To, Cc);
addresses the owner typed (an instruction, an edit under review) count too.
The runtime refuses any other recipient (``bound_to``).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator

from ...engine.bindings import Bound, bound_addresses
from ...engine.tools import Tool, ToolRegistry
from ...mail import Email
from ..kit import CORRESPONDENT, PEOPLE_ON_THE_EMAIL, workspace_of
from ..kit import bound_to as bound_to_email
from .settings import assistant_settings

if TYPE_CHECKING:
    from ...engine.context import NodeContext

REVIEWED = frozenset({"write_email", "schedule_meeting", "Question"})
"""Tools that pause for the owner's review before they run."""


class WriteEmailParams(BaseModel):
    """Arguments of ``write_email``."""

    to: str = Field(description="Recipient address.")
    subject: str = Field(description="Subject of the email.")
    content: str = Field(
        min_length=1, description="Plain-text body, greeting and sign-off included."
    )


class ScheduleMeetingParams(BaseModel):
    """Arguments of ``schedule_meeting``."""

    attendees: list[str] = Field(min_length=1, description="Addresses to invite.")
    subject: str = Field(description="Title of the meeting.")
    duration_minutes: int = Field(ge=5, le=480, description="Length of the meeting.")
    preferred_day: date = Field(description="Day of the meeting, YYYY-MM-DD.")
    start_time: str = Field(
        pattern=r"^\d{1,2}:\d{2}$", description="Start time HH:MM (the owner's time zone)."
    )

    @field_validator("attendees", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


class CheckAvailabilityParams(BaseModel):
    """Arguments of ``check_calendar_availability``."""

    day: date = Field(description="The day to check, YYYY-MM-DD.")


class QuestionParams(BaseModel):
    """Arguments of ``Question``."""

    content: str = Field(min_length=1, description="The question for the owner.")


class DoneParams(BaseModel):
    """Arguments of ``Done``."""

    done: bool = Field(default=True, description="True: the email is handled.")


def _email(ctx: NodeContext) -> dict[str, Any]:
    email = ctx.subject  # the email being handled, set by tool_review
    if not isinstance(email, dict):
        raise RuntimeError("the assistant's tools run inside tool_review (no email given)")
    return email


_ADDRESS = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")


def bound_to(email: dict[str, Any], instruction: str | None = None) -> Bound:
    """Who the assistant's writing tools are bound to: the email's people, and any address
    in the owner's instruction (the owner typed it)."""
    bound = dict(bound_to_email(Email.model_validate(email)))
    typed = bound_addresses(*_ADDRESS.findall(instruction or ""))
    for subject in (CORRESPONDENT.subject, PEOPLE_ON_THE_EMAIL.subject):
        bound[subject] = tuple(dict.fromkeys([*bound[subject], *typed]))
    return bound


def write_email(params: WriteEmailParams, ctx: NodeContext) -> dict[str, Any]:
    """Send the email in the thread being answered, once (journal + trace header)."""
    email = _email(ctx)
    workspace = workspace_of(ctx, email["mailbox"])

    def receipt(message: dict[str, Any] | None) -> dict[str, Any] | None:
        if message is None:
            return None
        return {"id": message.get("id"), "to": params.to, "subject": params.subject, "sent": True}

    return ctx.effect(
        "write_email",
        lambda key: (
            receipt(
                workspace.send_reply(
                    params.to,
                    params.subject,
                    params.content,
                    email["thread_id"],
                    key,
                    in_reply_to=email.get("message_id"),
                    references=email.get("references") or [],
                )
            )
            or {}
        ),
        lambda key: receipt(workspace.find_by_trace_key(key)),
    )


def meeting_start(day: date, start_time: str, zone: tzinfo = UTC) -> datetime:
    """``day`` at ``HH:MM`` in ``zone``, as a UTC time."""
    hours, minutes = (int(part) for part in start_time.split(":"))
    return datetime.combine(day, time(hours, minutes), tzinfo=zone).astimezone(UTC)


def when_label(start: datetime, length: timedelta, zone: tzinfo) -> str:
    """``Tuesday 19 January, 14:00-14:30 CET`` in the owner's zone."""
    local, end = start.astimezone(zone), (start + length).astimezone(zone)
    return f"{local:%A} {local.day} {local:%B}, {local:%H:%M}\u2013{end:%H:%M} {local:%Z}"


def schedule_meeting(params: ScheduleMeetingParams, ctx: NodeContext) -> dict[str, Any]:
    """Insert the event once (its id derives from the journal key)."""
    email = _email(ctx)
    workspace = workspace_of(ctx, email["mailbox"])
    zone = assistant_settings(ctx.ports).zone
    start = meeting_start(params.preferred_day, params.start_time, zone)
    end = start + timedelta(minutes=params.duration_minutes)
    event = ctx.effect(
        "schedule_meeting",
        lambda key: workspace.insert_event(params.subject, start, end, params.attendees, key, ""),
    )
    return {
        "scheduled": True,
        "event_id": event.get("id"),
        "when": when_label(start, end - start, zone),
    }


def check_calendar_availability(
    params: CheckAvailabilityParams, ctx: NodeContext
) -> dict[str, Any]:
    """Busy intervals and free hours of ``day`` in the owner's working hours and time zone."""
    email = _email(ctx)
    settings = assistant_settings(ctx.ports)
    zone = settings.zone
    first, last = settings.working_hours
    start = datetime.combine(params.day, first, tzinfo=zone)
    end = datetime.combine(params.day, last, tzinfo=zone)
    found = workspace_of(ctx, email["mailbox"]).free_busy(
        start.astimezone(UTC), end.astimezone(UTC)
    )
    busy = [(b_start.astimezone(zone), b_end.astimezone(zone)) for b_start, b_end in found]
    free, cursor = [], start
    for b_start, b_end in sorted(busy):
        if b_start > cursor:
            free.append(f"{cursor:%H:%M}-{min(b_start, end):%H:%M}")
        cursor = max(cursor, b_end)
    if cursor < end:
        free.append(f"{cursor:%H:%M}-{end:%H:%M}")
    return {
        "day": params.day.isoformat(),
        "busy": [f"{s:%H:%M}-{e:%H:%M}" for s, e in busy],
        "free": free,
    }


def question(params: QuestionParams, ctx: NodeContext) -> dict[str, Any]:
    """Reached only when the owner accepted a question without answering it."""
    return {"answer": None, "note": "the owner read the question and gave no answer"}


def done(params: DoneParams, ctx: NodeContext) -> dict[str, Any]:
    """The email is handled."""
    return {"done": True}


ASSISTANT_TOOLS = ToolRegistry(
    [
        Tool(
            "write_email",
            "Write and send an email (the owner reviews it first).",
            WriteEmailParams,
            write_email,
            action=True,
            binds=CORRESPONDENT,
        ),
        Tool(
            "schedule_meeting",
            "Schedule a calendar meeting and invite the attendees (the owner reviews it first).",
            ScheduleMeetingParams,
            schedule_meeting,
            action=True,
            binds=PEOPLE_ON_THE_EMAIL,
            uses_calendar=True,
        ),
        Tool(
            "check_calendar_availability",
            "The owner's busy times and free slots on a day.",
            CheckAvailabilityParams,
            check_calendar_availability,
            uses_calendar=True,
        ),
        Tool("Question", "Ask the owner a question you need answered.", QuestionParams, question),
        Tool("Done", "The email is handled: call this last.", DoneParams, done),
    ]
)
"""The assistant graph's tool registry."""

"""The planner graph's state: the conversation, what is known of the customer, the plan.

The issue's fields (``goal``, ``messages``, ``customer_info``, ``quote_session``,
``planned_tool_inputs``, ``last_tool_outputs``, ``agent_scratchpad``,
``human_feedback``, ``requires_agency_review``, ``awaiting_customer_reply``) plus
``seen_reply_ids`` (customer replies already taken into ``messages``), the first
email (frozen: the thread every message goes to) and ``end_reason``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...deferred import DeferredModel
from ...field_defaults import empty_dict, empty_list
from ..screen import ScreenReport

ToolName = Literal[
    "quote_initiate",
    "add_driver",
    "add_vehicle",
    "get_rate",
    "ask_customer",
    "prepare_final_summary",
    "request_human_review",
]
TOOL_NAMES: tuple[str, ...] = ToolName.__args__  # type: ignore[attr-defined]


class Message(DeferredModel):
    """One message of the conversation.

    Attributes:
        role: ``customer`` (an email from them), ``agent`` (an email we sent), ``tool``
            (a tool's result, as the planner saw it).
        content: the text (a customer's email without what it quotes).
        at: when (epoch seconds).
        ref: the Gmail id (or Message-ID) of an email, the tool's name for a tool message.
    """

    role: Literal["customer", "agent", "tool"]
    content: str
    at: float | None = None
    ref: str | None = None


class CustomerFacts(DeferredModel):
    """What is known of the applicant, the driver (the applicant) and the vehicle."""

    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    date_of_birth: str | None = None
    zip_code: str | None = None
    license_number: str | None = None
    license_state: str | None = None
    years_licensed: int | None = None
    accidents_last_5_years: int | None = None
    vin: str | None = None
    vehicle_year: int | None = None
    vehicle_make: str | None = None
    vehicle_model: str | None = None
    annual_mileage: int | None = None


class CustomerInfo(CustomerFacts):
    """The facts, and the values found wrong (by the agency or the quoting service) by field:
    the same value read again from an old message is not used again."""

    rejected: dict[str, list[str]] = Field(default_factory=empty_dict)


class QuoteProgress(DeferredModel):
    """The quoting API's session and quote, and what was added to it."""

    session_id: str
    quote_id: str
    drivers: int = 0
    vehicles: int = 0
    rate: dict[str, Any] | None = None


class PlannedTool(DeferredModel):
    """The plan for the next action: one tool and its arguments."""

    tool_name: ToolName
    args: dict[str, Any] = Field(default_factory=empty_dict)


class HumanFeedback(DeferredModel):
    """The agency's answer to a reviewed plan (a rejection or an edit), for the planner.

    Attributes:
        approved: always False here (an approved plan runs; it leaves no feedback).
        comment: why (required for a rejection).
        edited_inputs: the plan as the agency edited it (None: rejected).
        tool_name: the tool of the plan reviewed.
        reviewer: who decided.
    """

    approved: bool = False
    comment: str | None = None
    edited_inputs: dict[str, Any] | None = None
    tool_name: str | None = None
    reviewer: str | None = None


class Scratchpad(DeferredModel):
    """The planner's working notes.

    Attributes:
        notes: its reasoning, one line per planning step (last 20).
        failures: consecutive failed calls by tool (retry bound).
        asked: the fields the last question asked for.
        wait_deadline_at: when the current customer wait gives up (epoch seconds).
        reminders_sent: reminders sent in the current wait.
        plans: planning steps taken (bounded by the settings' ``max_plans``).
        review_reasons: why the current plan goes to the agency (the review page shows them).
    """

    notes: list[str] = Field(default_factory=empty_list)
    failures: dict[str, int] = Field(default_factory=empty_dict)
    asked: list[str] = Field(default_factory=empty_list)
    wait_deadline_at: float | None = None
    reminders_sent: int = 0
    plans: int = 0
    review_reasons: list[str] = Field(default_factory=empty_list)


class PlannerState(DeferredModel):
    """The state of one planner trace (one customer's quote, over several emails)."""

    schema_version: int = 1
    email: dict[str, Any] = Field(frozen=True)
    """The first email (JSON form of ``mail.Email``): its thread carries the conversation."""
    goal: str = ""
    messages: list[Message] = Field(default_factory=empty_list)
    customer_info: CustomerInfo = Field(default_factory=CustomerInfo)
    quote_session: QuoteProgress | None = None
    planned_tool_inputs: PlannedTool | None = None
    last_tool_outputs: dict[str, Any] | None = None
    """``{"tool", "args", "status": "success", "data"}`` or ``{..., "status": "error", "message",
    "code", "field"}``: the result of the last action."""
    agent_scratchpad: Scratchpad = Field(default_factory=Scratchpad)
    human_feedback: HumanFeedback | None = None
    requires_agency_review: bool = False
    review_draft: str | None = None
    """The email the pending agency review shows (an ``ask_customer`` plan's), what its edit
    is compared with."""
    memory_updates: list[str] = Field(default_factory=empty_list)
    """What the agency's decisions taught the mailbox's drafts (``namespace@version``)."""
    awaiting_customer_reply: bool = False
    seen_reply_ids: list[str] = Field(default_factory=empty_list)
    end_reason: str | None = None
    screen: ScreenReport | None = None
    """What the safety screen found in the first email (the planner node's ``safety_screen``)."""

"""The planner's guards (``inboxflow.engine.guards``): rules its plans keep whatever the model says.

| guard                 | node    | rule                                                        |
|-----------------------|---------|-------------------------------------------------------------|
| ``safety_screen``     | planner | the safety screen (:mod:`..screen`) reads the first email   |
| ``not_a_quote``       | planner | a claim, a cover change, a cancellation or a billing        |
|                       |         | question goes to the agency (``request_human_review``) with |
|                       |         | the reason, never a questionnaire (:mod:`.request_kind`);   |
|                       |         | so does anything the screen found, or mail it could not read|
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...engine.guards import Verdict
from ...engine.step import Step
from ..screen import ScreenReport, screen_of, screened
from .cues import FRAME_LANGUAGES
from .request_kind import not_a_quote
from .state import PlannedTool, PlannerState

if TYPE_CHECKING:
    from ...engine.context import NodeContext


def safety_screen(state: PlannerState, step: Step, ctx: NodeContext) -> Verdict | None:
    """The safety screen reads each of the customer's emails once: the first when the trace
    starts, then each reply that resumes it (the reports joined: a claim in a reply goes to the
    agency as one in the first email does)."""
    email = state.email
    sender = str((email.get("sender") or {}).get("address", ""))
    customer = [m for m in state.messages if m.role == "customer"]
    if state.screen is None or len(customer) <= 1:
        text = str(email.get("body_text", ""))
        read = {"sender": sender, "subject": str(email.get("subject", "")), "text": text}
    else:
        read = {"sender": sender, "subject": "(a reply)", "text": customer[-1].content}
    return screened(step, ctx, read, FRAME_LANGUAGES, state.screen, max(1, len(customer)))


def _screen_reason(report: ScreenReport | None) -> str | None:
    """Why the screen sends the request to the agency (anything found, or mail it could not
    read: the offline planner reads only what its frames cover), or None."""
    if report is None or not (report.needs_person or report.findings):
        return None
    return report.explain()


def not_a_quote_goes_to_the_agency(
    state: PlannerState, step: Step, ctx: NodeContext
) -> Verdict | None:
    """Before a quote is opened, a first email that is a claim, a cover change, a cancellation
    or a billing question is handed to the agency: whatever the model planned (ask for the
    quote's fields, open the quote, wait, finish). So is an email the safety screen has just
    found a risk in (or could not read), a customer's reply included, quote or no quote."""
    before_quote = state.quote_session is None and bool(state.messages)
    just_screened = step.update.get("screen") is not None
    if not (before_quote or just_screened):
        return None
    planned = step.update.get("planned_tool_inputs")
    if isinstance(planned, PlannedTool) and planned.tool_name == "request_human_review":
        return None
    first = next((m for m in state.messages if m.role == "customer"), None)
    cue = not_a_quote(first.content) if first is not None and before_quote else None
    screen = _screen_reason(screen_of(state.screen, step))
    if cue is not None:
        reason = f"not a quote request ({cue}): the agency takes it"
    elif screen is not None:
        reason = f"{screen}: the agency takes it"
    else:
        return None
    plan = PlannedTool(tool_name="request_human_review", args={"reason": reason})
    update: dict[str, object] = {
        **step.update,
        "planned_tool_inputs": plan,
        "requires_agency_review": False,
        "awaiting_customer_reply": False,
    }
    update.pop("end_reason", None)
    was = planned.tool_name if isinstance(planned, PlannedTool) else step.goto
    return Verdict(Step(update=update, goto="tools"), f"{reason}; the model planned {was}")

"""agency_review: the agency approves, edits or rejects the planned action.

| node      | agency_review                                                           |
|-----------|-------------------------------------------------------------------------|
| inputs    | planned_tool_inputs, ``ctx.resume`` (the agency's decision)              |
| pause     | ``agency_review``: approve / edit the inputs (JSON) / reject + comment   |
| outputs   | approve: requires_agency_review False (the plan stays, as approved)      |
|           | edit, reject: human_feedback, planned_tool_inputs cleared               |
| routes    | -> itself (paused; an edit that is not a JSON object asks again) ;       |
|           | approve -> tools ; edit, reject -> planner                              |

Approve runs exactly the approved inputs: the runtime admits only a decision
carrying the hash of the payload the agency saw, and the plan in the state
cannot change while the trace waits.
"""

from __future__ import annotations

import json
from typing import Any

from ....engine.context import NodeContext
from ....engine.step import Pause, Step
from ....errors import NodeFailed
from ..pauses import AGENCY_REVIEW
from ..review_policy import review_reasons
from ..settings import planner_settings
from ..state import HumanFeedback, PlannedTool, PlannerState


def review_payload(plan: PlannedTool) -> dict[str, str]:
    """What the agency decides on: the tool and its inputs as editable JSON."""
    return {"tool": plan.tool_name, "inputs": json.dumps(plan.args, indent=2, sort_keys=True)}


def agency_review(state: PlannerState, ctx: NodeContext) -> Step:
    """Pause for the agency (first run), or act on its decision (resumed)."""
    plan = state.planned_tool_inputs
    if plan is None:
        raise NodeFailed("agency_review needs a planned action")
    if ctx.resume is None:
        return Step(goto=_pause(state, plan, ctx))
    decision = str(ctx.resume.get("decision", ""))
    reviewer = ctx.resume.get("reviewer")
    comment = ctx.resume.get("comment")
    if decision == "approve":  # the runtime checked the decision carries this pause's hash
        return Step(update={"requires_agency_review": False}, goto="tools")
    if decision == "edit":
        edited, problem = _edited_inputs(ctx.resume.get("payload"))
        if edited is None:  # nothing to replan from: the same plan goes back to the agency
            return Step(goto=_pause(state, plan, ctx, problem))
        feedback = HumanFeedback(
            comment=comment, edited_inputs=edited, tool_name=plan.tool_name, reviewer=reviewer
        )
    elif decision == "reject":
        feedback = HumanFeedback(comment=comment, tool_name=plan.tool_name, reviewer=reviewer)
    else:
        raise NodeFailed(f"agency_review expects approve, edit or reject, not {decision!r}")
    update: dict[str, Any] = {
        "human_feedback": feedback,
        "planned_tool_inputs": None,
        "requires_agency_review": False,
    }
    return Step(update=update, goto="planner")


def _pause(
    state: PlannerState, plan: PlannedTool, ctx: NodeContext, problem: str | None = None
) -> Pause:
    settings = planner_settings(ctx.ports)
    email = state.email
    reasons = state.agent_scratchpad.review_reasons or review_reasons(
        plan.tool_name, False, settings.review_tools, False
    )
    notes = state.agent_scratchpad.notes
    conversation = "\n\n".join(
        f"[{m.role}] {m.content}" for m in state.messages[-6:] if m.role != "tool"
    )
    return Pause(
        kind=AGENCY_REVIEW.name,
        payload=review_payload(plan),
        resume_node="agency_review",
        reviewers=tuple(settings.reviewers) or (str(email["mailbox"]),),
        deadline_s=settings.review_deadline_s,
        on_timeout="needs_review",
        context={
            "mailbox": email["mailbox"],
            "sender": email["sender"]["address"],
            "subject": email.get("subject", ""),
            "received_at": str(email.get("received_at", "")),
            "email_text": conversation[-4000:] or str(email.get("body_text", ""))[:4000],
            "reasons": [
                *([f"your last edit was refused: {problem}"] if problem else []),
                *reasons,
                *([f"planner: {notes[-1]}"] if notes else []),
            ],
            "tool": plan.tool_name,
        },
    )


def _edited_inputs(payload: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The edited inputs as an object, or None and why not (shown when it asks again)."""
    if not isinstance(payload, dict):
        return None, "the edit carried no inputs"
    try:
        value = json.loads(str(payload.get("inputs", "")))
    except json.JSONDecodeError as exc:
        return None, f"the edited inputs are not valid JSON ({exc.msg})"
    if not isinstance(value, dict):
        return None, "the edited inputs must be a JSON object"
    return value, None

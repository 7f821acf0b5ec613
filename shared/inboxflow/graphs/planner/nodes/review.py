"""agency_review: the agency approves, edits or rejects the planned action.

| node      | agency_review                                                           |
|-----------|-------------------------------------------------------------------------|
| inputs    | planned_tool_inputs, ``ctx.resume`` (the agency's decision)              |
| pause     | ``agency_review``: approve / edit the inputs (JSON) / reject + comment;  |
|           | an ``ask_customer`` plan also shows its email (``draft``)                |
| outputs   | approve: requires_agency_review False (the plan stays, as approved)      |
|           | edit, reject: human_feedback, planned_tool_inputs cleared; an edited     |
|           | email or a comment on one teaches the drafts (memory_updates)           |
| LLM task  | ``update_response_preferences`` (:mod:`...reply_learning`)              |
| routes    | -> itself (paused; an edit that is not a JSON object asks again) ;       |
|           | approve -> tools ; edit, reject -> planner                              |

Approve runs exactly the approved inputs: the runtime admits only a decision
carrying the hash of the payload the agency saw, and the plan in the state
cannot change while the trace waits.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ....engine.context import NodeContext
from ....engine.step import Pause, Step
from ....errors import NodeFailed
from ...reply_learning import learn_from_review
from ..conversation import thread_of
from ..pauses import AGENCY_REVIEW
from ..review_policy import review_reasons
from ..settings import planner_settings
from ..state import HumanFeedback, PlannedTool, PlannerState
from ..tools import AskCustomerParams, question_draft


def review_payload(plan: PlannedTool, draft: str | None = None) -> dict[str, str]:
    """What the agency decides on: the tool and its inputs as editable JSON (and the email
    the plan writes, when it writes one)."""
    payload = {"tool": plan.tool_name, "inputs": json.dumps(plan.args, indent=2, sort_keys=True)}
    return payload if draft is None else {**payload, "draft": draft}


def email_draft(state: PlannerState, plan: PlannedTool, ctx: NodeContext) -> str | None:
    """The email an ``ask_customer`` plan writes, as the customer would read it (None for
    another tool, or inputs the tool refuses)."""
    if plan.tool_name != "ask_customer":
        return None
    try:
        params = AskCustomerParams.model_validate(plan.args)
    except ValidationError:
        return None
    return question_draft(ctx, thread_of(state), params)


def agency_review(state: PlannerState, ctx: NodeContext) -> Step:
    """Pause for the agency (first run), or act on its decision (resumed)."""
    plan = state.planned_tool_inputs
    if plan is None:
        raise NodeFailed("agency_review needs a planned action")
    if ctx.resume is None:
        draft = email_draft(state, plan, ctx)
        return Step(update={"review_draft": draft}, goto=_pause(state, plan, ctx, draft))
    decision = str(ctx.resume.get("decision", ""))
    reviewer = ctx.resume.get("reviewer")
    comment = ctx.resume.get("comment")
    learned = _learn(state, ctx, decision) if decision in ("edit", "reject") else []
    if decision == "approve":  # the runtime checked the decision carries this pause's hash
        return Step(update={"requires_agency_review": False, "review_draft": None}, goto="tools")
    if decision == "edit":
        edited, problem = _edited_inputs(ctx.resume.get("payload"))
        if edited is None:  # nothing to replan from: the same plan goes back to the agency
            learnt = {"memory_updates": [*state.memory_updates, *learned]}
            return Step(update=learnt, goto=_pause(state, plan, ctx, state.review_draft, problem))
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
        "review_draft": None,
        "memory_updates": [*state.memory_updates, *learned],
    }
    return Step(update=update, goto="planner")


def _learn(state: PlannerState, ctx: NodeContext, decision: str) -> list[str]:
    """What the agency's edit of the email (``draft``) or comment teaches the mailbox's
    drafts (:func:`~inboxflow.graphs.reply_learning.learn_from_review`); a plan that
    writes no email teaches nothing."""
    assert ctx.resume is not None
    shown = state.review_draft
    if shown is None:
        return []
    payload = ctx.resume.get("payload") if decision == "edit" else None
    edited = payload.get("draft") if isinstance(payload, dict) else None
    return learn_from_review(
        ctx,
        str(state.email["mailbox"]),
        f"agency_review:{decision}",
        shown,
        str(edited) if edited else None,
        comment=ctx.resume.get("comment"),
        first_name=thread_of(state).first_name,
        name=str((state.email.get("sender") or {}).get("name") or ""),
    )


def _pause(
    state: PlannerState,
    plan: PlannedTool,
    ctx: NodeContext,
    draft: str | None,
    problem: str | None = None,
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
        payload=review_payload(plan, draft),
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

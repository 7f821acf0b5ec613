"""planner: read the whole state, decide the next action, and whether the agency reviews it.

| node     | planner                                                                    |
|----------|----------------------------------------------------------------------------|
| inputs   | messages (+ replies queued by ingest), customer_info, quote_session,       |
|          | last_tool_outputs, human_feedback (first), the scratchpad                   |
| outputs  | messages, seen_reply_ids, customer_info, planned_tool_inputs,              |
|          | requires_agency_review, awaiting_customer_reply; human_feedback cleared     |
| LLM task | planner_next_action (structured: PlannerDecision)                          |
| policy   | values the agency's rejection names or the quoting service refused are     |
|          | marked wrong before the model reads the state, and stay so; the model's    |
|          | customer_info is merged into what is known through the field checks        |
|          | (``extract.merged``: a VIN failing its check digit is refused)             |
| routes   | -> tools ; -> agency_review (policy or model) ; -> wait_customer ; -> END  |

The review policy holds whatever the model says: every ``ask_customer`` and
every ``get_rate`` is reviewed, and so are the tools the settings list,
any plan made from the agency's feedback, and mail to a customer the no-relay
rule does not let out on its own (``bindings.relay_refusal``: the customer is
neither the authenticated sender nor an address the mailbox has written to).

A follow-up: the first step of a trace started by a customer's reply in the
thread of a finished planner trace (the quote's summary was sent, or the
agency took it over) takes that trace's conversation, customer info and quote,
adds the reply, and hands it to the agency (``request_human_review``): what a
customer says after the summary (accept, a change, a question) is for a person.
"""

from __future__ import annotations

import json
from functools import cache

from ....engine.context import NodeContext
from ....engine.step import END, Step
from ....mail import Email
from ....mail.addresses import same_address
from ....ports.checkpoint import Checkpoint
from ...kit import unreviewed_send_refusal
from ..conversation import finished_before, queued_replies, take_replies
from ..extract import merged, reject
from ..review_policy import MAILS_THE_CUSTOMER, rejections, review_reasons
from ..settings import planner_settings
from ..state import (
    TOOL_NAMES,
    PlannedTool,
    PlannerState,
    Scratchpad,
)
from ..tasks import PLAN_TASK, PlannerDecision
from ..tools import PLANNER_TOOLS

MAX_NOTES = 20
MAX_MESSAGES_SHOWN = 30


@cache
def _tool_specs() -> str:
    return json.dumps(PLANNER_TOOLS.specs(), sort_keys=True)


def planner(state: PlannerState, ctx: NodeContext) -> Step:
    """Take queued replies, ask the model for the next action, apply the review policy."""
    settings = planner_settings(ctx.ports)
    messages, seen = take_replies(state, queued_replies(ctx.store, ctx.trace_id))
    scratchpad = state.agent_scratchpad.model_copy(deep=True)
    scratchpad.plans += 1
    update: dict[str, object] = {
        "messages": messages,
        "seen_reply_ids": seen,
        "human_feedback": None,
        "planned_tool_inputs": None,
        "requires_agency_review": False,
        "awaiting_customer_reply": False,
    }
    if scratchpad.plans == 1:
        previous = finished_before(state, ctx.store, ctx.ports.checkpoints, ctx.trace_id, ctx.graph)
        if previous is not None:
            return _follow_up(state, previous, update, scratchpad)
    if scratchpad.plans > settings.max_plans:
        reason = f"{settings.max_plans} planning steps without finishing"
        plan = PlannedTool(tool_name="request_human_review", args={"reason": reason})
        scratchpad.notes = [*scratchpad.notes, reason][-MAX_NOTES:]
        return Step(
            update={**update, "planned_tool_inputs": plan, "agent_scratchpad": scratchpad},
            goto="tools",
        )
    feedback = state.human_feedback.model_dump() if state.human_feedback else None
    known = reject(state.customer_info, rejections(feedback, state.last_tool_outputs))
    view = {
        "sender": state.email["sender"]["address"],
        "goal": state.goal,
        "messages": [m.model_dump() for m in messages[-MAX_MESSAGES_SHOWN:]],
        "customer_info": known.model_dump(),
        "quote_session": state.quote_session.model_dump() if state.quote_session else None,
        "last_tool_outputs": state.last_tool_outputs,
        "human_feedback": feedback,
        "failures": scratchpad.failures,
        "max_tool_attempts": settings.max_tool_attempts,
    }
    decision = ctx.generate(
        PLAN_TASK, {"state": json.dumps(view, sort_keys=True), "tools": _tool_specs()}
    )
    info = merged(known, decision.customer_info)
    scratchpad.notes = [*scratchpad.notes, decision.reasoning][-MAX_NOTES:]
    update.update(customer_info=info, agent_scratchpad=scratchpad)
    if decision.action == "finish":
        return Step(update={**update, "end_reason": decision.reasoning}, goto=END)
    if decision.action == "wait_customer":
        return Step(update={**update, "awaiting_customer_reply": True}, goto="wait_customer")
    plan = _plan(decision)
    reasons = review_reasons(
        plan.tool_name,
        decision.request_review,
        settings.review_tools,
        after_feedback=state.human_feedback is not None,
    )
    if plan.tool_name in MAILS_THE_CUSTOMER and not reasons:
        email = Email.model_validate(state.email)
        # This node does not read the mailbox: "written to" is what the conversation shows
        # (a message of ours to the customer, each one sent to the bound customer).
        wrote = any(m.role == "agent" for m in state.messages)
        customer = email.sender.address
        if relay := unreviewed_send_refusal(
            ctx, customer, email, lambda a: wrote and same_address(a, customer)
        ):
            reasons.append(relay)
    scratchpad.review_reasons = reasons
    update.update(planned_tool_inputs=plan, requires_agency_review=bool(reasons))
    return Step(update=update, goto="agency_review" if reasons else "tools")


def _follow_up(
    state: PlannerState, previous: Checkpoint, update: dict[str, object], scratchpad: Scratchpad
) -> Step:
    """Carry the finished trace's context into this one and hand it to the agency."""
    before = PlannerState.model_validate(previous.state)
    messages = [*before.messages, *update["messages"]]  # type: ignore[misc]
    seen = list(dict.fromkeys([*before.seen_reply_ids, *update["seen_reply_ids"]]))  # type: ignore[misc]
    reason = (
        f"the customer replied in the thread after trace {previous.trace_id} ended "
        f"({previous.status}): a person takes it from here"
    )
    scratchpad.notes = [*before.agent_scratchpad.notes, reason][-MAX_NOTES:]
    plan = PlannedTool(tool_name="request_human_review", args={"reason": reason})
    return Step(
        update={
            **update,
            "messages": messages,
            "seen_reply_ids": seen,
            "customer_info": before.customer_info,
            "quote_session": before.quote_session,
            "planned_tool_inputs": plan,
            "agent_scratchpad": scratchpad,
        },
        goto="tools",
    )


def _plan(decision: PlannerDecision) -> PlannedTool:
    """The decision's tool call; a tool the graph does not have becomes a human review."""
    if decision.tool_name not in TOOL_NAMES:
        return PlannedTool(
            tool_name="request_human_review",
            args={"reason": f"the planner chose an unknown tool {decision.tool_name!r}"},
        )
    return PlannedTool.model_validate({"tool_name": decision.tool_name, "args": decision.args()})

"""tools: run the planned action, record its result in the status contract, clear the plan.

| node     | tools                                                                      |
|----------|----------------------------------------------------------------------------|
| inputs   | planned_tool_inputs (reviewed when the policy said so)                     |
| outputs  | last_tool_outputs ``{tool, args, status: success, data}`` or               |
|          | ``{tool, args, status: error, message, code, field, retryable}``;          |
|          | planned_tool_inputs cleared; quote_session and messages as the tool changed |
| routes   | -> planner ; request_human_review ends the trace ``needs_review``           |

``request_human_review`` ends the trace rather than pausing: nothing a reviewer
could click would let the planner go on by itself; a human takes the thread
over. The reviewers are told (once) and the trace's error says why, so
``inboxflow traces --status needs_review`` lists it.

The tools are bound (``bound_to``) to the customer who wrote, the quote this
conversation opened and the agency's reviewers. A plan naming anything else
(another customer's quote, say) is refused by the runtime, even after the
agency approved it: nothing is written and the trace ends ``needs_review``
with the refusal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from ....engine.bindings import Bound, bound_addresses
from ....engine.context import NodeContext
from ....engine.step import Step
from ....errors import NodeFailed
from ..conversation import thread_of
from ..settings import planner_settings
from ..state import Message, PlannerState, QuoteProgress
from ..tools import AGENCY, CUSTOMER, PLANNER_TOOLS, THIS_QUOTE, failure


class HumanReviewRequested(NodeFailed):
    """The planner handed the conversation to the agency: the trace ends ``needs_review``."""


def tools(state: PlannerState, ctx: NodeContext) -> Step:
    """Run the plan (exactly as planned, or as the agency approved it)."""
    plan = state.planned_tool_inputs
    if plan is None:
        raise NodeFailed("tools needs a planned action")
    if state.requires_agency_review:
        raise NodeFailed(f"the planned {plan.tool_name} waits for the agency's review")
    name, args = plan.tool_name, dict(plan.args)
    result = _run(ctx, state, name, args)
    output = {"tool": name, "args": args, **result}
    scratchpad = state.agent_scratchpad.model_copy(deep=True)
    failed = result["status"] == "error"
    scratchpad.failures[name] = scratchpad.failures.get(name, 0) + 1 if failed else 0
    update: dict[str, Any] = {
        "last_tool_outputs": output,
        "planned_tool_inputs": None,
        "agent_scratchpad": scratchpad,
    }
    messages = list(state.messages)
    messages.append(Message(role="tool", content=_short(output), at=ctx.clock.now(), ref=name))
    data = result.get("data") if not failed else None
    if isinstance(data, dict):
        update.update(_progress(state, name, data, scratchpad))
        if name in ("ask_customer", "prepare_final_summary"):
            messages.append(
                Message(
                    role="agent",
                    content=str(data.get("body", "")),
                    at=ctx.clock.now(),
                    ref=str(data.get("message_id") or ""),
                )
            )
    update["messages"] = messages
    if name == "request_human_review":  # told or not, the trace stops here
        told = "" if not failed else f" (the agency could not be told: {result.get('message')})"
        raise HumanReviewRequested(
            f"human review requested by the planner: {args.get('reason')}{told}"
        )
    return Step(update=update, goto="planner")


def _run(ctx: NodeContext, state: PlannerState, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One call through ``ctx.call_tool`` (recorded on the step), its result in the contract."""
    try:
        PLANNER_TOOLS.parse(name, args)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else None
        return failure(f"invalid {field}: {error['msg']}", "invalid_input", field)
    thread = thread_of(state)
    tool_ctx = replace(
        ctx,
        subject=thread,
        bound=bound_to(state, planner_settings(ctx.ports).reviewers),
    )
    result = tool_ctx.call_tool(name, args)
    if result.get("status") in ("success", "error"):
        return result
    return failure(str(result.get("error") or result), "unexpected")


def bound_to(state: PlannerState, reviewers: list[str]) -> Bound:
    """Who the planner's tools are bound to in this conversation.

    Args:
        state: the trace's state (its email and the quote it opened).
        reviewers: the agency's reviewers from the settings (default: the mailbox).
    """
    sender, mailbox = state.email["sender"]["address"], state.email["mailbox"]
    quote = state.quote_session
    return {
        CUSTOMER.subject: bound_addresses(sender),
        THIS_QUOTE.subject: (quote.quote_id,) if quote is not None else (),
        AGENCY.subject: bound_addresses(*reviewers) or bound_addresses(mailbox),
    }


def _progress(
    state: PlannerState, name: str, data: dict[str, Any], scratchpad: Any
) -> dict[str, Any]:
    """What a successful call changes beyond its output: the quote's progress, what was asked."""
    quote = state.quote_session
    if name == "quote_initiate":
        return {"quote_session": QuoteProgress(**data)}
    if quote is not None and name in ("add_driver", "add_vehicle"):
        counts = {
            "drivers": len(data.get("drivers", [])),
            "vehicles": len(data.get("vehicles", [])),
        }
        return {"quote_session": quote.model_copy(update=counts)}
    if quote is not None and name == "get_rate":
        return {"quote_session": quote.model_copy(update={"rate": data})}
    if name == "ask_customer":
        scratchpad.asked = list(data.get("fields", []))
        scratchpad.reminders_sent = 0
        scratchpad.wait_deadline_at = None
    return {}


def _short(output: dict[str, Any]) -> str:
    if output["status"] == "success":
        return f"{output['tool']}: success"
    return f"{output['tool']}: error {output.get('code')}: {output.get('message')}"

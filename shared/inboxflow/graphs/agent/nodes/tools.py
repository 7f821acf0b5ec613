"""agent_tools: run the tool calls of the last turn, in order.

| node     | agent_tools                                                               |
|----------|---------------------------------------------------------------------------|
| inputs   | pending_calls, profile, inquiry, reply                                    |
| outputs  | messages (+ one tool result per call), tool_log, reply, status            |
| routes   | -> agent_turn ; -> finish (escalated, or max_iterations reached)          |

Only the profile's tools can be called (another name is an ``{"error": ...}``
result). Arguments that are not a JSON object become ``{}``. A tool raising
gives ``{"error": "<message>"}`` and the loop goes on. Side-effecting tools
write through the effect journal under ``{tool}#{index}`` (replies under
``reply``), so a redelivered step never repeats one.

The writing tools are bound to the person who asked (``requester``: the
inquiry's ``reply_to``; never the helpdesk that forwarded it nor the mailbox
itself). A call outside that binding is refused by the runtime: nothing is
written, the rest of the batch is dropped and the run escalates (``finish``
tells the reviewers; the trace ends ``needs_review`` with the refusal).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ....engine.bindings import BindingRefused, Bound, bound_addresses
from ....engine.context import NodeContext
from ....engine.step import Step
from ....mail import Email
from ....mail.forwarded import auto_forwarded_by
from ..state import AgentState, ToolLogEntry
from ..tools.common import REQUESTER
from ..tools.view import AgentView

REPLY_TOOLS = frozenset({"send_reply", "create_draft"})


def parse_arguments(arguments_json: str) -> dict[str, Any]:
    """The call's arguments; anything but a JSON object is ``{}``."""
    try:
        value = json.loads(arguments_json or "{}")
    except (json.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def bound_to(state: AgentState) -> Bound:
    """Who the run's writing tools are bound to: the inquiry's ``reply_to``, one address.

    Never the helpdesk address that forwarded the inquiry, nor the mailbox itself, nor
    any other address of their domains: a chat visitor who types ``admin@`` our own
    domain as their address is not one of us, and the reply would reach our own
    inboxes. When the profile's preprocessor fell back to ``default`` (a look-alike of
    Crisp's mail, or the shop's own web-form mail), the email's sender is the
    forwarding address, not the person who asked: only a distinct ``Reply-To`` is
    bound then; unless a helpdesk address auto-forwarded it (Gmail's ``X-Forwarded-For``,
    :func:`~inboxflow.mail.forwarded.auto_forwarded_by`): such a mail arrives From the
    person who wrote it, and the reply goes to them.
    """
    inquiry = state.inquiry
    if inquiry is None:
        return {}
    email = Email.model_validate(state.email)
    ours = bound_addresses(inquiry.via, email.mailbox, *state.profile.helpdesk)
    others = set(ours)
    auto_forwarded = any(auto_forwarded_by(email, helpdesk) for helpdesk in state.profile.helpdesk)
    if inquiry.preprocessor != state.profile.preprocessor and not auto_forwarded:
        others.update(bound_addresses(email.sender.address))
    own_domains = {address.rpartition("@")[2] for address in ours}
    requester = tuple(
        a
        for a in bound_addresses(inquiry.reply_to)
        if a not in others and a.rpartition("@")[2] not in own_domains
    )
    return {REQUESTER: requester[:1] if len(requester) == 1 else ()}


def agent_tools(state: AgentState, ctx: NodeContext) -> Step:
    """Run the pending calls; feed each result back to the conversation."""
    view = AgentView(state)
    tool_ctx = replace(
        ctx,
        tools=ctx.tools.only([t for t in state.profile.tools if t in ctx.tools]),
        subject=view,
        bound=bound_to(state),
    )
    messages = list(state.messages)
    log = list(state.tool_log)
    reply = state.reply
    escalation: str | None = None
    refused: str | None = None
    for index, call in enumerate(state.pending_calls):
        view.call_index = index
        arguments = parse_arguments(call.get("arguments_json", ""))
        try:
            result = tool_ctx.call_tool(call["name"], arguments)
        except BindingRefused as exc:
            result = {"error": str(exc), "refused": True}
            refused = escalation = f"the runtime {exc}"
        if call["name"] in REPLY_TOOLS and "error" not in result and reply is None:
            reply = {**result, "tool": call["name"]}
            view.state = view.state.model_copy(update={"reply": reply})
        if call["name"] == "escalate" and result.get("escalated"):
            escalation = str(result.get("reason") or "escalated")
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call.get("id", ""),
                "name": call["name"],
                "content": json.dumps(result, ensure_ascii=False, default=str),
            }
        )
        log.append(
            ToolLogEntry(
                tool=call["name"],
                arguments=arguments,
                result=result,
                iteration=state.iteration,
                call_id=call.get("id", ""),
            )
        )
        if refused is not None:
            break
    update: dict[str, Any] = {
        "messages": messages,
        "tool_log": log,
        "pending_calls": [],
        "reply": reply,
    }
    if escalation is not None:
        update.update(status="escalated", escalation=escalation)
        return Step(update=update, goto="finish")
    if state.iteration >= state.profile.max_iterations:
        update["status"] = "max_iterations"
        return Step(update=update, goto="finish")
    return Step(update=update, goto="agent_turn")

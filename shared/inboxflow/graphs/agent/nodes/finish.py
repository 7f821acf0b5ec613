"""finish: record the run (audit) and end the trace.

| node     | finish                                                                   |
|----------|--------------------------------------------------------------------------|
| inputs   | status, final_message, error, escalation, tool_log                       |
| outputs  | ``agent_runs/{trace_id}``, ``email_events/{trace_id}``; reviewer emails  |
| routes   | -> END: ``done`` (completed); ``needs_review`` otherwise, with the reason |

``escalated`` notifies the profile's reviewers (default: the mailbox) once,
through the effect journal. ``error`` and ``max_iterations`` end
``needs_review`` too: a human picks up where the agent stopped.
"""

from __future__ import annotations

from ....engine.context import NodeContext
from ....engine.step import END, Step
from ....errors import NodeFailed
from ....mail import Email
from ....notices import notify_once
from ..audit import record_run
from ..state import AgentState


def finish(state: AgentState, ctx: NodeContext) -> Step:
    """Write the audit records; end ``done`` or (by failing the step) ``needs_review``."""
    record_run(ctx, state)
    if state.status == "completed":
        return Step(goto=END)
    if state.status == "escalated":
        _notify(state, ctx)
        raise NodeFailed(f"escalated by the agent: {state.escalation}")
    if state.status == "max_iterations":
        raise NodeFailed(
            f"agent stopped after {state.iteration} turns (max_iterations "
            f"{state.profile.max_iterations}) without a final answer"
        )
    raise NodeFailed(f"agent error: {state.error or state.status}")


def _notify(state: AgentState, ctx: NodeContext) -> None:
    approvals = ctx.ports.approvals
    notifier = getattr(approvals, "notifier", None)
    if notifier is None:
        return
    email = Email.model_validate(state.email)
    reviewers = state.profile.reviewers or [email.mailbox]
    inquiry = state.inquiry
    who = inquiry.sender_email if inquiry else email.sender.address
    subject = f"[escalated] {email.subject}"
    text = (
        f"The {state.profile.name} agent handed over an email from {who}.\n\n"
        f"Reason: {state.escalation}\n\nTrace: {ctx.trace_id}\n\n{inquiry.text if inquiry else ''}"
    )
    notify_once(ctx, notifier, reviewers, subject, text, "escalate_notify#{index}", email.mailbox)

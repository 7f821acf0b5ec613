"""wait_customer: pause until the customer answers in the thread; remind once, then give up.

| node     | wait_customer                                                              |
|----------|----------------------------------------------------------------------------|
| inputs   | ``ctx.resume``: the customer's reply (ingest: ``decision: reply``, the     |
|          | email in ``payload``) or the deadline (``decision: no_reply``)             |
| pause    | ``customer_reply``, no reviewer; deadline N days (``reminder_after_days``), |
|          | then after the reminder until M days (``give_up_after_days``)             |
| outputs  | messages + the reply (quotes stripped), seen_reply_ids,                   |
|          | awaiting_customer_reply False                                             |
| routes   | -> itself (paused, or paused again) ; -> planner                           |

The first deadline resumes this node with ``no_reply`` (the timeout policy
``reject`` takes the kind's ``danger`` choice): the reminder is sent in the
thread once, and the trace waits again until M days; that second deadline's
policy is ``needs_review`` (the approval service ends the trace). A reply
already taken (a duplicate, or one ingest also queued) resumes nothing: the
trace waits on. A reply queued while the trace was about to pause is taken
before pausing and when a deadline fires.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ....engine.context import NodeContext
from ....engine.step import Pause, Step
from ....engine.waits import approval_id_for, approval_path
from ....errors import NodeFailed
from ....mail import reply_subject
from ....ports.documents import Transaction
from ..conversation import queued_replies, reply_id, take_replies, thread_of
from ..extract import FIELD_LABELS
from ..pauses import CUSTOMER_REPLY
from ..settings import DAY_S, planner_settings
from ..state import Message, PlannerState
from ..tools import _send
from .tools import bound_to

REPLY = "reply"
NO_REPLY = "no_reply"


def wait_customer(state: PlannerState, ctx: NodeContext) -> Step:
    """Pause for the customer, or take their reply, or remind them, or wait on."""
    settings = planner_settings(ctx.ports)
    scratchpad = state.agent_scratchpad.model_copy(deep=True)
    now = ctx.clock.now()
    if scratchpad.wait_deadline_at is None:
        scratchpad.wait_deadline_at = now + settings.give_up_after_days * DAY_S
    messages, seen = take_replies(state, queued_replies(ctx.store, ctx.trace_id))
    decision = str(ctx.resume.get("decision", "")) if ctx.resume else None
    if decision == REPLY:
        email = (ctx.resume or {}).get("payload", {}).get("email")
        if not isinstance(email, dict):
            raise NodeFailed("a customer reply resumes wait_customer with the email in its payload")
        _close_wait(ctx, str((ctx.resume or {}).get("reviewer") or email.get("sender", "")))
        if reply_id(email) not in seen:
            messages, seen = take_replies(
                state.model_copy(update={"messages": messages, "seen_reply_ids": seen}), [email]
            )
    elif decision not in (None, NO_REPLY):
        raise NodeFailed(f"wait_customer expects reply or no_reply, not {decision!r}")
    taken = len(seen) > len(state.seen_reply_ids)
    update: dict[str, Any] = {"agent_scratchpad": scratchpad}
    if taken:
        scratchpad.wait_deadline_at = None
        update.update(messages=messages, seen_reply_ids=seen, awaiting_customer_reply=False)
        return Step(update=update, goto="planner")
    if decision == NO_REPLY and scratchpad.reminders_sent == 0:
        reminded = _remind(state, ctx, scratchpad.asked)
        scratchpad.reminders_sent = 1
        update["messages"] = [
            *state.messages,
            Message(role="agent", content=reminded, at=now, ref="reminder"),
        ]
    return Step(update=update, goto=_pause(state, ctx, scratchpad))


def _pause(state: PlannerState, ctx: NodeContext, scratchpad: Any) -> Pause:
    """The wait: until the reminder (first), then until the give-up deadline."""
    settings = planner_settings(ctx.ports)
    now = ctx.clock.now()
    deadline_at = float(scratchpad.wait_deadline_at)
    if scratchpad.reminders_sent == 0:
        remind_at = (
            deadline_at - (settings.give_up_after_days - settings.reminder_after_days) * DAY_S
        )
        deadline_s, on_timeout = max(remind_at - now, 1.0), "reject"
    else:
        deadline_s, on_timeout = max(deadline_at - now, 1.0), "needs_review"
    email = state.email
    return Pause(
        kind=CUSTOMER_REPLY.name,
        payload={"asked": [FIELD_LABELS.get(name, name) for name in scratchpad.asked]},
        resume_node="wait_customer",
        reviewers=(),
        deadline_s=deadline_s,
        on_timeout=on_timeout,  # type: ignore[arg-type]
        context={
            "mailbox": email["mailbox"],
            "sender": email["sender"]["address"],
            "subject": email.get("subject", ""),
            "thread_id": email.get("thread_id", ""),
            "reminders_sent": scratchpad.reminders_sent,
        },
    )


def _remind(state: PlannerState, ctx: NodeContext, asked: list[str]) -> str:
    """Send the reminder in the thread, once; returns its text."""
    thread = thread_of(state)
    wanted = "\n".join(f"- {FIELD_LABELS.get(name, name)}" for name in asked)
    body = (
        f"Hi {thread.first_name or 'there'},\n\n"
        "A friendly reminder: we are still waiting for a few details to prepare your car "
        f"insurance quote:\n\n{wanted or '- the details we asked for'}\n\n"
        "Just reply to this email with them.\n\nBest regards,\n"
        f"{thread.email.mailbox}"
    )
    tool_ctx = replace(
        ctx,
        subject=thread,
        bound=bound_to(state, planner_settings(ctx.ports).reviewers),
    )
    sent = _send(tool_ctx, "customer_reminder", reply_subject(thread.email.subject), body)
    if sent["status"] != "success":
        raise NodeFailed(f"the reminder could not be sent: {sent.get('message')}")
    return body


def _close_wait(ctx: NodeContext, who: str) -> None:
    """Mark the wait's approval answered, so that its deadline task does nothing later."""
    path = approval_path(approval_id_for(ctx.trace_id, ctx.step - 1))
    now = ctx.clock.now()

    def close(tx: Transaction) -> None:
        doc = tx.get(path)
        if doc is None or doc.get("status") != "pending":
            return
        tx.set(
            path,
            {
                **doc,
                "status": "decided",
                "decision": REPLY,
                "decided_by": who,
                "decided_at": now,
                "resumed_at": now,
            },
        )

    ctx.store.run_transaction(close)

"""act: carry out the triage's recommended action, exactly once; then the ticket policy.

| node     | act                                                                      |
|----------|--------------------------------------------------------------------------|
| inputs   | triage, ticket, email, ``ctx.resume`` (a reviewer's decision)            |
| outputs  | act {action, status, message_id, notified, approved_by, learned};        |
|          | end_reason                                                               |
| LLM task | ``update_response_preferences`` (a reviewer's edit or comment only)      |
| routes   | -> END; a reply that is not confident or is critical ->                  |
|          | Pause(approve_support_reply, resume_node=act)                            |

- ``auto_respond``: the reply goes out on its own only when the triage's
  confidence reaches ``auto_respond_confidence``, the urgency is not critical
  and the specialist's guard found no reason for a person (``review_reasons``:
  a demand, a complaint, a problem signal, a doubtful sender, no relevant
  article) and, with ``auto_send``, the sender is authenticated or one the
  mailbox has already written to (the no-relay rule, ``bindings.relay_refusal``);
  otherwise a reviewer approves, edits or rejects it (an edit of the reply or a
  comment teaches the mailbox's drafts: :mod:`...reply_learning`). The reply is
  written once through the effect journal (a Gmail draft, or sent with
  ``auto_send``), in the email's thread, by the ``reply_to_customer`` tool,
  bound to the customer (the sender, or the writer of a forward intake took:
  ``SupportState.customer_address``); loop protection has the last word.
  The ticket is completed (a rejected reply keeps it active).
- ``escalate_human``: each on-call reviewer is emailed the triage once; the
  ticket is completed.
- ``route_specialist``: the ticket stays active and is assigned to the
  specialist's queue (``assigned_queue``, an ``Assignment`` record); the
  queue's reviewers (``queues`` setting) are emailed once per assignment: a
  follow-up on a ticket already in that queue tells nobody again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ....engine.context import NodeContext
from ....engine.step import END, Pause, Step
from ....errors import NodeFailed
from ....mail.loop_guard import refuse_recipient
from ....notices import notify_once
from ...kit import unreviewed_send_refusal
from ...reply_learning import learn_from_review
from ..pauses import APPROVE_SUPPORT_REPLY
from ..settings import support_settings
from ..state import ActResult, SupportState
from ..tickets import Assignment, Ticket, TicketMessage, TicketStore
from ..tools import bound_to


def act(state: SupportState, ctx: NodeContext) -> Step:
    """Reply, escalate or queue, as the triage recommends."""
    triage, ref = state.triage, state.ticket
    if triage is None or ref is None:
        raise NodeFailed("act needs a triage and a ticket")
    tickets = TicketStore(ctx.store)
    ticket = tickets.get(ref.customer_id, ref.ticket_id)
    if ticket is None:
        raise NodeFailed(f"ticket {ref.key} is not in the store")
    if triage.recommended_action == "route_specialist":
        return _assign(state, ctx, tickets, ticket)
    if triage.recommended_action == "escalate_human":
        return _escalate(state, ctx, tickets, ticket)
    return _respond(state, ctx, tickets, ticket)


def _respond(state: SupportState, ctx: NodeContext, tickets: TicketStore, ticket: Ticket) -> Step:
    triage, email, ref = state.triage, state.email, state.ticket
    assert triage is not None and ref is not None
    settings = support_settings(ctx.ports)
    subject = email.subject if email.subject.lower().startswith("re:") else f"Re: {email.subject}"
    # Under the edit rules, whether it pauses or goes out (the same text both ways).
    reply = APPROVE_SUPPORT_REPLY.clean_payload(
        {"subject": subject, "reply": triage.suggested_response}
    )
    subject, body, approved_by = reply["subject"], reply["reply"], None
    learned: list[str] = []
    if ctx.resume is None:
        reasons = []
        if triage.urgency == "critical":
            reasons.append("critical tickets are always approved by a human")
        if triage.confidence < settings.auto_respond_confidence:
            reasons.append(
                f"confidence {triage.confidence:.2f} is below {settings.auto_respond_confidence:.2f}"
            )
        reasons.extend(state.review_reasons)
        customer = state.customer_address.address
        if settings.auto_send and (relay := unreviewed_send_refusal(ctx, customer, email)):
            reasons.append(relay)
        if reasons:
            return Step(goto=_review_pause(state, ctx, subject, body, reasons))
    else:
        decision = str(ctx.resume.get("decision", ""))
        reviewer = ctx.resume.get("reviewer")
        approved_by = str(reviewer) if reviewer else None
        if decision == "reject":
            learned = _learn(state, ctx, "approve_support_reply:rejected", body, None)
            result = ActResult(
                action="auto_respond", status="rejected", approved_by=approved_by, learned=learned
            )
            tickets.save(ticket.model_copy(update={"working": {"rejected_reply": body}}))
            return Step(update={"act": result}, goto=END, status="rejected")
        if decision != "approve":
            raise NodeFailed(f"approve_support_reply expects approve or reject, not {decision!r}")
        shown = body
        subject, body = _edited(ctx.resume.get("payload"), subject, body)
        learned = _learn(state, ctx, "approve_support_reply:approved", shown, body)
    to = state.customer_address.address
    refused = refuse_recipient(to, email)
    if refused:
        result = ActResult(
            action="auto_respond", status="rejected", approved_by=approved_by, learned=learned
        )
        update = {"act": result, "end_reason": f"not sent (loop protection): {refused}"}
        return Step(update=update, goto=END, status="rejected")
    tool_ctx = replace(ctx, subject=email, bound=bound_to(state.customer_address, ref.customer_id))
    outcome = tool_ctx.perform("reply_to_customer", {"to": to, "subject": subject, "body": body})
    message_id = outcome.get("id")
    done = ticket.model_copy(deep=True)
    if all(m.message_id != message_id for m in done.messages):
        done.messages.append(
            TicketMessage(
                direction="out",
                text=body,
                at=datetime.fromtimestamp(ctx.clock.now(), UTC).isoformat(),
                message_id=message_id,
            )
        )
    tickets.complete(done, "auto_respond")
    result = ActResult(
        action="auto_respond",
        status="sent" if settings.auto_send else "drafted",
        message_id=message_id,
        approved_by=approved_by,
        learned=learned,
    )
    return Step(update={"act": result}, goto=END)


def _learn(
    state: SupportState, ctx: NodeContext, event: str, shown: str, body: str | None
) -> list[str]:
    """What the reviewer's edited ``body`` (None: rejected) and comment teach the mailbox's
    drafts (:func:`~inboxflow.graphs.reply_learning.learn_from_review`)."""
    assert ctx.resume is not None
    email = state.email
    comment = ctx.resume.get("comment")
    return learn_from_review(
        ctx,
        email.mailbox,
        event,
        shown,
        body,
        comment=comment,
        first_name=state.customer_address.first_name,
        name=state.customer_address.name,
    )


def _review_pause(
    state: SupportState, ctx: NodeContext, subject: str, body: str, reasons: list[str]
) -> Pause:
    triage, email = state.triage, state.email
    assert triage is not None and state.ticket is not None
    settings = support_settings(ctx.ports)
    return Pause(
        kind=APPROVE_SUPPORT_REPLY.name,
        payload={"subject": subject, "reply": body},
        resume_node="act",
        reviewers=tuple(settings.reviewers) or (email.mailbox,),
        deadline_s=settings.approval_deadline_s,
        context={
            "mailbox": email.mailbox,
            "sender": _from_line(state),
            "subject": email.subject,
            "received_at": email.received_at.isoformat(),
            "email_text": email.body_for_model(20_000),
            "ticket": state.ticket.key,
            "customer": _customer_line(state),
            "urgency": triage.urgency,
            "confidence": triage.confidence,
            "reasons": reasons,
        },
    )


def _assign(state: SupportState, ctx: NodeContext, tickets: TicketStore, ticket: Ticket) -> Step:
    triage, email, ref = state.triage, state.email, state.ticket
    assert triage is not None and ref is not None
    queue = state.supervision.issue_type if state.supervision else "general"
    working = {"queue": queue, "triage": triage.model_dump()}
    if ticket.assigned_queue == queue and ticket.assignment is not None:
        tickets.save(ticket.model_copy(update={"working": working}))
        result = ActResult(action="route_specialist", status="queued", queue=queue)
        return Step(update={"act": result, "end_reason": f"still in the {queue} queue"})
    reviewers = support_settings(ctx.ports).queue_reviewers(queue, email.mailbox)
    notifier = _notifier(ctx, "route_specialist")
    subject = f"[{triage.urgency}] {queue} queue: ticket {ref.ticket_id}: {email.subject}"
    text = (
        f"Ticket {ref.key} is assigned to the {queue} queue.\n"
        f"Customer: {_customer_line(state)}\n"
        f"Urgency: {triage.urgency}\nWhy: {triage.reasoning}\n\n"
        f"The customer wrote:\n{email.body_for_model(8000)}\n\n"
        f"See it with: inboxflow ticket {ref.ticket_id}\n"
    )
    told = notify_once(
        ctx, notifier, reviewers, subject, text, f"assignment_notice_{queue}_{{index}}"
    )
    assignment = Assignment(
        queue=queue,
        assigned_at=datetime.fromtimestamp(ctx.clock.now(), UTC).isoformat(),
        trace_id=ctx.trace_id,
        notified=told,
    )
    tickets.save(
        ticket.model_copy(
            update={"working": working, "assigned_queue": queue, "assignment": assignment}
        )
    )
    result = ActResult(action="route_specialist", status="queued", queue=queue, notified=told)
    return Step(update={"act": result, "end_reason": f"assigned to the {queue} queue"})


def _notifier(ctx: NodeContext, action: str) -> Any:
    try:
        return ctx.ports.approvals.notifier
    except (KeyError, TypeError, AttributeError) as exc:
        raise NodeFailed(f"{action} needs the approval service's notifier") from exc


def _escalate(state: SupportState, ctx: NodeContext, tickets: TicketStore, ticket: Ticket) -> Step:
    triage, email = state.triage, state.email
    assert triage is not None and state.ticket is not None
    reviewers = support_settings(ctx.ports).reviewers or [email.mailbox]
    notifier = _notifier(ctx, "escalate_human")
    subject = f"[{triage.urgency}] support escalation {state.ticket.ticket_id}: {email.subject}"
    text = (
        f"Ticket {state.ticket.key} from {_from_line(state)} needs a human.\n"
        f"Customer: {_customer_line(state)}\n"
        f"Urgency: {triage.urgency}\nWhy: {triage.reasoning}\n\n"
        f"The customer wrote:\n{email.body_for_model(8000)}\n"
    )
    notified = notify_once(ctx, notifier, reviewers, subject, text, "escalation_notice_{index}")
    tickets.complete(ticket, "escalate_human")
    result = ActResult(action="escalate_human", status="escalated", notified=notified)
    return Step(update={"act": result}, goto=END)


def _from_line(state: SupportState) -> str:
    """Who wrote, as reviewers read it: the sender, or a forward's writer and its forwarder."""
    if state.writer is None:
        return state.email.sender.formatted()
    return f"{state.writer.formatted()} (forwarded by {state.email.sender.formatted()})"


def _customer_line(state: SupportState) -> str:
    """Who the customer is, as reviewers read it."""
    customer = state.customer
    if customer is None:
        return "-"
    if not state.customer_known:
        return f"unknown sender {customer.email} (not in the CRM; treated as a free-plan guest)"
    return f"{customer.name} ({customer.plan} plan, {customer.customer_id})"


def _edited(payload: Any, subject: str, body: str) -> tuple[str, str]:
    if payload is None:
        return subject, body
    if not isinstance(payload, Mapping):
        raise NodeFailed(f"edited payload must be an object, not {type(payload).__name__}")
    return str(payload.get("subject") or subject), str(payload.get("reply") or body)

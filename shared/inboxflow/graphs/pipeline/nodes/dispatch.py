"""dispatch: act on the draft, exactly once.

| node     | dispatch                                                                 |
|----------|--------------------------------------------------------------------------|
| inputs   | draft, review, planned_actions, ``ctx.resume`` (a reviewer's decision)   |
| outputs  | dispatch {status, action, message_id, to, subject, approved_by, edited,  |
|          | learned}, end_reason when nothing was written                            |
| LLM task | ``update_response_preferences`` (a reviewer's edit or comment only)      |
| routes   | -> END (done); a rejected draft or a refused recipient -> END (rejected) |

Reached directly from review (auto-dispatch) or by resuming a paused trace
with ``{"decision": "approve" | "reject", "payload": edited payload or None,
"reviewer": ...}``. An approval dispatches the edited payload when there is
one, else the original draft. A reviewer's edit of the message or comment
(approve or reject) teaches the mailbox's drafts (:mod:`...reply_learning`:
greeting, sign-off, notes; never by the deadline, once per step). The action is a Gmail draft unless the
settings ask for auto-send (never for a complaint), in the mailbox the email
arrived in and in its thread (In-Reply-To and References from the email's
Message-ID). It runs through the effect journal under the name
``dispatch``; the message is stamped with the journal key (``X-Inboxflow-Trace``
and a Message-ID derived from it), so a crash after the side effect is
reconciled by finding it (``find_by_trace_key``) instead of writing it twice.
Loop protection has the last word: a recipient that
:func:`~inboxflow.mail.loop_guard.refuse_recipient` forbids (a bounce or
no-reply address, the mailbox itself, the sender of automated or list mail)
gets nothing, even when a reviewer approved or edited the address in; the
trace ends ``rejected`` with the reason in ``end_reason``. Other planned action tools (``mark_as_read``, ``schedule_meeting``) run after
it, each through the journal and recorded on the step.
The reply is the ``create_draft`` (or ``send_email``) tool's effect, bound as
that tool declares: to the email's sender (From or Reply-To), or to the
address a reviewer typed in and approved. Anything else is refused before
writing (``BindingRefused``): the trace ends ``needs_review`` with the reason.
A send no person approved goes only where the no-relay rule allows
(``bindings.relay_refusal``; review pauses before that, so this holds only for
an auto-dispatch verdict recorded before the rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from ....engine.bindings import BindingRefused, with_approved
from ....engine.context import NodeContext
from ....engine.step import END, Step
from ....errors import NodeFailed
from ....mail.loop_guard import refuse_recipient
from ...kit import unreviewed_send_refusal
from ...reply_learning import learn_from_review
from ..settings import pipeline_settings
from ..state import DispatchResult, PipelineState
from ..tools import bound_to, workspace_of
from .generate import recipient_name


def dispatch(state: PipelineState, ctx: NodeContext) -> Step:
    """Create the draft (or send the reply) once; or record the rejection."""
    draft = state.draft
    if draft is None:
        raise NodeFailed("dispatch needs a draft")
    to, subject, body = draft.to, draft.subject, draft.body
    approved_by: str | None = None
    learned: list[str] = []
    if ctx.resume is not None:
        decision = str(ctx.resume.get("decision", ""))
        reviewer = ctx.resume.get("reviewer")
        approved_by = str(reviewer) if reviewer else None
        if decision == "reject":
            learned = _learn(state, ctx, "approve_draft:rejected", None)
            result = DispatchResult(
                status="rejected", to=to, subject=subject, approved_by=approved_by, learned=learned
            )
            return Step(update={"dispatch": result}, goto=END, status="rejected")
        if decision != "approve":
            raise NodeFailed(f"approve_draft expects decision approve or reject, not {decision!r}")
        to, subject, body = _edited(ctx.resume.get("payload"), to, subject, body)
        learned = _learn(state, ctx, "approve_draft:approved", body)
    elif not (state.review and state.review.auto_dispatch):
        raise NodeFailed("dispatch reached without an auto-dispatch verdict or an approval")
    edited = (to, subject, body) != (draft.to, draft.subject, draft.body)
    refused = refuse_recipient(to, state.email)
    decided: dict[str, Any] = {"approved_by": approved_by, "edited": edited, "learned": learned}
    if refused:
        result = DispatchResult(status="refused", to=to, subject=subject, **decided)
        update = {"dispatch": result, "end_reason": f"not sent (loop protection): {refused}"}
        return Step(update=update, goto=END, status="rejected")

    complaint = state.classification is not None and state.classification.is_complaint
    send = pipeline_settings(ctx.ports).auto_send and not complaint
    thread_id = next(
        (
            str(a.arguments["thread_id"])
            for a in state.planned_actions
            if "thread_id" in a.arguments
        ),
        state.email.thread_id,
    )
    email = state.email
    tool = "send_email" if send else "create_draft"
    bound = bound_to(email)
    if edited:
        bound = with_approved(ctx.tools.get(tool).bindings, bound, {"to": to})
    ctx = replace(ctx, bound=bound)
    ctx.check_binding(tool, {"to": to})
    if send and ctx.resume is None and (relay := unreviewed_send_refusal(ctx, to, email)):
        raise BindingRefused(f"send_email: {relay}")  # review pauses before: a stale verdict
    for action in state.planned_actions:  # all bound before anything is written
        if action.name not in REPLY_TOOLS and action.name in ctx.tools:
            try:
                planned = ctx.tools.parse(
                    action.name, {"mailbox": email.mailbox, **action.arguments}
                )
            except ValidationError:
                continue  # not run: its call gives the error
            ctx.check_binding(action.name, planned)
    workspace = workspace_of(ctx, email.mailbox)
    act = workspace.send_reply if send else workspace.create_draft

    def receipt(message: dict[str, Any] | None) -> dict[str, Any] | None:
        # The journal keeps what identifies the message, not a second copy of it.
        return (
            None
            if message is None
            else {"id": message.get("id"), "thread_id": message.get("thread_id")}
        )

    outcome = ctx.effect(
        "dispatch",
        lambda key: (
            receipt(
                act(
                    to,
                    subject,
                    body,
                    thread_id,
                    key,
                    in_reply_to=email.message_id,
                    references=email.header("references"),
                )
            )
            or {}
        ),
        lambda key: receipt(workspace.find_by_trace_key(key)),
        intent={"action": "send_reply" if send else "create_draft", "to": to, "subject": subject},
    )
    for action in state.planned_actions:
        if action.name not in REPLY_TOOLS:
            ctx.call_tool(action.name, {"mailbox": email.mailbox, **action.arguments})
    result = DispatchResult(
        status="sent" if send else "drafted",
        action="send_reply" if send else "create_draft",
        message_id=outcome.get("id"),
        to=to,
        subject=subject,
        **decided,
    )
    return Step(update={"dispatch": result}, goto=END)


def _learn(state: PipelineState, ctx: NodeContext, event: str, body: str | None) -> list[str]:
    """What the reviewer's edited ``body`` (None: rejected) and comment teach the mailbox's
    drafts (:func:`~inboxflow.graphs.reply_learning.learn_from_review`)."""
    assert state.draft is not None and ctx.resume is not None
    return learn_from_review(
        ctx,
        state.email.mailbox,
        event,
        state.draft.body,
        body,
        comment=ctx.resume.get("comment"),
        first_name=recipient_name(state),
        name=state.email.sender.name,
    )


REPLY_TOOLS = frozenset({"create_draft", "send_email"})
"""Planned actions that dispatch itself performs (as the reply), not through their tool."""


def _edited(payload: Any, to: str, subject: str, body: str) -> tuple[str, str, str]:
    """The reviewer's edits over the original draft (``payload`` is None when unedited)."""
    if payload is None:
        return to, subject, body
    if not isinstance(payload, Mapping):
        raise NodeFailed(f"edited payload must be an object, not {type(payload).__name__}")
    edited_body = payload.get("draft", payload.get("body"))
    if isinstance(edited_body, Mapping):
        edited_body = edited_body.get("body")
    new_to = str(payload.get("to") or to)
    if "@" not in new_to:
        raise NodeFailed(f"edited recipient {new_to!r} is not an email address")
    return new_to, str(payload.get("subject") or subject), str(edited_body if edited_body else body)

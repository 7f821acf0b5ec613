"""Tools any agent profile may use: ``web_search``, ``send_reply``, ``create_draft``, ``escalate``.

``send_reply`` and ``create_draft`` write through the mailbox workspace in the
email's thread, through the effect journal (stamped with the journal key, found
again by it after a crash): one reply per trace; a second is refused. Both are
bound to the person who asked (``REQUESTER``): ``to`` must be exactly the
inquiry's ``reply_to``, whatever the model says, or the runtime refuses the
call and the run escalates. ``send_reply`` (no person reviews it) goes only where
the no-relay rule allows (``bindings.relay_refusal``): to the authenticated
sender, or to an address the mailbox has already written to; anything else is
refused and the run escalates with the reason (``create_draft`` leaves the
sending to a person).
``escalate`` records the reason; ``finish`` ends the run ``needs_review`` and
notifies the reviewers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ....engine.bindings import BindingRefused
from ....engine.tools import Binding, Tool
from ...kit import unreviewed_send_refusal, workspace_of
from ..web_search import WEB_SEARCH
from .view import view_of

REQUESTER = "requester"
"""The bound subject of the agent's writing tools: the inquiry's ``reply_to`` (``agent_tools``)."""
REPLY_BINDING = Binding(REQUESTER, "to", "address", "the person who asked (the inquiry's reply_to)")

if TYPE_CHECKING:
    from ....engine.context import NodeContext


class WebSearchParams(BaseModel):
    """Arguments of ``web_search``."""

    query: str = Field(min_length=1, description="What to look for.")


def web_search(params: WebSearchParams, ctx: NodeContext) -> dict[str, Any]:
    """Search (offline: the knowledge base)."""
    return {"results": ctx.ports.service(WEB_SEARCH).search(params.query)}


class ReplyParams(BaseModel):
    """Arguments of ``send_reply`` and ``create_draft``."""

    to: str = Field(description="Recipient: the person who asked (for Crisp mail, the patient).")
    subject: str = Field(description="Subject of the reply.")
    body: str = Field(min_length=1, description="Plain-text body of the reply.")


def _reply(params: ReplyParams, ctx: NodeContext, send: bool) -> dict[str, Any]:
    view = view_of(ctx)
    if view.state.reply is not None:
        return {
            "error": f"a reply was already written in this run ({view.state.reply.get('kind')})"
        }
    to = params.to.strip()
    email = view.email
    if send and (relay := unreviewed_send_refusal(ctx, to, email)):
        raise BindingRefused(f"send_reply: {relay}")  # nobody reviews it: the run escalates
    workspace = workspace_of(ctx, email.mailbox)
    act = workspace.send_reply if send else workspace.create_draft

    def receipt(message: dict[str, Any] | None) -> dict[str, Any] | None:
        if message is None:
            return None
        return {
            "id": message.get("id"),
            "thread_id": message.get("thread_id"),
            "kind": message.get("kind", "sent" if send else "draft"),
            "to": to,
            "subject": message.get("subject", params.subject),
        }

    # One effect name for both tools: two replies in one turn are one reply.
    return ctx.effect(
        "reply",
        lambda key: (
            receipt(
                act(
                    to,
                    params.subject,
                    params.body,
                    email.thread_id,
                    key,
                    in_reply_to=email.message_id,
                    references=email.references,
                )
            )
            or {}
        ),
        lambda key: receipt(workspace.find_by_trace_key(key)),
    )


def send_reply(params: ReplyParams, ctx: NodeContext) -> dict[str, Any]:
    """Send the reply in the email's thread (once per run)."""
    return _reply(params, ctx, send=True)


def create_draft(params: ReplyParams, ctx: NodeContext) -> dict[str, Any]:
    """Save the reply as a draft in the email's thread (once per run)."""
    return _reply(params, ctx, send=False)


class EscalateParams(BaseModel):
    """Arguments of ``escalate``."""

    reason: str = Field(min_length=1, description="Why a human must take over.")


def escalate(params: EscalateParams, ctx: NodeContext) -> dict[str, Any]:
    """Hand the email to a human: the run ends ``needs_review`` with the reason."""
    return {"escalated": True, "reason": params.reason.strip()}


COMMON_TOOLS = (
    Tool("web_search", "Search the web for general information.", WebSearchParams, web_search),
    Tool(
        "send_reply",
        "Send the reply to the person who asked, in the email's thread. Once per conversation.",
        ReplyParams,
        send_reply,
        action=True,
        binds=REPLY_BINDING,
    ),
    Tool(
        "create_draft",
        "Save the reply as a draft for a human to check and send. Once per conversation.",
        ReplyParams,
        create_draft,
        action=True,
        binds=REPLY_BINDING,
    ),
    Tool(
        "escalate",
        "Hand the conversation to a human (medical advice, complaints, anything unsure).",
        EscalateParams,
        escalate,
    ),
)

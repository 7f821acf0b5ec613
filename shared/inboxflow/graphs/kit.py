"""What several graphs share: reaching the workspace, who an email's action tools are bound to,
and the pause kind in which a person approves, edits or rejects a reply.

A graph imports this module, never another graph. Keep it small: a helper
belongs here only once two graphs use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ..engine.bindings import Bound, bound_addresses, relay_refusal
from ..engine.pause_kinds import Choice, EditableField, PauseKind
from ..engine.tools import Binding
from ..mail import Email
from ..mail.authentication import check_sender, configured_authserv_id
from ..ports.workspace import Workspace

if TYPE_CHECKING:
    from ..engine.context import NodeContext


def workspace_of(ctx: NodeContext, mailbox: str | None = None) -> Workspace:
    """The workspace port, for ``mailbox`` when one is given."""
    workspace = ctx.ports.workspace
    return workspace.for_mailbox(mailbox) if mailbox else workspace


def unreviewed_send_refusal(
    ctx: NodeContext,
    to: str,
    email: Email,
    corresponded: Callable[[str], bool] | None = None,
) -> str | None:
    """Why mail to ``to`` answering ``email`` must wait for a person instead of going out on
    its own (the no-relay rule, :func:`~inboxflow.engine.bindings.relay_refusal`), or None.

    Args:
        ctx: the node's context (config: the authserv-id; workspace: the sent mail).
        to: the recipient.
        email: the email answered.
        corresponded: whether the mailbox has written to an address; default the
            workspace's ``has_written_to`` (a node without the mailbox passes what its
            trace knows: a subset, so never more permissive).
    """
    if corresponded is None:
        corresponded = workspace_of(ctx, email.mailbox).has_written_to
    sender = check_sender(email, configured_authserv_id(ctx.ports.config))
    return relay_refusal(to, email, sender, corresponded)


CORRESPONDENT = Binding(
    "correspondent",
    "to",
    "address",
    "the sender of the email answered (From or Reply-To, or the writer of a forwarded message)",
)
PEOPLE_ON_THE_EMAIL = Binding(
    "people_on_the_email",
    "attendees",
    "addresses",
    "the people on the email (From, Reply-To, To, Cc)",
)
MESSAGE_ANSWERED = Binding("message_answered", "message_id", "id", "the message answered")


def bound_to(email: Email) -> Bound:
    """Who the action tools are bound to when answering ``email``."""
    writer = email.writer.address if email.writer is not None else None
    sender = bound_addresses(email.sender.address, email.header("reply-to"), writer)
    people = bound_addresses(
        *sender, *(a.address for a in email.to), *(a.address for a in email.cc)
    )
    return {
        CORRESPONDENT.subject: sender,
        PEOPLE_ON_THE_EMAIL.subject: people,
        MESSAGE_ANSWERED.subject: tuple(i for i in (email.message_id, email.gmail_id) if i),
    }


def reply_approval_kind(
    name: str,
    title: str,
    *,
    message_field: str,
    approve_label: str,
    approved: str,
    approved_detail: str,
    rejected_detail: str,
    description: str,
    notification: str,
    recipient_editable: bool = False,
    defaults: Mapping[str, str] | None = None,
) -> PauseKind:
    """A pause kind in which a reviewer approves (with their edits) or rejects a reply.

    Either decision may carry a comment: what the drafts learn from it
    (:mod:`.reply_learning`), with the edit.

    Args:
        name: the kind's name.
        title: the review page's heading.
        message_field: the payload field holding the reply's text (label "Message").
        approve_label: the approve button's text.
        approved: what approving does, after "Approved" and a dash in the result's headline.
        approved_detail: the result page's text after approving.
        rejected_detail: the result page's text after rejecting.
        description: one line for ``inboxflow graphs``.
        notification: the reviewer email's subject.
        recipient_editable: whether the reviewer may edit the recipient (field ``to``).
        defaults: values for the ``{name}`` fields of the labels and outcomes.
    """
    recipient = (EditableField("to", "To", "address", max_chars=320, required=True),)
    return PauseKind(
        name,
        title,
        (
            Choice(
                "approve",
                approve_label,
                "primary",
                (f"Approved \N{EN DASH} {approved}", approved_detail),
                applies_edit=True,
                comment="optional",
                comment_label="Note for future drafts (optional)",
            ),
            Choice(
                "reject",
                "Reject",
                "danger",
                ("Rejected", rejected_detail),
                comment="optional",
                comment_label="What is wrong (future drafts never say it; optional)",
            ),
        ),
        editable=(
            *(recipient if recipient_editable else ()),
            EditableField("subject", "Subject", "line", max_chars=998, required=True),
            EditableField(message_field, "Message", "text", max_chars=20_000, required=True),
        ),
        description=description,
        defaults=dict(defaults or {}),
        notification=notification,
        payload_title="The reply",
        bulk_safe=True,
    )

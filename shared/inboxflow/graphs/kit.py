"""What several graphs share: reaching the workspace and who an email's action tools are bound to.

A graph imports this module, never another graph. Keep it small: a helper
belongs here only once two graphs use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..engine.bindings import Bound, bound_addresses, relay_refusal
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

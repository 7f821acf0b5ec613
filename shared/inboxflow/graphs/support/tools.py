"""The support desk's writing tools, each bound to the customer who wrote.

| tool              | bound to                              | what it does                          |
|-------------------|---------------------------------------|---------------------------------------|
| open_ticket       | the customer (CRM id of who wrote)    | opens a ticket (create-only, journal) |
| reply_to_customer | the customer's address (who wrote)    | the reply in the email's thread       |

No model picks these calls: ``intake`` and ``act`` perform them
(``ctx.perform``), with the customer bound from the email's sender, or from the writer
of a message a colleague forwarded (``SupportState.customer_address``, :func:`bound_to`). The declarations say so, and the runtime holds it: a
ticket for anyone else, or a reply to anyone else (a reviewer's approval
included), is refused and the trace ends ``needs_review``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ...engine.bindings import Bound, bound_addresses
from ...engine.tools import Binding, Tool, ToolRegistry
from ...mail import Address, Email
from ..kit import workspace_of
from .settings import support_settings
from .tickets import TicketStore

if TYPE_CHECKING:
    from ...engine.context import NodeContext

CUSTOMER = Binding("customer", description="the customer who wrote (their CRM id)")
CUSTOMER_ADDRESS = Binding(
    "customer_address",
    "to",
    "address",
    "the customer who wrote (the email's sender, or the writer of a forward intake took)",
)


def bound_to(customer: Address, customer_id: str | None) -> Bound:
    """Who the support tools are bound to: the customer (``SupportState.customer_address``),
    as an address and as a CRM id."""
    return {
        CUSTOMER.subject: (customer_id,) if customer_id else (),
        CUSTOMER_ADDRESS.subject: bound_addresses(customer.address),
    }


def _email(ctx: NodeContext) -> Email:
    email = ctx.subject  # the email the tools answer, set by intake and act
    if not isinstance(email, Email):
        raise RuntimeError("the support tools run inside intake and act (no email given)")
    return email


class OpenTicketParams(BaseModel):
    """Arguments of ``open_ticket``."""

    subject: str = Field(description="The ticket's subject.")
    customer_known: bool = Field(description="Whether the CRM knows the customer.")
    customer_email: str = Field(description="The customer's address, as recorded.")


def open_ticket(params: OpenTicketParams, ctx: NodeContext) -> dict[str, Any]:
    """Open a ticket for the bound customer in the email's thread, once (create-only, journal)."""
    email, tickets = _email(ctx), TicketStore(ctx.store)
    customer_id = ctx.bound_subject(CUSTOMER.subject)

    def opened(key: str) -> dict[str, Any] | None:
        found = tickets.opened_by(key)
        return None if found is None else {"ticket_id": found.ticket_id}

    return ctx.effect(
        "open_ticket",
        lambda key: {
            "ticket_id": tickets.open(
                customer_id,
                params.subject,
                email.thread_id,
                key,
                customer_known=params.customer_known,
                customer_email=params.customer_email,
            ).ticket_id
        },
        opened,
        store_only=True,
    )


class ReplyParams(BaseModel):
    """Arguments of ``reply_to_customer``."""

    to: str = Field(description="The customer's address.")
    subject: str = Field(description="Subject of the reply.")
    body: str = Field(description="Plain-text body.")


def reply_to_customer(params: ReplyParams, ctx: NodeContext) -> dict[str, Any]:
    """Write the reply in the email's thread, once: a draft, or sent with ``auto_send``."""
    email = _email(ctx)
    workspace = workspace_of(ctx, email.mailbox)
    write = (
        workspace.send_reply if support_settings(ctx.ports).auto_send else workspace.create_draft
    )
    return ctx.effect(
        "support_reply",
        lambda key: _receipt(
            write(
                params.to,
                params.subject,
                params.body,
                email.thread_id,
                key,
                in_reply_to=email.message_id,
                references=email.header("references"),
            )
        ),
        lambda key: _found(workspace.find_by_trace_key(key)),
    )


def _receipt(message: Mapping[str, Any] | None) -> dict[str, Any]:
    return (
        {} if message is None else {"id": message.get("id"), "thread_id": message.get("thread_id")}
    )


def _found(message: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if message is None else _receipt(message)


SUPPORT_TOOLS = ToolRegistry(
    [
        Tool(
            "open_ticket",
            "Open a support ticket for the customer who wrote.",
            OpenTicketParams,
            open_ticket,
            action=True,
            binds=CUSTOMER,
        ),
        Tool(
            "reply_to_customer",
            "Reply to the customer in the email's thread (a draft, or sent with auto_send).",
            ReplyParams,
            reply_to_customer,
            action=True,
            binds=CUSTOMER_ADDRESS,
        ),
    ]
)
"""The support graph's tool registry (performed by its nodes, not chosen by a model)."""

"""intake: who wrote, and which ticket does the message belong to?

| node     | intake                                                                  |
|----------|-------------------------------------------------------------------------|
| inputs   | email                                                                   |
| outputs  | customer, ticket {customer_id, ticket_id, how, match}, tag, sender,     |
|          | writer                                                                  |
| LLM task | support_match_ticket (only when the customer has active tickets and the |
|          | email is not a reply in one of their threads)                           |
| routes   | -> translator                                                           |

A sender the CRM does not know is a ``free``-plan guest (``guest_<hash>``):
they get a ticket and an answer like any customer, and the ticket records
that the customer is unknown. A reply in one of the customer's tickets' Gmail threads (or naming
one of its messages in ``In-Reply-To``/``References``) always continues it, and reopens it when
it was completed (``how: reopened``, the reason recorded on the ticket); a message in another
customer's thread is not theirs (``sender.thread_of``). Else the matcher's
high or medium match does (only among the sender's own tickets); else a new
ticket is opened by the ``open_ticket`` tool, bound to the sender's customer id
(create-only, through the effect journal: a re-run after a crash finds the
ticket it opened). The
message and the trace are added to the ticket once. What the desk can tell of the
sender (authenticated by the configured authserv-id's verdict, a look-alike domain, someone
else's thread) goes to ``sender``.

The customer is the email's sender, or the writer of a message forwarded by hand when
``mail/forward_writer.py`` takes it: the forwarder is authenticated (the configured
authserv-id) and is the mailbox's own organisation or one of the ``forwarders`` setting, the
block names one plain address of someone else and the forwarded message was written to us
(``writer``; the CRM is asked about it, the ticket and the reply are theirs). Otherwise the
forwarder stays the customer; ``sender.forward`` records why. A Gmail auto-forward arrives
From its writer already.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Literal

from ....engine.context import NodeContext
from ....engine.step import Step
from ....errors import NodeFailed
from ....mail import Email
from ....mail.addresses import address_key_or_none
from ....mail.authentication import configured_authserv_id
from ....mail.forward_writer import read_customer
from ..crm import CUSTOMERS, guest_customer
from ..matching import continued_ticket, matcher_inputs, reply_ticket
from ..senders import check_trust
from ..settings import support_settings
from ..state import SupportState, TicketRef
from ..tasks import MATCH_TICKET
from ..tickets import Reopening, Ticket, TicketMessage, TicketStore
from ..tools import bound_to

MESSAGE_CHARS = 8000


def intake(state: SupportState, ctx: NodeContext) -> Step:
    """Find the customer and the ticket; record the message on it."""
    email = state.email
    crm = ctx.ports.service(CUSTOMERS)
    authserv_id = configured_authserv_id(ctx.ports.config)
    reading = read_customer(email, support_settings(ctx.ports).forwarders, authserv_id)
    who = reading.customer
    found = crm.find_by_email(who.address)
    known = found is not None
    sender_key = address_key_or_none(who.address) or who.address
    customer = found or guest_customer(sender_key, who.name)
    tickets = TicketStore(ctx.store)
    text = email.body_for_model(MESSAGE_CHARS)
    replied = reply_ticket(email, customer.customer_id, tickets)
    sender = check_trust(
        email,
        known,
        lambda address: crm.find_by_email(address) is not None,
        thread_of=replied.others[0].key if replied.others and replied.own is None else None,
        authserv_id=authserv_id,
        customer=who.address,
    ).model_copy(update={"forward": reading.reason or None})
    ticket = replied.own
    how: Literal["thread", "reopened", "matched", "new"] = "thread"
    match = None
    if ticket is not None and ticket.status == "completed":
        ticket = tickets.reopen(
            ticket,
            Reopening(
                at=datetime.fromtimestamp(ctx.clock.now(), UTC).isoformat(),
                reason=f"the customer wrote again: {replied.reason}",
                message_id=email.message_id,
                trace_id=ctx.trace_id,
                previous_outcome=ticket.outcome,
            ),
        )
    if ticket is not None and any(r.trace_id == ctx.trace_id for r in ticket.reopenings):
        how = "reopened"
    active = tickets.list(customer.customer_id, "active") if ticket is None else []
    if ticket is None and active:
        match = ctx.generate(MATCH_TICKET, matcher_inputs(email.subject, text, active))
        ticket = continued_ticket(match, active)
        how = "matched"
    if ticket is None:
        tool_ctx = replace(
            ctx,
            subject=email,
            bound=bound_to(who, customer.customer_id),
        )
        opened = tool_ctx.perform(
            "open_ticket",
            {
                "subject": email.subject,
                "customer_known": known,
                "customer_email": customer.email,
            },
        )
        ticket = tickets.get(customer.customer_id, str(opened["ticket_id"]))
        if ticket is None:
            raise NodeFailed(f"ticket {opened['ticket_id']} was opened but is not in the store")
        how = "new"
    _record_message(tickets, ticket, ctx.trace_id, email, text)
    ref = TicketRef(
        customer_id=customer.customer_id, ticket_id=ticket.ticket_id, how=how, match=match
    )
    update = {
        "customer": customer,
        "customer_known": known,
        "ticket": ref,
        "tag": ref.key,
        "sender": sender,
        "writer": who if reading.taken else None,
    }
    return Step(update=update, goto="translator")


def _record_message(
    tickets: TicketStore, ticket: Ticket, trace_id: str, email: Email, text: str
) -> None:
    """Add the message, its thread and the trace to the ticket, each once."""
    changed = ticket.model_copy(deep=True)
    if all(m.message_id != email.message_id for m in changed.messages):
        changed.messages.append(
            TicketMessage(
                direction="in",
                text=text,
                at=email.received_at.isoformat(),
                message_id=email.message_id,
            )
        )
    if email.thread_id not in changed.thread_ids:
        changed.thread_ids.append(email.thread_id)
    if trace_id not in changed.traces:
        changed.traces.append(trace_id)
    if changed != ticket:
        tickets.save(changed)

"""Whose mail a manual forward is: the forwarded message's writer, when its forwarder may say so.

A colleague (or the pharmacy site's inbox) forwards a customer's mail by hand: the mail is
From the forwarder, and the customer is the ``From`` of the forwarded block
(:func:`~.forwarded.forward_of`). That block is what the body says, and anyone can write a
body: taken from anyone, it would let an outsider make a graph answer, open a ticket for, or
draft to an arbitrary third party. So a graph that answers the customer (the agent's
preprocessor, the support desk's intake) asks :func:`read_customer`, which takes the block's
writer only when:

1. the forwarding sender is authenticated (:func:`~.authentication.check_sender`, the
   configured authserv-id's DMARC/DKIM/SPF pass for the ``From`` domain), and
2. it is the mailbox's own organisation (the mailbox's domain) or one of the graph's
   configured forwarding sources (an agent profile's ``helpdesk``, the support desk's
   ``forwarders``), and
3. the writer is one plain address of someone else: no control characters and no address in
   its display name, not the mailbox or its domain, not the forwarder, not a forwarding source;
4. the forwarded message was written to us: its ``To`` names the forwarder, the mailbox, a
   forwarding source or an address of their domains. A forward shows whom its message was
   for; one written to others (third parties' correspondence, a notice with its recipients
   cut) is the forwarder's material, and a person decides what to do with it.

Otherwise the forwarder stays the customer, and ``reason`` says why (the graph records it).
Gmail's auto-forwarding needs none of this: such a mail arrives From its writer.

Taking the writer grants it no trust: the writer is still no authenticated sender, so
whatever trusts a sender (a reply deciding a review, mail sent without a person: the
no-relay rule of :mod:`inboxflow.engine.bindings`) still asks :mod:`.authentication`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .addresses import address_key_or_none, domain_key_or_none, same_address
from .authentication import check_sender
from .forwarded import Forward, forward_of
from .model import Address, Email

_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f\u2028\u2029<>@]")
"""What a display name may not hold: control or line-separator characters (a header
injection), angle brackets or an ``@`` (an address posing as a name)."""


@dataclass(frozen=True)
class ForwardReading:
    """Who the customer of an email is, and why.

    Attributes:
        customer: the person the graph answers: the forwarded message's writer when it was
            taken, else the email's sender.
        forward: the forwarded message whose writer was taken (its text, subject and the
            forwarder's note), or None.
        forwarded_by: the authenticated forwarder, when the writer was taken.
        reason: how the forward was read (one clause for records): why the writer was
            taken, or why not; empty when the email forwards no message.
    """

    customer: Address
    forward: Forward | None = None
    forwarded_by: str | None = None
    reason: str = ""

    @property
    def taken(self) -> bool:
        """Whether the customer is a forwarded message's writer (not the email's sender)."""
        return self.forward is not None


def read_customer(
    email: Email, forwarders: Sequence[str] = (), authserv_id: str | None = None
) -> ForwardReading:
    """Who ``email``'s customer is: a manual forward's writer under the module's rule, else
    its sender.

    Args:
        email: the parsed email.
        forwarders: the addresses configured to forward customers' mail (besides the
            mailbox's own organisation).
        authserv_id: the receiving server whose verdict counts (default: the configured one).
    """
    found = forward_of(email)
    if found is None:
        return ForwardReading(customer=email.sender)
    writer = found.sender
    not_taken = f"the forwarded message's writer {writer.address!r} is not taken"
    checked = check_sender(email, authserv_id)
    if checked.address is None:
        return ForwardReading(
            customer=email.sender,
            reason=f"{not_taken}: the forwarder is not authenticated ({checked.reason})",
        )
    own = domain_key_or_none(email.mailbox.rpartition("@")[2])
    ours = own is not None and _domain(checked.address) == own
    if not ours and not any(same_address(checked.address, s) for s in forwarders):
        return ForwardReading(
            customer=email.sender,
            reason=(
                f"{not_taken}: {checked.address} is neither the mailbox's organisation "
                "nor a configured forwarding source"
            ),
        )
    refused = _refused_writer(writer, email.mailbox, own, checked.address, forwarders)
    if refused is not None:
        return ForwardReading(customer=email.sender, reason=f"{not_taken}: {refused}")
    if not _written_to_us(found.to, (email.mailbox, checked.address, *forwarders)):
        named = ", ".join(found.to) or "nobody"
        return ForwardReading(
            customer=email.sender,
            reason=f"{not_taken}: the forwarded message was not written to us (To: {named})",
        )
    return ForwardReading(
        customer=writer,
        forward=found,
        forwarded_by=checked.address,
        reason=f"the forwarded message's writer, forwarded by {checked.address} ({checked.reason})",
    )


def _refused_writer(
    writer: Address, mailbox: str, own: str | None, forwarder: str, forwarders: Sequence[str]
) -> str | None:
    """Why ``writer`` may not be the customer, or None."""
    key = address_key_or_none(writer.address)
    if key is None:
        return "it is not exactly one address"
    if _UNSAFE_NAME.search(writer.name):
        return "its display name holds an address or control characters"
    if same_address(key, mailbox) or (own is not None and _domain(key) == own):
        return "it is the mailbox's own organisation"
    if same_address(key, forwarder) or any(same_address(key, s) for s in forwarders):
        return "it is the forwarder or a forwarding source"
    return None


def _written_to_us(recipients: Sequence[str], ours: Sequence[str]) -> bool:
    """Whether ``recipients`` name one of ``ours`` or an address of their domains."""
    domains = {d for d in (_domain(a) for a in ours) if d is not None}
    return any(any(same_address(r, a) for a in ours) or _domain(r) in domains for r in recipients)


def _domain(address: str) -> str | None:
    return domain_key_or_none(address.rpartition("@")[2])


__all__ = ["ForwardReading", "read_customer"]

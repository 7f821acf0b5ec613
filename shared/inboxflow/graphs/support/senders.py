"""Is the sender the customer they appear to be? What the support desk checks of a sender.

- **authentication** (``mail/authentication.py``): when our receiving server left a
  verdict (``Authentication-Results``) and it does not vouch for the From address,
  the mail is not the customer's, whatever From says. Mail with no verdict at all
  (local files, the demo) is taken as it comes; Gmail always leaves one.
- **look-alike domains**: a sender the CRM does not know whose domain differs from a
  known one by a confusable letter or two (``northwlnd`` for ``northwind``, ``paypa1``,
  ``rn`` for ``m``) or imitates the desk's own domain is not that customer. Known
  domains are the desk's mailbox and, through the CRM, the same address on each
  confusable variant of the domain (a few lookups, only for unknown senders); the
  look-alikes are told by :mod:`..lookalike`.
- **someone else's thread**: a message in the thread of another customer's ticket is
  not from that customer (intake finds the thread's tickets).

The ``reply_needs_person`` guard reads the result (``SenderTrust.concerns``): a sender
with a concern is never answered without a person.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from ...mail import Email
from ...mail.addresses import ascii_lower
from ...mail.authentication import HEADER, check_sender
from ..lookalike import resemblance, variants


class SenderTrust(BaseModel):
    """What the desk could tell of the sender.

    Attributes:
        authenticated: our receiving server vouched for the From address.
        verdict: how, or why not (``mail.authentication.check_sender``).
        verdict_failed: a verdict is there and does not vouch for From (forged or unverifiable).
        lookalike_of: the known domain the sender's imitates, if any.
        thread_of: the ticket (``customer:ticket``) of another customer whose thread this is.
        forward: how a manual forward was read (``mail.forward_writer``): its writer taken as
            the customer, or why the forwarder stays the customer; None: no forward.
    """

    authenticated: bool
    verdict: str
    verdict_failed: bool = False
    lookalike_of: str | None = None
    thread_of: str | None = None
    forward: str | None = None

    def concerns(self) -> list[str]:
        """Why the sender may not be the customer (empty: no reason to doubt)."""
        found = []
        if self.verdict_failed:
            found.append(f"the sender is not authenticated: {self.verdict}")
        if self.lookalike_of:
            found.append(f"the sender's domain imitates {self.lookalike_of}")
        if self.thread_of:
            found.append(f"writes in the thread of another customer's ticket ({self.thread_of})")
        return found


def domain_of(address: str) -> str:
    """The domain of an address, ASCII-lowercased (Unicode lowercasing makes a Kelvin sign a k)."""
    return ascii_lower(address.rpartition("@")[2].strip())


def imitates(domain: str, known: str) -> bool:
    """Whether ``domain`` is a look-alike of ``known`` (not the same domain): it looks the same
    (``northwlnd``) or runs the known name and suffix together (``brightlane-io.com``)."""
    resembles = resemblance(domain, known)
    return resembles is not None and (resembles.same_look or resembles.runs_on)


def check_trust(
    email: Email,
    known: bool,
    is_customer: Callable[[str], bool],
    thread_of: str | None = None,
    authserv_id: str | None = None,
    customer: str | None = None,
) -> SenderTrust:
    """What the desk can tell of ``email``'s sender.

    Args:
        email: the message.
        known: the CRM knows the sender's address.
        is_customer: whether the CRM knows an address (asked for look-alike variants only
            when ``known`` is False).
        thread_of: another customer's ticket whose thread this message is in.
        authserv_id: the receiving server whose verdict counts (``configured_authserv_id``
            of the deployment's config; default: the environment's or ``mx.google.com``).
        customer: the customer's address when it is not the sender's (a forward's writer):
            the look-alike checks are of it.
    """
    checked = check_sender(email, authserv_id)
    has_verdict = bool(email.header(HEADER).strip())
    address = customer or email.sender.address
    domain = domain_of(address)
    lookalike = None
    if not known:
        own = domain_of(email.mailbox)
        if imitates(domain, own):
            lookalike = own
        else:
            local = address.rpartition("@")[0]
            lookalike = next((v for v in variants(domain) if is_customer(f"{local}@{v}")), None)
    return SenderTrust(
        authenticated=checked.authenticated,
        verdict=checked.reason,
        verdict_failed=has_verdict and not checked.authenticated,
        lookalike_of=lookalike,
        thread_of=thread_of,
    )

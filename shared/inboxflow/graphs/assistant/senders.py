"""Whether an email's sender may be someone it is not: a domain that imitates the owner's
(``brightlane-io.com``, ``brlghtlane.io``, ``brightlane.co`` for ``brightlane.io``), or a
``From`` our receiving server did not vouch for (``mail/authentication.py``). The look-alike
is told by :mod:`..lookalike`; not answering such a sender is the assistant's policy."""

from __future__ import annotations

from ...mail import Email
from ...mail.addresses import ascii_lower
from ...mail.authentication import check_sender
from ..lookalike import resemblance

MAX_EDITS = 2
"""A domain whose name is this many edits from the owner's or fewer imitates it."""


def lookalike(sender_domain: str, owner_domain: str) -> bool:
    """Whether ``sender_domain`` imitates ``owner_domain`` without being it (or a subdomain):
    it holds the owner's name or is two edits from it (``brightlane-io.com``, ``brightlane.co``)."""
    resembles = resemblance(sender_domain, owner_domain)
    if resembles is None:
        return False
    edits = resembles.name_edits
    return resembles.holds_name or (edits is not None and edits <= MAX_EDITS)


def unverified_reason(email: Email, owner: str, authserv_id: str) -> str | None:
    """Why ``email``'s sender may not be who it says (a look-alike domain, an unauthenticated
    ``From``), or None when our server vouched for a sender whose domain imitates nobody."""
    domain = ascii_lower(email.sender.address.rpartition("@")[2])
    owner_domain = ascii_lower(owner.rpartition("@")[2])
    if lookalike(domain, owner_domain):
        return f"{domain} imitates {owner_domain}"
    check = check_sender(email, authserv_id)
    if not check.authenticated:
        return f"the sender is not authenticated ({check.reason})"
    return None

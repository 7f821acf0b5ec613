"""Is the sender the customer they appear to be? What the support desk checks of a sender.

- **authentication** (``mail/authentication.py``): when our receiving server left a
  verdict (``Authentication-Results``) and it does not vouch for the From address,
  the mail is not the customer's, whatever From says. Mail with no verdict at all
  (local files, the demo) is taken as it comes; Gmail always leaves one.
- **look-alike domains**: a sender the CRM does not know whose domain differs from a
  known one by a confusable letter or two (``northwlnd`` for ``northwind``, ``paypa1``,
  ``rn`` for ``m``) or imitates the desk's own domain is not that customer. Known
  domains are the desk's mailbox and, through the CRM, the same address on each
  confusable variant of the domain (a few lookups, only for unknown senders).
- **someone else's thread**: a message in the thread of another customer's ticket is
  not from that customer (intake finds the thread's tickets).

The ``reply_needs_person`` guard reads the result (``SenderTrust.concerns``): a sender
with a concern is never answered without a person.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from ...mail import Email
from ...mail.addresses import ascii_lower, domain_key_or_none
from ...mail.authentication import HEADER, check_sender

CONFUSABLES: tuple[tuple[str, str], ...] = (
    ("rn", "m"),
    ("m", "rn"),
    ("vv", "w"),
    ("w", "vv"),
    ("l", "i"),
    ("i", "l"),
    ("1", "l"),
    ("1", "i"),
    ("0", "o"),
    ("o", "0"),
    ("3", "e"),
    ("5", "s"),
)
"""Letters a look-alike domain swaps for each other (one swap per variant)."""
_SKELETON = str.maketrans("l1035", "iioes")
MAX_VARIANTS = 12
"""At most this many CRM lookups for one unknown sender."""


class SenderTrust(BaseModel):
    """What the desk could tell of the sender.

    Attributes:
        authenticated: our receiving server vouched for the From address.
        verdict: how, or why not (``mail.authentication.check_sender``).
        verdict_failed: a verdict is there and does not vouch for From (forged or unverifiable).
        lookalike_of: the known domain the sender's imitates, if any.
        thread_of: the ticket (``customer:ticket``) of another customer whose thread this is.
    """

    authenticated: bool
    verdict: str
    verdict_failed: bool = False
    lookalike_of: str | None = None
    thread_of: str | None = None

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


def skeleton(domain: str) -> str:
    """``domain`` with confusable letters mapped to one form (``northwlnd`` -> ``northwind``)."""
    folded = domain.lower().replace("rn", "m").replace("vv", "w")
    return folded.translate(_SKELETON)


def variants(domain: str) -> list[str]:
    """Domains one confusable swap away from ``domain`` (at most ``MAX_VARIANTS``)."""
    name, dot, tld = domain.partition(".")
    found: list[str] = []
    for old, new in CONFUSABLES:
        start = name.find(old)
        while start != -1 and len(found) < MAX_VARIANTS:
            candidate = name[:start] + new + name[start + len(old) :] + dot + tld
            if candidate != domain and candidate not in found:
                found.append(candidate)
            start = name.find(old, start + 1)
    return found[:MAX_VARIANTS]


def imitates(domain: str, known: str) -> bool:
    """Whether ``domain`` is a look-alike of ``known`` (not the same domain)."""
    key = domain_key_or_none(domain)
    if not domain or not known or (key is not None and key == domain_key_or_none(known)):
        return False
    if skeleton(domain) == skeleton(known):
        return True
    # brightlane-io.com for brightlane.io: the known name and suffix run together
    squashed = "".join(ch for ch in domain if ch.isalnum())
    known_squashed = "".join(ch for ch in known if ch.isalnum())
    return squashed.startswith(known_squashed) and len(squashed) - len(known_squashed) <= 4


def check_trust(
    email: Email,
    known: bool,
    is_customer: Callable[[str], bool],
    thread_of: str | None = None,
    authserv_id: str | None = None,
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
    """
    checked = check_sender(email, authserv_id)
    has_verdict = bool(email.header(HEADER).strip())
    domain = domain_of(email.sender.address)
    lookalike = None
    if not known:
        own = domain_of(email.mailbox)
        if imitates(domain, own):
            lookalike = own
        else:
            local = email.sender.address.rpartition("@")[0]
            lookalike = next((v for v in variants(domain) if is_customer(f"{local}@{v}")), None)
    return SenderTrust(
        authenticated=checked.authenticated,
        verdict=checked.reason,
        verdict_failed=has_verdict and not checked.authenticated,
        lookalike_of=lookalike,
        thread_of=thread_of,
    )

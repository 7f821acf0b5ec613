"""Whether an email's sender may be someone it is not: a domain that imitates the owner's
(``brightlane-io.com``, ``brlghtlane.io``, ``brightlane.co`` for ``brightlane.io``), or a
``From`` our receiving server did not vouch for (``mail/authentication.py``)."""

from __future__ import annotations

from ...mail import Email
from ...mail.addresses import ascii_lower, within_domain
from ...mail.authentication import check_sender

CONFUSABLE = str.maketrans({"0": "o", "1": "l", "i": "l", "3": "e", "5": "s", "$": "s"})
"""Characters that pass for others in a domain (compared after this mapping)."""


def _brand(domain: str) -> str:
    """The domain without its last label, letters and digits only (``brightlane-io.com`` ->
    ``brightlaneio``; ``mail.brightlane.io`` -> ``mailbrightlane``)."""
    labels = domain.lower().split(".")
    core = labels[:-1] if len(labels) > 1 else labels
    return "".join(ch for ch in "".join(core) if ch.isalnum())


def _skeleton(text: str) -> str:
    return text.translate(CONFUSABLE).replace("rn", "m").replace("vv", "w")


def _distance(a: str, b: str) -> int:
    """Levenshtein distance (small strings)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def lookalike(sender_domain: str, owner_domain: str) -> bool:
    """Whether ``sender_domain`` imitates ``owner_domain`` without being it (or a subdomain)."""
    sender, owner = sender_domain.lower().strip("."), owner_domain.lower().strip(".")
    if not sender or not owner or within_domain(sender_domain, owner_domain):
        return False
    theirs, ours = _skeleton(_brand(sender)), _skeleton(_brand(owner))
    if len(ours) < 4:
        return False
    return (
        ours in theirs
        or _skeleton(owner.replace(".", "")) in theirs
        or _distance(theirs, ours) <= 2
    )


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

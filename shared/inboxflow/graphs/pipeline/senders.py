"""Look-alike senders: mail dressed as the mailbox's own organisation or as a known name.

A payment-diversion scam writes from ``brightlane-io.com`` to ``brightlane.io``
under the owner's own name; a phishing mail signs as "PayPaI" from
``paypa1-account.example``. Neither is the party it imitates, whatever its
SPF and DKIM say (the look-alike domain passes its own). :func:`lookalike_reason`
names the imitation, or None; the classifier counts it as spam evidence and the
``lookalike_sender`` guard keeps such mail away from an automatic reply.
"""

from __future__ import annotations

import re

from ...mail.addresses import within_domain
from ..cue_matching import fold

_DIGIT_LOOKS = str.maketrans({"0": "o", "1": "l", "3": "e", "5": "s", "|": "l"})
_CAPITAL_I_AS_L = re.compile(r"(?<=[a-z])I(?![a-z])")
"""A capital I ending a lowercase word ("PayPaI"): an l in disguise."""
_LETTERS_AND_DIGITS = re.compile(r"[a-z]*\d[a-z\d]*")


def skeleton(text: str) -> str:
    """What ``text`` looks like: folded, look-alike digits as letters, ``rn`` as ``m``."""
    folded = fold(_CAPITAL_I_AS_L.sub("l", text)).translate(_DIGIT_LOOKS)
    return folded.replace("rn", "m").replace("vv", "w")


def _domain(address: str) -> str:
    return address.rpartition("@")[2].strip().lower().rstrip(".")


def _squash(domain: str) -> str:
    return re.sub(r"[^a-z]", "", skeleton(domain))


def _near(a: str, b: str) -> bool:
    """One letter changed, added, dropped or two swapped (strings of six letters or more)."""
    if a == b or min(len(a), len(b)) < 6 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diffs) == 1 or (
            len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def lookalike_reason(
    sender_address: str, sender_name: str, mailbox: str, mailbox_name: str = ""
) -> str | None:
    """Why the sender imitates the mailbox's organisation or a name it misspells, or None.

    Args:
        sender_address: the From address.
        sender_name: the From display name.
        mailbox: the address the mail was delivered to (our own).
        mailbox_name: the display name the mail gives that address, if any.
    """
    sender_domain, own_domain = _domain(sender_address), _domain(mailbox)
    if not sender_domain or not own_domain:
        return None
    # by the domains as written: _domain's Unicode lowercasing makes a Kelvin sign a k
    if not within_domain(sender_address.rpartition("@")[2], mailbox.rpartition("@")[2]):
        own = _squash(own_domain)
        without_tld = sender_domain.rpartition(".")[0] or sender_domain
        if own in (_squash(sender_domain), _squash(without_tld)) or _near(
            _squash(sender_domain), own
        ):
            return f"sender domain {sender_domain} imitates {own_domain}"
        own_local = mailbox.partition("@")[0].lower()
        if sender_address.partition("@")[0].lower() == own_local:
            return f"sender {sender_address} uses the mailbox's own name {own_local}@ from another domain"
        if mailbox_name and fold(sender_name).strip() == fold(mailbox_name).strip():
            return f'sender "{sender_name}" <{sender_address}> uses the mailbox owner\'s name'
    for word in re.findall(r"[\w|]+", f"{sender_name} {sender_domain.replace('-', ' ')}"):
        folded = word.lower()
        looks = skeleton(word)
        disguised = _CAPITAL_I_AS_L.search(word) or (
            _LETTERS_AND_DIGITS.fullmatch(folded)
            and looks.isalpha()
            and sum(ch.isalpha() for ch in folded) >= 3
        )
        if disguised and looks != folded:
            return f'"{word}" in the sender spells "{looks}" with look-alike characters'
    return None


__all__ = ["lookalike_reason", "skeleton"]

"""Look-alike senders: mail dressed as the mailbox's own organisation or as a known name.

A payment-diversion scam writes from ``brightlane-io.com`` to ``brightlane.io``
under the owner's own name; a phishing mail signs as "PayPaI" from
``paypa1-account.example``. Neither is the party it imitates, whatever its
SPF and DKIM say (the look-alike domain passes its own). :func:`lookalike_reason`
names the imitation (told by :mod:`..lookalike`), or None; the classifier counts it as spam evidence and the
``lookalike_sender`` guard keeps such mail away from an automatic reply.
"""

from __future__ import annotations

import functools

from ...mail.addresses import within_domain
from ..cue_matching import fold
from ..lookalike import disguised_word, resemblance


def _domain(address: str) -> str:
    return address.rpartition("@")[2].strip().lower().rstrip(".")


@functools.lru_cache(maxsize=1024)
def lookalike_reason(
    sender_address: str, sender_name: str, mailbox: str, mailbox_name: str = ""
) -> str | None:
    """Why the sender imitates the mailbox's organisation or a name it misspells, or None.

    Kept for the last 1,024 questions (strings in, a string out): the classifier and the
    ``lookalike_sender`` guard ask the same one of each email.

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
    written, own_written = sender_address.rpartition("@")[2], mailbox.rpartition("@")[2]
    resembles = resemblance(written, own_written)
    if resembles and resembles.letters_near:
        return f"sender domain {sender_domain} imitates {own_domain}"
    if not within_domain(written, own_written):
        own_local = mailbox.partition("@")[0].lower()
        if sender_address.partition("@")[0].lower() == own_local:
            return f"sender {sender_address} uses the mailbox's own name {own_local}@ from another domain"
        if mailbox_name and fold(sender_name).strip() == fold(mailbox_name).strip():
            return f'sender "{sender_name}" <{sender_address}> uses the mailbox owner\'s name'
    disguised = disguised_word(f"{sender_name} {sender_domain.replace('-', ' ')}")
    if disguised:
        return f'"{disguised[0]}" in the sender spells "{disguised[1]}" with look-alike characters'
    return None


__all__ = ["lookalike_reason"]

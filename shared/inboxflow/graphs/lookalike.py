"""Look-alike senders: a domain dressed as another one, a name spelt with look-alike characters.

A payment-diversion scam writes from ``brightlane-io.com`` to ``brightlane.io``; a phishing
mail signs as "PayPaI" from ``paypa1-account.example``. Neither is the party it imitates,
whatever its SPF and DKIM say (the look-alike domain passes its own). This module is the
one place that knows what passes for what (:data:`CONFUSABLES`) and tells a look-alike:

- :func:`resemblance`: how a domain resembles a known one without being it (the graph
  decides which resemblance makes it a look-alike);
- :func:`disguised_word`: a word of a name or domain that spells another with look-alike
  characters (``Micros0ft``, ``PayPaI``);
- :func:`variants`: the domains one confusable swap away (to ask a directory whether the
  imitated address is known);
- :func:`skeleton`: what a text looks like once look-alike characters are read as the
  letters they pass for.

What a graph does with a look-alike (a flag, a person's review, no reply) is the graph's
policy, kept in its own ``senders.py``. The module sits beside :mod:`.cue_matching` (whose
folding it shares) because the graphs are independent of each other and share only
``graphs/`` modules.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..mail.addresses import within_domain
from .cue_matching import fold

CONFUSABLES: tuple[tuple[str, str, bool], ...] = (
    ("rn", "m", True),
    ("vv", "w", True),
    ("l", "i", True),
    ("1", "l", False),
    ("1", "i", False),
    ("0", "o", True),
    ("3", "e", False),
    ("5", "s", False),
    ("|", "l", False),
    ("$", "s", False),
)
"""What a look-alike writes for a letter: (written, the letter it passes for, and whether the
letter passes for what is written too). ``l`` and ``i`` pass for each other; a digit or a
sign is read as the first letter it is listed for (``1`` as ``l``)."""

_LETTERS = {"l", "i"}
"""Letters that pass for each other: one letter in a comparison (:func:`_look`)."""
_CHARACTERS = str.maketrans(
    {written: letter for written, letter, _ in reversed(CONFUSABLES) if len(written) == 1}
    | {letter: letter for letter in _LETTERS}
)
_SEQUENCES = tuple((written, letter) for written, letter, _ in CONFUSABLES if len(written) > 1)
_CAPITAL_I_AS_L = re.compile(r"(?<=[a-z])I(?![a-z])")
"""A capital I ending a lowercase word ("PayPaI"): an l in disguise."""
_LETTERS_AND_DIGITS = re.compile(r"[a-z]*\d[a-z\d]*")
_NOT_A_LETTER = re.compile(r"[^a-z]")
_MIN_BRAND = 4
"""A known name shorter than this (``ab.io``) is found inside too many others to count."""
_MAX_RUN_ON = 4
"""``brightlane-io.com`` for ``brightlane.io``: at most this many characters run on."""
MAX_VARIANTS = 12
"""At most this many variants of one domain (each may cost a directory lookup)."""


def skeleton(text: str) -> str:
    """What ``text`` looks like: folded, look-alike digits and signs as letters, ``rn`` as ``m``
    (``Micros0ft`` -> ``microsoft``, ``PayPaI`` -> ``paypal``)."""
    looks = fold(_CAPITAL_I_AS_L.sub("l", text)).translate(_CHARACTERS)
    for written, letter in _SEQUENCES:
        looks = looks.replace(written, letter)
    return looks


def _look(text: str) -> str:
    """:func:`skeleton` with the letters that pass for each other as one (``i`` as ``l``)."""
    return skeleton(text).replace("i", "l")


def _letters(domain: str) -> str:
    return _NOT_A_LETTER.sub("", skeleton(domain))


def _brand(domain: str) -> str:
    """The domain without its last label, letters and digits only (``brightlane-io.com`` ->
    ``brightlaneio``; ``mail.brightlane.io`` -> ``mailbrightlane``)."""
    labels = domain.split(".")
    core = labels[:-1] if len(labels) > 1 else labels
    return "".join(ch for ch in "".join(core) if ch.isalnum())


def _distance(a: str, b: str) -> int:
    """Levenshtein distance, a column of the table at a time in the bits of two integers
    (Myers' bit-parallel algorithm, as Hyyrö wrote it for edit distance): one step per
    character of ``b`` instead of one per cell."""
    if not a or not b:
        return len(a) + len(b)
    where: dict[str, int] = {}
    for i, char in enumerate(a):
        where[char] = where.get(char, 0) | 1 << i
    full, last = (1 << len(a)) - 1, 1 << (len(a) - 1)
    up, down, score = full, 0, len(a)  # the column's +1 and -1 steps, its last cell
    for char in b:
        equal = where.get(char, 0)
        across = equal | down
        xh = (((equal & up) + up) ^ up) | equal
        right = down | ~(xh | up)
        left = up & xh
        if right & last:
            score += 1
        elif left & last:
            score -= 1
        right = (right << 1) | 1
        left <<= 1
        up = (left | ~(across | right)) & full
        down = right & across & full
    return score


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


@dataclass(frozen=True)
class Resemblance:
    """How a domain resembles a known one it is not; which of these count is a graph's policy.

    Attributes:
        same_look: the same once look-alike characters are read as the letters they pass
            for (``brlghtpath.example``, ``northwlnd.example``).
        runs_on: the known domain with at most four characters run on (``brightlane-io.com``
            for ``brightlane.io``).
        letters_near: its letters are the known domain's, with or without its own last label,
            or one letter off (``quillfield-example.com``, ``qui11field.example``,
            ``quilfield.example``; six letters or more).
        holds_name: the known name is inside its name (``brightlane-payments.com``).
        name_edits: edits between the two names without their last label (``brightlane.co``:
            0); None when the known name is too short to compare (under four characters).
    """

    same_look: bool
    runs_on: bool
    letters_near: bool
    holds_name: bool
    name_edits: int | None


@functools.lru_cache(maxsize=1024)
def resemblance(domain: str, known: str) -> Resemblance | None:
    """How ``domain`` resembles ``known``, or None when it is ``known``, one of its
    subdomains, or either is empty. Domains are compared as written by :func:`within_domain`
    (a sign that only Unicode lowercasing makes a ``k`` is not ``k`` there).

    Kept for the last 1,024 pairs (a frozen answer of two strings): a graph asks about the
    same sender and mailbox in its classifier and again in its guard."""
    sender, own = domain.strip().lower().strip("."), known.strip().lower().strip(".")
    if not sender or not own or within_domain(domain.strip(), known.strip()):
        return None
    squashed = "".join(ch for ch in sender if ch.isalnum())
    own_squashed = "".join(ch for ch in own if ch.isalnum())
    own_letters = _letters(own)
    without_tld = sender.rpartition(".")[0] or sender
    theirs, ours = _look(_brand(sender)), _look(_brand(own))
    return Resemblance(
        same_look=_look(sender) == _look(own),
        runs_on=squashed.startswith(own_squashed)
        and len(squashed) - len(own_squashed) <= _MAX_RUN_ON,
        letters_near=own_letters in (_letters(sender), _letters(without_tld))
        or _near(_letters(sender), own_letters),
        holds_name=len(ours) >= _MIN_BRAND
        and (ours in theirs or _look(own.replace(".", "")) in theirs),
        name_edits=_distance(theirs, ours) if len(ours) >= _MIN_BRAND else None,
    )


def disguised_word(text: str) -> tuple[str, str] | None:
    """The first word of ``text`` spelt with look-alike characters and what it spells
    (``Micros0ft`` -> ``("Micros0ft", "microsoft")``), or None."""
    for word in re.findall(r"[\w|]+", text):
        folded = word.lower()
        looks = skeleton(word)
        disguised = _CAPITAL_I_AS_L.search(word) or (
            _LETTERS_AND_DIGITS.fullmatch(folded)
            and looks.isalpha()
            and sum(ch.isalpha() for ch in folded) >= 3
        )
        if disguised and looks != folded:
            return word, looks
    return None


def variants(domain: str) -> list[str]:
    """Domains one confusable swap away from ``domain`` (at most :data:`MAX_VARIANTS`), in the
    order of :data:`CONFUSABLES`, each swap then its reverse where it goes both ways."""
    name, dot, tld = domain.partition(".")
    swaps = [
        swap
        for written, letter, both_ways in CONFUSABLES
        for swap in ((written, letter), (letter, written))[: 2 if both_ways else 1]
    ]
    found: list[str] = []
    for old, new in swaps:
        start = name.find(old)
        while start != -1 and len(found) < MAX_VARIANTS:
            candidate = name[:start] + new + name[start + len(old) :] + dot + tld
            if candidate != domain and candidate not in found:
                found.append(candidate)
            start = name.find(old, start + 1)
    return found[:MAX_VARIANTS]


__all__ = [
    "CONFUSABLES",
    "MAX_VARIANTS",
    "Resemblance",
    "disguised_word",
    "resemblance",
    "skeleton",
    "variants",
]

"""The planner's text folding: :func:`~..cue_matching.fold_one_for_one`, and the Latin letters
Unicode does not decompose (Polish ``ł``, Danish ``ø``, ``đ``) folded too, still one character
for one, so a span of the folded text is the same span of the text as written.

:class:`Phrases` finds a list of phrases (labels, state names, car makes) in folded text by
lookup, where one regular expression of them all would cost a large compile at import.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable

import ahocorasick

from ..cue_matching import fold_one_for_one

_UNDECOMPOSED = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "\u0131": "i"})


def fold(text: str) -> str:
    """``text`` lower-cased without diacritics, one character for one (``Uderzył`` -> ``uderzyl``)."""
    return fold_one_for_one(text).translate(_UNDECOMPOSED)


_APOSTROPHES = ("'", "\u2019", "")
_ODD_SPACE = re.compile(r"[^\S ]| {2}")
_SPACE_RUN = re.compile(r"\s+")

Found = tuple[int, int, int]
"""A phrase found: where it starts and ends in the text, and its rank (0 is tried first)."""


class Phrases:
    """Phrases found in folded text as one regular expression of them all would find them:
    ``a|b|...`` of the folded phrases, longest first, a space matching any run of whitespace,
    an apostrophe optional (``'`` or ``’``).

    :meth:`found` lists every place a phrase matches, by start and then by the rank the
    expression tries it in; a caller goes through them as the expression's search would (the
    first start where a phrase and what must follow it both match). The table and its
    Aho-Corasick automaton are built on first use.

    The phrases must hold what makes each one match one span at a place: single spaces, no
    space or apostrophe first or last, no other whitespace (a test holds the planner's lists).

    Args:
        phrases: the phrases as the data writes them (folded here; duplicates dropped).
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        self._written = tuple(phrases)

    @functools.cached_property
    def ranked(self) -> tuple[str, ...]:
        """The folded phrases in the order the expression tries them: longest first."""
        return tuple(sorted({fold(p) for p in self._written}, key=lambda p: (-len(p), p)))

    @functools.cached_property
    def _automaton(self) -> ahocorasick.Automaton:
        keys: dict[str, list[int]] = {}
        for rank, phrase in enumerate(self.ranked):
            parts = phrase.split("'")
            for marks in itertools.product(_APOSTROPHES, repeat=len(parts) - 1):
                key = parts[0] + "".join(m + p for m, p in zip(marks, parts[1:], strict=True))
                keys.setdefault(key, []).append(rank)
        automaton = ahocorasick.Automaton()
        for key, ranks in keys.items():
            automaton.add_word(key, (len(key), tuple(ranks)))
        automaton.make_automaton()
        return automaton

    def found(self, text: str) -> tuple[Found, ...]:
        """Every (start, end, rank) of a phrase in ``text``, by start, then rank."""
        return _found(self, text)


@functools.lru_cache(maxsize=512)
def _found(phrases: Phrases, text: str) -> tuple[Found, ...]:
    spaced, where = _spaced(text)
    found: list[Found] = []
    for last, (length, ranks) in phrases._automaton.iter(spaced):
        start = last + 1 - length
        if where is not None:
            start, last = where[start], where[last]
        found.extend((start, last + 1, rank) for rank in ranks)
    found.sort(key=_start_rank)
    return tuple(found)


def _start_rank(found: Found) -> tuple[int, int]:
    return found[0], found[2]


def _spaced(text: str) -> tuple[str, tuple[int, ...] | None]:
    """``text`` with every whitespace run one space, and where each of its characters is in
    ``text`` (None when nothing changed)."""
    if _ODD_SPACE.search(text) is None:
        return text, None
    where: list[int] = []
    at = 0
    for run in _SPACE_RUN.finditer(text):
        where.extend(range(at, run.start() + 1))
        at = run.end()
    where.extend(range(at, len(text)))
    return _SPACE_RUN.sub(" ", text), tuple(where)


__all__ = ["Found", "Phrases", "fold"]

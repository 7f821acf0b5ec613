"""The planner's text folding: :func:`~..cue_matching.fold_one_for_one`, and the Latin letters
Unicode does not decompose (Polish ``ł``, Danish ``ø``, ``đ``) folded too, still one character
for one, so a span of the folded text is the same span of the text as written.

:class:`PhraseLists` finds lists of phrases (labels, state names, car makes) in folded text by
lookup, where one regular expression of them all would cost a large compile at import.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Mapping

import ahocorasick

from ..cue_matching import fold_one_for_one

_UNDECOMPOSED = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "\u0131": "i"})


def fold(text: str) -> str:
    """``text`` lower-cased without diacritics, one character for one (``Uderzył`` -> ``uderzyl``)."""
    if text.isascii():
        return text.lower()  # what the folding gives an ASCII text, without a call per character
    return fold_one_for_one(text).translate(_UNDECOMPOSED)


_APOSTROPHES = ("'", "\u2019", "")
_ODD_SPACE = re.compile(r"[^\S ]| {2}")
_SPACE_RUN = re.compile(r"\s+")

Found = tuple[int, int, int]
"""A phrase found: where it starts and ends in the text, and its rank (0 is tried first)."""


class PhraseLists:
    """Named lists of phrases, each found in folded text as one regular expression of its
    phrases would find them: ``a|b|...`` of the folded phrases, longest first, a space
    matching any run of whitespace, an apostrophe optional (``'`` or U+2019).

    ``lists[name]`` is one list (:class:`Phrases`); a text is read once for all of them (one
    Aho-Corasick automaton of every list's phrases, built on first use), and what it holds is
    kept for the next list asked about it.

    The phrases must hold what makes each one match one span at a place: single spaces, no
    space or apostrophe first or last, no other whitespace (a test holds the planner's lists).

    Args:
        lists: the phrases of each list as the data writes them (folded here; duplicates dropped).
    """

    def __init__(self, lists: Mapping[str, Iterable[str]]) -> None:
        self._written = [tuple(phrases) for phrases in lists.values()]
        self.lists = {name: Phrases(self, index) for index, name in enumerate(lists)}

    def __getitem__(self, name: str) -> Phrases:
        return self.lists[name]

    @functools.cached_property
    def ranked(self) -> list[tuple[str, ...]]:
        """Each list's folded phrases in the order the expression tries them: longest first."""
        return [
            tuple(sorted({fold(p) for p in written}, key=lambda p: (-len(p), p)))
            for written in self._written
        ]

    @functools.cached_property
    def _automaton(self) -> ahocorasick.Automaton:
        keys: dict[str, tuple[tuple[int, int], ...]] = {}
        for index, ranked in enumerate(self.ranked):
            for rank, phrase in enumerate(ranked):
                if "'" not in phrase:
                    keys[phrase] = (*keys.get(phrase, ()), (index, rank))
                    continue
                parts = phrase.split("'")  # each apostrophe may be written ', U+2019 or not at all
                for marks in itertools.product(_APOSTROPHES, repeat=len(parts) - 1):
                    key = parts[0] + "".join(m + p for m, p in zip(marks, parts[1:], strict=True))
                    keys[key] = (*keys.get(key, ()), (index, rank))
        automaton = ahocorasick.Automaton()
        for key, entries in keys.items():
            automaton.add_word(key, (len(key), entries))
        automaton.make_automaton()
        return automaton


class Phrases:
    """One list of a :class:`PhraseLists`: :meth:`found` lists every place a phrase of it
    matches, by start and then by the rank the expression tries it in; a caller goes through
    them as the expression's search would (the first start where a phrase and what must
    follow it both match)."""

    def __init__(self, lists: PhraseLists, index: int) -> None:
        self._lists = lists
        self._index = index

    @property
    def ranked(self) -> tuple[str, ...]:
        """The folded phrases in the order the expression tries them: longest first."""
        return self._lists.ranked[self._index]

    def found(self, text: str) -> tuple[Found, ...]:
        """Every (start, end, rank) of a phrase in ``text``, by start, then rank."""
        return _found(self._lists, text)[self._index]


def phrases(written: Iterable[str]) -> Phrases:
    """One list of phrases on its own (:class:`PhraseLists` of one)."""
    return PhraseLists({"": written}).lists[""]


@functools.lru_cache(maxsize=256)
def _found(lists: PhraseLists, text: str) -> tuple[tuple[Found, ...], ...]:
    spaced, where = _spaced(text)
    found: list[list[Found]] = [[] for _ in lists._written]
    for last, (length, entries) in lists._automaton.iter(spaced):
        start = last + 1 - length
        if where is not None:
            start, last = where[start], where[last]
        for index, rank in entries:
            found[index].append((start, last + 1, rank))
    for listed in found:
        if len(listed) > 1:
            listed.sort(key=_start_rank)
    return tuple(map(tuple, found))


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


__all__ = ["Found", "PhraseLists", "Phrases", "fold", "phrases"]

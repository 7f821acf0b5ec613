"""Finding cue words in mail of any language: what several graphs' offline models and guards share.

A graph keeps its cue lists as data beside it (per language, read by
:mod:`.word_data`); this module only matches them. Text and cues are folded the same way (:func:`fold`): case-folded,
Latin diacritics dropped (``stížnost`` and ``stiznost`` are one cue), fullwidth
forms and typographic quotes made plain. A cue matches at the start of a word
and may run on to the end of it, so one stem covers a word's inflections
(``nespokojen`` finds nespokojený, nespokojená, nespokojeni); spaces in a cue
match any run of whitespace. A cue starting with ``*`` may begin inside a word
(German compounds: ``*erstatt`` finds Rückerstattung). Cues in Japanese or
Chinese script match as plain substrings: those scripts put no spaces between
words.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import ahocorasick

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_LATIN_END = 0x250
"""Code points below this are Latin letters whose marks are folded away; other scripts
(Japanese kana with their voicing marks) keep theirs."""


def fold(text: str) -> str:
    """``text`` as cues are matched against it: case-folded, Latin diacritics dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if text.isascii() or not _folded_chars().search(text):
        return text  # no curly quote, no Latin mark: a translation would copy it unchanged
    return text.translate(_fold_table())


def fold_one_for_one(text: str) -> str:
    """``text`` lower-cased without diacritics, one character for one (so spans carry over):
    ``Código`` -> ``codigo``, ``Řidičský`` -> ``ridicsky``, a full-width digit -> its ASCII digit."""
    out = []
    for char in text:
        base = unicodedata.normalize("NFKD", char)[:1] or char
        lower = base.lower()
        out.append(lower if len(lower) == 1 else base)
    return "".join(out)


def _fold_char(ch: str) -> str:
    if ch.isascii():
        return ch
    return "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))


@functools.cache
def _latin_marks() -> dict[int, str]:
    """Each Latin letter below ``_LATIN_END`` that :func:`fold` changes, to what it becomes (one
    ``str.translate`` instead of a Python call per character)."""
    return {
        code: _fold_char(chr(code))
        for code in range(0x80, _LATIN_END)
        if _fold_char(chr(code)) != chr(code)
    }


@functools.cache
def _fold_table() -> dict[int, str]:
    """``_QUOTES`` and :func:`_latin_marks` in one table (their keys are apart and the quotes
    become ASCII, which the marks leave alone): one ``str.translate``, which looks every
    character of a non-ASCII text up in a dict, instead of two."""
    return {**_latin_marks(), **_QUOTES}


@functools.cache
def _folded_chars() -> re.Pattern[str]:
    """One character :func:`fold`'s translation changes (a curly quote, a Latin letter with a
    mark): a text without one is copied unchanged, and a search for one class runs in C."""
    return re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(_fold_table())) + "]")


def _unspaced_script(text: str) -> bool:
    """Japanese or Chinese: kana, CJK ideographs, the ideographic punctuation block."""
    return any(
        0x3000 <= ord(ch) <= 0x30FF or 0x3400 <= ord(ch) <= 0x9FFF or 0xFF66 <= ord(ch) <= 0xFF9F
        for ch in text
    )


@dataclass(frozen=True)
class Cue:
    """One cue of a list: the words as written in the data, and where they came from."""

    words: str
    weight: float = 1.0
    label: str = ""
    """What the list says the cue is (a language, a category)."""


@dataclass(frozen=True)
class CueMatch:
    """A cue found in a text: the cue, and the text it matched (folded)."""

    cue: Cue
    text: str


class CueSet:
    """Cues compiled into one automaton; :meth:`find` lists the distinct cues a text holds.

    :meth:`find` reads the text once, whatever the number of cues (Aho-Corasick, with
    whitespace runs read as one space), then goes left to right as one regular expression of
    the cues, longest first, would: at the first place a cue may start (a word's start, or
    anywhere for ``*`` cues and Japanese or Chinese ones) the longest cue there wins, runs on
    to the end of its word, and the search goes on after it (``charged twice`` hides
    ``twice``).

    Args:
        cues: the cues; two with the same folded words keep the first.
    """

    def __init__(self, cues: Iterable[Cue]) -> None:
        by_words: dict[str, Cue] = {}
        for cue in cues:
            key = fold(cue.words.strip())
            if key.lstrip("*") and key not in by_words:
                by_words[key] = cue
        # Longest first: "charged twice" is tried before "charge"; a tie keeps the list's order.
        ordered = sorted(by_words.items(), key=lambda item: len(item[0].lstrip("*")), reverse=True)
        self._cues = [cue for _, cue in ordered]
        self._keys = [key for key, _ in ordered]
        self._automaton = _automaton(self._keys)

    def __len__(self) -> int:
        return len(self._cues)

    def find(self, text: str, *, folded: bool = False) -> list[CueMatch]:
        """The distinct cues in ``text``, in the order they first occur.

        Args:
            text: the text to search.
            folded: ``text`` is already :func:`fold`-ed (saves folding it again).
        """
        if self._automaton is None:
            return []
        haystack = text if folded else fold(text)
        spaced = _single_spaced(haystack)
        starts: dict[int, _Entry] = {}
        for last, entries in self._automaton.iter(spaced):
            _claim(starts, spaced, last, entries)
        return self._matches(haystack, spaced, starts)

    def _matches(self, haystack: str, spaced: str, starts: dict[int, _Entry]) -> list[CueMatch]:
        """The cues found, left to right, from where each may start (see :func:`_claim`)."""
        seen: set[int] = set()
        orders: list[int] = []
        spans: list[tuple[int, int]] = []
        position = 0
        for start in sorted(starts):
            if start < position:
                continue
            order, length, _, runs_on = starts[start]
            position = start + length
            if runs_on:
                position += len(_WORD_TAIL.match(spaced, position)[0])  # type: ignore[index]
            if order not in seen:
                seen.add(order)
                orders.append(order)
                spans.append((start, position))
        texts = _in_text(haystack, spaced, spans) if spans else []
        return [
            CueMatch(self._cues[order], text) for order, text in zip(orders, texts, strict=True)
        ]


class CueSets:
    """Several named :class:`CueSet` read in one pass over a text.

    :meth:`find` gives for each set what its own :meth:`CueSet.find` gives, reading the text
    once for all of them (one automaton of every set's words) instead of once per set.

    Args:
        sets: the cue sets by name.
    """

    def __init__(self, sets: Mapping[str, CueSet]) -> None:
        self._sets = dict(sets)
        listed: dict[str, list[tuple[int, tuple[_Entry, ...]]]] = {}
        for index, cues in enumerate(self._sets.values()):
            for body, entries in _entries(cues._keys).items():
                listed.setdefault(body, []).append((index, entries))
        self._automaton: ahocorasick.Automaton | None = None
        if listed:
            self._automaton = ahocorasick.Automaton()
            for body, per_set in listed.items():
                self._automaton.add_word(body, tuple(per_set))
            self._automaton.make_automaton()

    def __getitem__(self, name: str) -> CueSet:
        return self._sets[name]

    def find(self, text: str, *, folded: bool = False) -> dict[str, list[CueMatch]]:
        """Per set, in the sets' order, the distinct cues in ``text`` (:meth:`CueSet.find`).

        Args:
            text: the text to search.
            folded: ``text`` is already :func:`fold`-ed.
        """
        starts: list[dict[int, _Entry]] = [{} for _ in self._sets]
        haystack = text if folded else fold(text)
        spaced = _single_spaced(haystack)
        if self._automaton is not None:
            for last, per_set in self._automaton.iter(spaced):
                for index, entries in per_set:
                    _claim(starts[index], spaced, last, entries)
        return {
            name: cues._matches(haystack, spaced, found) if found else []
            for (name, cues), found in zip(self._sets.items(), starts, strict=True)
        }


_Entry = tuple[int, int, bool, bool]
"""A cue in the automaton: its order (longest first), its length with single spaces, whether
it starts only at a word's start, whether it runs on to the end of the word."""

_SPACE_RUNS = re.compile(r"\s\s+")
_WORD_TAIL = re.compile(r"[\w'-]*")


def _entries(keys: list[str]) -> dict[str, tuple[_Entry, ...]]:
    """The cues' words, spaces single, each to its entries (several cues share ``*x`` and ``x``)."""
    entries: dict[str, list[_Entry]] = {}
    for order, key in enumerate(keys):
        words = key.lstrip("*")
        body = " ".join(words.split())
        unspaced = _unspaced_script(words)
        at_word_start = not key.startswith("*") and not unspaced
        entries.setdefault(body, []).append((order, len(body), at_word_start, not unspaced))
    return {body: tuple(listed) for body, listed in entries.items()}


def _automaton(keys: list[str]) -> ahocorasick.Automaton | None:
    """One automaton of the cues' words (see :func:`_entries`), or None without cues."""
    if not keys:
        return None
    automaton = ahocorasick.Automaton()
    for body, listed in _entries(keys).items():
        automaton.add_word(body, listed)
    automaton.make_automaton()
    return automaton


def _claim(starts: dict[int, _Entry], spaced: str, last: int, entries: tuple[_Entry, ...]) -> None:
    """Words found ending at ``last``: the first of their cues that may start there claims the
    place, unless a cue earlier in order holds it."""
    for entry in entries:
        order, length, at_word_start, _ = entry
        start = last + 1 - length
        if at_word_start and start and _is_word(spaced[start - 1]):
            continue
        held = starts.get(start)
        if held is None or order < held[0]:
            starts[start] = entry
        break


def _single_spaced(text: str) -> str:
    """``text`` with every whitespace run one space (``re.sub(r"\\s+", " ", text)``, faster)."""
    inner = " ".join(text.split())
    if not inner:
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return lead + inner + trail


def _is_word(char: str) -> bool:
    """``char`` is what ``\\w`` matches in a ``str`` pattern."""
    return char.isalnum() or char == "_"


def _in_text(haystack: str, spaced: str, spans: list[tuple[int, int]]) -> list[str]:
    """The text of each span of ``spaced`` as ``haystack`` has it (whitespace runs and all)."""
    if len(haystack) == len(spaced):
        return [haystack[start:end] for start, end in spans]
    runs: list[int] = []  # where, in ``spaced``, several whitespace characters became one space
    shifts: list[int] = []  # how far ``haystack`` is ahead of ``spaced`` after each such run
    shift = 0
    last = spans[-1][1]
    for run in _SPACE_RUNS.finditer(haystack):
        if run.start() - shift >= last:
            break
        runs.append(run.start() - shift)
        shift += run.end() - run.start() - 1
        shifts.append(shift)

    def original(position: int) -> int:
        before = bisect.bisect_left(runs, position)
        return position + (shifts[before - 1] if before else 0)

    return [haystack[original(start) : original(end - 1) + 1] for start, end in spans]


def cue_set(lists: Mapping[str, Mapping[str, float] | Iterable[str]]) -> CueSet:
    """A :class:`CueSet` of labelled lists: ``{label: {words: weight}}`` or ``{label: [words]}``."""
    cues: list[Cue] = []
    for label, entries in lists.items():
        if isinstance(entries, Mapping):
            cues.extend(Cue(words, float(weight), label) for words, weight in entries.items())
        else:
            cues.extend(Cue(words, 1.0, label) for words in entries)
    return CueSet(cues)


__all__ = ["Cue", "CueMatch", "CueSet", "CueSets", "cue_set", "fold", "fold_one_for_one"]

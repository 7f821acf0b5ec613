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

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_LATIN_END = 0x250
"""Code points below this are Latin letters whose marks are folded away; other scripts
(Japanese kana with their voicing marks) keep theirs."""


def fold(text: str) -> str:
    """``text`` as cues are matched against it: case-folded, Latin diacritics dropped."""
    text = unicodedata.normalize("NFKC", text).casefold().translate(_QUOTES)
    if text.isascii():
        return text
    return "".join(_fold_char(ch) if ord(ch) < _LATIN_END else ch for ch in text)


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
    """Cues compiled into one pattern; :meth:`find` lists the distinct cues a text holds.

    Args:
        cues: the cues; two with the same folded words keep the first.
    """

    def __init__(self, cues: Iterable[Cue]) -> None:
        by_words: dict[str, Cue] = {}
        for cue in cues:
            key = fold(cue.words.strip())
            if key.lstrip("*") and key not in by_words:
                by_words[key] = cue
        # Longest first: "charged twice" is tried before "charge".
        ordered = sorted(by_words.items(), key=lambda item: len(item[0].lstrip("*")), reverse=True)
        self._cues = [cue for _, cue in ordered]
        alternatives = [_alternative(key) for key, _ in ordered]
        self._pattern = re.compile("|".join(alternatives) or r"(?!x)x")

    def __len__(self) -> int:
        return len(self._cues)

    def find(self, text: str, *, folded: bool = False) -> list[CueMatch]:
        """The distinct cues in ``text``, in the order they first occur.

        Args:
            text: the text to search.
            folded: ``text`` is already :func:`fold`-ed (saves folding it again).
        """
        haystack = text if folded else fold(text)
        seen: set[int] = set()
        found: list[CueMatch] = []
        for match in self._pattern.finditer(haystack):
            index = (match.lastindex or 1) - 1
            if index not in seen:
                seen.add(index)
                found.append(CueMatch(self._cues[index], match.group(0).strip()))
        return found


def _alternative(key: str) -> str:
    inside = key.startswith("*")
    words = key.lstrip("*")
    body = r"\s+".join(re.escape(part) for part in words.split())
    if _unspaced_script(words):
        return f"({body})"
    start = "" if inside else r"(?<!\w)"
    return f"{start}({body})[\\w'-]*"


def cue_set(lists: Mapping[str, Mapping[str, float] | Iterable[str]]) -> CueSet:
    """A :class:`CueSet` of labelled lists: ``{label: {words: weight}}`` or ``{label: [words]}``."""
    cues: list[Cue] = []
    for label, entries in lists.items():
        if isinstance(entries, Mapping):
            cues.extend(Cue(words, float(weight), label) for words, weight in entries.items())
        else:
            cues.extend(Cue(words, 1.0, label) for words in entries)
    return CueSet(cues)


__all__ = ["Cue", "CueMatch", "CueSet", "cue_set", "fold", "fold_one_for_one"]

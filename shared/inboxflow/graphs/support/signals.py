"""What a support message is about, in any of the desk's languages: cues found in text.

The cue lists are data, one TOML file per language in :mod:`.cues`. Text and cues
are folded alike (NFKC, case-folded, accents removed from Latin letters,
punctuation read as spaces), so ``Výpadek``, ``vypadek`` and ``VÝPADEK`` read the
same; Japanese cues match anywhere in the text, the others whole words (a
trailing ``*`` matches any ending, ``~`` up to five words in between). Every
language's cues run on every text: a message may mix languages, and the
detector is unsure of short ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from .. import cue_matching
from ..word_data import read_cue_lists
from .cues import LANGUAGES

SIGNALS = (
    "security",
    "outage",
    "data_loss",
    "billing_error",
    "service_disruption",
    "general_question",
)
"""The cue kinds that are the supervisor's signals (``tasks.Signal``)."""
PROBLEMS = frozenset({"outage", "data_loss", "billing_error", "service_disruption"})
"""Signals of something broken (as opposed to a question)."""
GAP_WORDS = 5
_NOT_WORD = re.compile(r"[^\w?]+")


def fold(text: str) -> str:
    """``text`` as cues are matched (``cue_matching.fold``), with punctuation (but ``?``)
    as single spaces and a space at each end, so a phrase matches whole words."""
    return " " + _NOT_WORD.sub(" ", cue_matching.fold(text)).strip() + " "


@dataclass(frozen=True)
class Cue:
    """One phrase of one language's list for one kind (``security``, ``demand``...)."""

    kind: str
    language: str
    phrase: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Hit:
    """A cue found in a text: its kind, the phrase, its language, and the words it matched."""

    kind: str
    phrase: str
    language: str
    matched: str

    def __str__(self) -> str:
        return f'{self.kind} cue "{self.matched.strip()}" ({self.language})'


def compile_phrase(phrase: str, match: str) -> re.Pattern[str]:
    """The pattern of one cue phrase (see the module docstring for its syntax)."""
    folded = fold(phrase).strip()
    if not folded:
        raise ValueError(f"cue {phrase!r} is empty once folded")
    if match == "substring" or folded == "?":
        return re.compile(re.escape(folded))
    if match != "words":
        raise ValueError(f"cue match {match!r}: words or substring")
    parts = []
    for token in phrase.split():
        if token == "~":
            parts.append(rf"(?:\w+\s+){{0,{GAP_WORDS}}}")
            continue
        stem = token.endswith("*")
        word = fold(token.rstrip("*")).strip()
        if not word:
            raise ValueError(f"cue {phrase!r}: a word is empty once folded")
        pieces = [re.escape(w) for w in word.split()]
        parts.append(r"\s+".join(pieces) + (r"\w*" if stem else "") + r"\s+")
    body = "".join(parts)
    body = body[: -len(r"\s+")] if body.endswith(r"\s+") else body
    return re.compile(rf"(?<!\w){body}(?!\w)")


@cache
def cue_book() -> tuple[Cue, ...]:
    """Every language's cues, compiled once."""
    cues: list[Cue] = []
    for language, lists in read_cue_lists(f"{__package__}.cues", LANGUAGES).items():
        for kind, phrases in lists["cues"].items():
            for phrase in phrases:
                cues.append(Cue(kind, language, phrase, compile_phrase(phrase, lists["match"])))
    return tuple(cues)


def find_cues(*texts: str, kinds: Iterable[str] | None = None) -> dict[str, Hit]:
    """The first cue of each kind found in ``texts`` (all languages' lists).

    Args:
        texts: what to read (the original message, its translation, the subject...).
        kinds: only these kinds; None: all.
    """
    wanted = None if kinds is None else set(kinds)
    folded = [fold(text) for text in texts if text]
    found: dict[str, Hit] = {}
    for cue in cue_book():
        if cue.kind in found or (wanted is not None and cue.kind not in wanted):
            continue
        for text in folded:
            match = cue.pattern.search(text)
            if match:
                found[cue.kind] = Hit(cue.kind, cue.phrase, cue.language, match.group(0))
                break
    return found


def text_signals(*texts: str) -> set[str]:
    """The supervisor's signals whose cues are in ``texts``."""
    return set(find_cues(*texts, kinds=SIGNALS))

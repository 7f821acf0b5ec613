"""The pipeline's cue lists, one TOML data file per language (``en.toml``, ``cs.toml``...).

Each language file holds, as plain data:

- ``intents``: per category, a phrase and its weight (evidence for the offline classifier);
- ``complaint``: what a complaint says whatever else the email is (the ``complaint_review``
  guard sends any email with one of these to a person);
- ``weekdays``, ``parts_of_day``, ``when``, ``durations``: how a meeting request names its time.

Every language is searched in every email (mail mixes languages, and detecting the
language first would add a way to miss); the files are read by
:func:`inboxflow.graphs.word_data.read_cue_lists` and matched by
:mod:`inboxflow.graphs.cue_matching` (folded, stems, Japanese as substrings). A new
language is a new file here and one entry in ``LANGUAGES``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ...cue_matching import Cue, CueSet
from ...word_data import read_cue_lists

LANGUAGES = ("en", "cs", "de", "fr", "es", "ja")
"""The files of this package, each named by its language (ISO 639-1)."""


@cache
def _lists() -> dict[str, dict[str, Any]]:
    return read_cue_lists(__name__, LANGUAGES)


@cache
def intent_cues() -> dict[str, CueSet]:
    """Per category, the cues of every language (each labelled with its language)."""
    categories: dict[str, list[Cue]] = {}
    for lang, lists in _lists().items():
        for category, phrases in lists["intents"].items():
            categories.setdefault(category, []).extend(
                Cue(words, weight, lang) for words, weight in phrases.items()
            )
    return {category: CueSet(cues) for category, cues in categories.items()}


@cache
def complaint_cues() -> CueSet:
    """The complaint cues of every language (the guard's list)."""
    return CueSet(
        Cue(words, 1.0, lang) for lang, lists in _lists().items() for words in lists["complaint"]
    )


@cache
def meeting_time_cues() -> dict[str, CueSet]:
    """``weekday``, ``part_of_day``, ``when`` and ``duration`` cues of every language.

    A weekday or part-of-day cue's label is its English name (``tuesday``, ``afternoon``);
    a duration cue's weight is its minutes.
    """
    every = _lists().values()
    return {
        "weekday": CueSet(
            Cue(words, 1.0, day) for lists in every for words, day in lists["weekdays"].items()
        ),
        "part_of_day": CueSet(
            Cue(words, 1.0, part)
            for lists in every
            for words, part in lists["parts_of_day"].items()
        ),
        "when": CueSet(Cue(words, 1.0, "when") for lists in every for words in lists["when"]),
        "duration": CueSet(
            Cue(words, float(minutes), "duration")
            for lists in every
            for words, minutes in lists["durations"].items()
        ),
    }


__all__ = ["LANGUAGES", "complaint_cues", "intent_cues", "meeting_time_cues"]

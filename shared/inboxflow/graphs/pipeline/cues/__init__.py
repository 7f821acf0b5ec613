"""The pipeline's cue lists, one data module per language (en, cs, de, fr, es, ja).

Each language module holds, as plain data:

- ``INTENTS``: per category, a phrase and its weight (evidence for the offline classifier);
- ``COMPLAINT``: what a complaint says whatever else the email is (the ``complaint_review``
  guard sends any email with one of these to a person);
- ``WEEKDAYS``, ``PARTS_OF_DAY``, ``WHEN``, ``DURATIONS``: how a meeting request names its time.

Every language is searched in every email (mail mixes languages, and detecting the
language first would add a way to miss); cues are matched by
:mod:`inboxflow.graphs.cue_matching` (folded, stems, Japanese as substrings). A new
language is a new module here and one line in ``LANGUAGES``.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType

from ...cue_matching import Cue, CueSet
from . import cs, de, en, es, fr, ja

LANGUAGES: dict[str, ModuleType] = {"en": en, "cs": cs, "de": de, "fr": fr, "es": es, "ja": ja}


@cache
def intent_cues() -> dict[str, CueSet]:
    """Per category, the cues of every language (each labelled with its language)."""
    categories: dict[str, list[Cue]] = {}
    for lang, module in LANGUAGES.items():
        for category, phrases in module.INTENTS.items():
            categories.setdefault(category, []).extend(
                Cue(words, weight, lang) for words, weight in phrases.items()
            )
    return {category: CueSet(cues) for category, cues in categories.items()}


@cache
def complaint_cues() -> CueSet:
    """The complaint cues of every language (the guard's list)."""
    return CueSet(
        Cue(words, 1.0, lang) for lang, module in LANGUAGES.items() for words in module.COMPLAINT
    )


@cache
def meeting_time_cues() -> dict[str, CueSet]:
    """``weekday``, ``part_of_day``, ``when`` and ``duration`` cues of every language.

    A weekday or part-of-day cue's label is its English name (``tuesday``, ``afternoon``);
    a duration cue's weight is its minutes.
    """
    return {
        "weekday": CueSet(
            Cue(words, 1.0, day) for m in LANGUAGES.values() for words, day in m.WEEKDAYS.items()
        ),
        "part_of_day": CueSet(
            Cue(words, 1.0, part)
            for m in LANGUAGES.values()
            for words, part in m.PARTS_OF_DAY.items()
        ),
        "when": CueSet(Cue(words, 1.0, "when") for m in LANGUAGES.values() for words in m.WHEN),
        "duration": CueSet(
            Cue(words, float(minutes), "duration")
            for m in LANGUAGES.values()
            for words, minutes in m.DURATIONS.items()
        ),
    }


__all__ = ["LANGUAGES", "complaint_cues", "intent_cues", "meeting_time_cues"]

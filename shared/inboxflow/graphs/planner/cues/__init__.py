"""The words customers label their details with, and the words a request is read by (data,
read by :mod:`..extract`, :mod:`..checks` and :mod:`..request_kind`), in TOML files read by
:mod:`inboxflow.graphs.word_data`.

- ``labels.toml``: per field (a table), per language, the labels a customer writes
  before the value (``Label: value``);
- ``frames.toml``: per part of a request's intent (a table), per language, its words;
- ``values.toml``: ``none_words``, ``no_accidents``, ``accident_words`` and
  ``licensed_for`` (regular expressions), ``mile_words``;
- ``states.toml``: ``us_states`` (codes) and ``state_names`` (a name and its code);
- ``car_makes.toml``: ``car_makes``.

Labels are matched case-insensitively and without diacritics (``Código postal`` and
``CODIGO POSTAL`` alike), so each is written once, in lower case, without accents.
A label may be followed by ``#``, ``no.``, ``number`` or ``nr`` (``License #:``,
``DL no.:``) before its colon. Japanese labels are matched as written. Every field has
labels in en, es, fr, de, nl, it, pt, pl and cs (a test holds it); a label names one field.
The files are read when this module is first imported, by the code that reads mail (never
at a node function's cold start).
"""

from __future__ import annotations

from typing import Any

from ...word_data import read_word_data


def _by_language(name: str) -> dict[str, dict[str, tuple[str, ...]]]:
    table: dict[str, dict[str, Any]] = read_word_data(__name__, name)
    return {
        part: {language: tuple(words) for language, words in languages.items()}
        for part, languages in table.items()
    }


_VALUES = read_word_data(__name__, "values")
_STATES = read_word_data(__name__, "states")

LABELS: dict[str, dict[str, tuple[str, ...]]] = _by_language("labels")
"""Per field, per language: the labels a customer writes before the value (``Label: value``)."""

NONE_WORDS: tuple[str, ...] = tuple(_VALUES["none_words"])
"""Words that say "zero" for a count (``Accidents: none``)."""

NO_ACCIDENTS: tuple[str, ...] = tuple(_VALUES["no_accidents"])
"""Phrases saying the driver had no accident."""

ACCIDENT_WORDS: tuple[str, ...] = tuple(_VALUES["accident_words"])
"""What "N accidents" counts, as regular expressions over folded text."""

MILE_WORDS: tuple[str, ...] = tuple(_VALUES["mile_words"])
"""Units of a yearly distance in miles."""

LICENSED_FOR: tuple[str, ...] = tuple(_VALUES["licensed_for"])
"""Sentences saying how many years the driver has been licensed (folded text)."""

US_STATES: frozenset[str] = frozenset(_STATES["us_states"])
"""The two-letter codes of the states (and DC) that issue driver's licenses."""

STATE_NAMES: dict[str, str] = dict(_STATES["state_names"])
"""US state names (folded) to their codes, in English and as other languages write them."""

FRAMES: dict[str, dict[str, tuple[str, ...]]] = _by_language("frames")
"""The parts a request's intent is read from (:mod:`..request_kind`), each a small class of
words: an existing ``policy`` (with ``mine``: "my policy", "the policy", or its number),
an ``incident_event`` (a past event: "was stolen", "aufgefahren") or an ``incident`` noun
with something ``recently`` or a ``report`` of it ("einen Schaden melden"), a ``change`` of
who or what is covered, a ``cancel``, a ``billing`` matter, a ``switch`` of insurer (what is
cancelled elsewhere is no cancellation with us), and a ``quote`` asked for."""
FRAME_LANGUAGES: frozenset[str] = frozenset(
    language for languages in FRAMES.values() for language in languages
)
"""The languages the planner reads a request's intent in (the safety screen's offline reach)."""

CAR_MAKES: tuple[str, ...] = tuple(read_word_data(__name__, "car_makes")["car_makes"])
"""The car makes commonly sold in the US and the EU (folded, lower case): data, not cues. A
vehicle written on one line (``Nissan Sentra SV 2016``) has its make here, its model after."""

"""The words the assistant's rules look for (data, read by :mod:`..reading`, :mod:`..when`
and :mod:`..guards`), in TOML files read by :mod:`inboxflow.graphs.word_data`.

- ``<language>.toml`` (``en``, ``cs``, ``de``, ``fr``, ``es``, ``ja``): the cue lists of one
  language: ``thanks``, ``requests``, ``meeting_words``, ``meeting_asks``, ``money_asks``,
  ``cold_pitch`` (each documented in the file).
- ``when.toml``: the words of a meeting's time, every language together: ``weekdays``
  (by English name), ``days_from_now`` (``today``, ``tomorrow``, ``day_after_tomorrow``),
  ``parts_of_day`` (``words`` and the window ``from``-``to``), ``named_lengths`` (by
  minutes), ``next_week``, ``not_tomorrow``, ``after``, ``before``, ``minute_words``,
  ``hour_words``.

Every cue is written lower case without diacritics: the text is folded the same way
before matching (``Děkuji`` and ``DEKUJI`` alike), so Czech and German inflections are
listed as stems where a stem is safe (``schuzk`` for schůzka, schůzku, schůzce). Latin
cues match at a word start; Japanese cues (no spaces between words) anywhere. The files
are read when this module is first imported, by the code that reads mail (never at a
node function's cold start).
"""

from __future__ import annotations

from ...word_data import read_cue_lists, read_word_data

Cues = dict[str, tuple[str, ...]]

LANGUAGES = ("en", "cs", "de", "fr", "es", "ja")
"""The language files of this package (ISO 639-1)."""

_LISTS = read_cue_lists(__name__, LANGUAGES)
_WHEN = read_word_data(__name__, "when")


def _cues(kind: str) -> Cues:
    return {language: tuple(lists[kind]) for language, lists in _LISTS.items()}


THANKS: Cues = _cues("thanks")
"""A thank-you."""
REQUESTS: Cues = _cues("requests")
"""Something is asked of the reader (a question mark counts too)."""
MEETING_WORDS: Cues = _cues("meeting_words")
"""A meeting."""
MEETING_ASKS: Cues = _cues("meeting_asks")
"""What makes a sentence naming a meeting a request for one (not a question about one)."""
MONEY_ASKS: Cues = _cues("money_asks")
"""A request for money, gift cards or payment details: what a fraudster asks for."""
COLD_PITCH: Cues = _cues("cold_pitch")
"""An unsolicited sales pitch."""

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAYS: dict[int, tuple[str, ...]] = {
    number: tuple(_WHEN["weekdays"][day]) for number, day in enumerate(_DAYS)
}
"""Day names by ``date.weekday()``."""
NEXT_WEEK: tuple[str, ...] = tuple(_WHEN["next_week"])
"""The week after the one the email was sent in."""
DAYS_FROM_NOW: dict[int, tuple[str, ...]] = {
    number: tuple(_WHEN["days_from_now"][day])
    for number, day in enumerate(("today", "tomorrow", "day_after_tomorrow"))
}
"""Days counted from the day the email was sent."""
NOT_TOMORROW: tuple[str, ...] = tuple(_WHEN["not_tomorrow"])
"""Phrases where "morgen" and "mañana" mean the morning, not tomorrow."""
PARTS_OF_DAY: dict[str, tuple[tuple[str, ...], str, str]] = {
    name: (tuple(part["words"]), part["from"], part["to"])
    for name, part in _WHEN["parts_of_day"].items()
}
"""Parts of a day: the words, and the window (local ``HH:MM``) each stands for."""
AFTER: tuple[str, ...] = tuple(_WHEN["after"])
"""Before a time: the meeting starts then or later ("anything after 1 pm")."""
BEFORE: tuple[str, ...] = tuple(_WHEN["before"])
"""Before a time: the meeting ends by then."""
MINUTE_WORDS: tuple[str, ...] = tuple(_WHEN["minute_words"])
"""Units of a length in minutes."""
HOUR_WORDS: tuple[str, ...] = tuple(_WHEN["hour_words"])
"""Units of a length in hours."""
NAMED_LENGTHS: dict[int, tuple[str, ...]] = {
    int(minutes): tuple(words) for minutes, words in _WHEN["named_lengths"].items()
}
"""Lengths said in words, by minutes."""

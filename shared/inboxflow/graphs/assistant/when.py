"""The meeting an email asks for: which day, what time of day, how long (words in :mod:`.cues`).

"45 minutes on Thursday afternoon" (sent Monday 11th) asks for Thursday 14th, between
13:00 and 17:00, for 45 minutes; "v pondělí v 10:00 na hodinu" for the next Monday at
10:00 for an hour; "来週木曜日の午後に、30分" for Thursday of next week, afternoon, 30
minutes. Days are counted from the day the email was sent; a day already past when the
assistant reads it moves on by weeks (nobody is invited to a meeting in the past).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache

from .cues import (
    AFTER,
    BEFORE,
    DAYS_FROM_NOW,
    HOUR_WORDS,
    MINUTE_WORDS,
    NAMED_LENGTHS,
    NEXT_WEEK,
    NOT_TOMORROW,
    PARTS_OF_DAY,
    WEEKDAYS,
)
from .reading import fold

KANJI_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


@dataclass(frozen=True)
class Requested:
    """What the email asks for; None where it says nothing.

    Attributes:
        day: the day.
        earliest: the earliest start, ``HH:MM`` (a part of day's start, "after 1 pm").
        latest: when the meeting must be over, ``HH:MM`` (a part of day's end, "before 11").
        start: an exact start, ``HH:MM`` ("at 3pm", "v 10:00").
        minutes: the length.
    """

    day: date | None = None
    earliest: str | None = None
    latest: str | None = None
    start: str | None = None
    minutes: int | None = None


def _words(phrases: tuple[str, ...]) -> str:
    ordered = sorted({fold(p) for p in phrases}, key=len, reverse=True)
    latin = [re.escape(p).replace("\\ ", r"\s+") for p in ordered if p.isascii()]
    other = [re.escape(p) for p in ordered if not p.isascii()]
    return "|".join([rf"(?<![a-z0-9])(?:{'|'.join(latin)})(?![a-z])", *other])


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    clock = r"(\d{1,2})(?!\d)(?:[:.h](\d{2})(?!\d))?\s*(a\.?m\.?|p\.?m\.?|uhr|hodin|h(?![a-z]))?"
    return {
        "weekday": re.compile("|".join(f"(?P<d{n}>{_words(w)})" for n, w in WEEKDAYS.items())),
        "next_week": re.compile(_words(NEXT_WEEK)),
        "not_tomorrow": re.compile(_words(NOT_TOMORROW)),
        "relative": re.compile(
            "|".join(
                f"(?P<r{n}>{_words(w)})" for n, w in sorted(DAYS_FROM_NOW.items(), reverse=True)
            )
        ),
        "part": re.compile(
            "|".join(f"(?P<{name}>{_words(words)})" for name, (words, _, _) in PARTS_OF_DAY.items())
        ),
        # "at 3pm", "v 10:00", "um 15 Uhr", "à 15h30", "a las 3 pm", "after 1 pm", "15:00"
        "time": re.compile(
            rf"(?:(?P<after>{_words(AFTER)})|(?P<before>{_words(BEFORE)})|(?<![a-z0-9])(?:at|v|ve|um|a|a\s+las|alle))?"
            rf"\s*(?<![\d:.]){clock}"
        ),
        "ja_time": re.compile(r"(午前|午後)?\s*(\d{1,2})時(?:(\d{1,2})分|半)?"),
        "named_length": re.compile(
            "|".join(
                f"(?P<n{m}>{_words(w)})" for m, w in sorted(NAMED_LENGTHS.items(), reverse=True)
            )
        ),
        "length": re.compile(
            rf"(\d+(?:[.,]\d+)?|[{''.join(KANJI_DIGITS)}十]+)\s*-?\s*(?:(?P<min>{_words(MINUTE_WORDS)})|(?P<hour>{_words(HOUR_WORDS)}))"
        ),
    }


def _kanji_number(text: str) -> int:
    """``三十`` -> 30, ``十五`` -> 15, ``四十五`` -> 45."""
    if "十" not in text:
        return KANJI_DIGITS.get(text, 0)
    tens, _, ones = text.partition("十")
    return KANJI_DIGITS.get(tens, 1) * 10 + KANJI_DIGITS.get(ones, 0)


def _number(text: str) -> float:
    if text[0] in KANJI_DIGITS or text[0] == "十":
        return float(_kanji_number(text))
    return float(text.replace(",", "."))


def _day(text: str, sent: date) -> date | None:
    patterns = _patterns()
    next_week = patterns["next_week"].search(text) is not None
    weekday = patterns["weekday"].search(text)
    if weekday is not None:
        wanted = int(next(name for name, value in weekday.groupdict().items() if value)[1:])
        if next_week:
            monday = sent - timedelta(days=sent.weekday()) + timedelta(days=7)
            return monday + timedelta(days=wanted)
        ahead = (wanted - sent.weekday()) % 7 or 7
        return sent + timedelta(days=ahead)
    cleaned = patterns["not_tomorrow"].sub(" ", text)
    relative = patterns["relative"].search(cleaned)
    if relative is not None:
        offset = int(next(name for name, value in relative.groupdict().items() if value)[1:])
        return sent + timedelta(days=offset)
    if next_week:
        return sent - timedelta(days=sent.weekday()) + timedelta(days=7)
    return None


def _hhmm(hours: int, minutes: int) -> str | None:
    return f"{hours:02d}:{minutes:02d}" if 0 <= hours < 24 and 0 <= minutes < 60 else None


def _times(text: str, part: tuple[str, str] | None) -> tuple[str | None, str | None, str | None]:
    """(exact start, earliest, latest) said as clock times.

    A number is a time when it has minutes (``10:00``), a suffix (``3pm``, ``15 Uhr``) or a
    word before it (``at 3``, ``after 1``); an hour under 8 without am/pm is in the afternoon.
    """
    start = earliest = latest = None
    for found in _patterns()["time"].finditer(text):
        introduced = found.group(0).strip()[:1].isalpha()
        hours, minutes = int(found.group(3)), int(found.group(4) or 0)
        suffix = (found.group(5) or "").replace(".", "")
        if found.group(4) is None and not suffix and not introduced:
            continue
        if suffix == "pm" and hours < 12:
            hours += 12
        elif suffix == "am" and hours == 12:
            hours = 0
        elif suffix != "am" and 1 <= hours < 8:
            hours += 12
        value = _hhmm(hours, minutes)
        if value is None:
            continue
        if found.group("after"):
            earliest = earliest or value
        elif found.group("before"):
            latest = latest or value
        else:
            start = start or value
    for found in _patterns()["ja_time"].finditer(text):
        hours = int(found.group(2))
        hours += 12 if found.group(1) == "午後" and hours < 12 else 0
        minutes = 30 if found.group(0).endswith("半") else int(found.group(3) or 0)
        start = start or _hhmm(hours, minutes)
    return start, earliest, latest


def _minutes(text: str) -> int | None:
    patterns = _patterns()
    named = patterns["named_length"].search(text)
    for found in patterns["length"].finditer(text):
        amount = _number(found.group(1))
        if found.group("min") and 5 <= amount <= 480:
            return int(amount)
        if found.group("hour") and 0 < amount <= 8:
            return round(amount * 60)
    if named is not None:
        return int(next(name for name, value in named.groupdict().items() if value)[1:])
    return None


def requested(text: str, sent: date, today: date | None = None) -> Requested:
    """What ``text`` (an email sent on ``sent``) asks for; a day before ``today`` moves on by weeks.

    Args:
        text: the request (best: the sentence that asks for the meeting, else the new text).
        sent: the day the email was sent, in the owner's time zone.
        today: the day the assistant reads it (default: ``sent``).
    """
    folded = fold(text)
    day = _day(folded, sent)
    today = today or sent
    while day is not None and day < today:
        day += timedelta(days=7)
    part_match = _patterns()["part"].search(folded)
    part = None
    if part_match is not None:
        name = next(key for key, value in part_match.groupdict().items() if value)
        part = PARTS_OF_DAY[name][1], PARTS_OF_DAY[name][2]
    start, earliest, latest = _times(folded, part)
    if part is not None:
        earliest = max(earliest or part[0], part[0])
        latest = min(latest or part[1], part[1])
    return Requested(day, earliest, latest, start, _minutes(folded))

"""Dates as customers write them: ISO, US, European, and spelled out in the planner's languages.

``first_date("born 3. března 1988")`` is ``date(1988, 3, 3)``. Numeric dates whose day and
month could be swapped (``03/04/1988``) are read month first when ``day_first`` is False
(US), day first otherwise; a number above 12 decides by itself. Two-digit years are not
guessed. Text is matched over :func:`fold`-ed text (no case, no diacritics), so a month is
written once per language, in lower case and without accents. The parser is a few regular
expressions over one month table, loaded with the planner: no dependency and nothing to
import lazily for the handful of forms a quote request uses.
"""

from __future__ import annotations

import re
from datetime import date

from .folding import fold

MONTHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "en": (
        ("january", "jan"),
        ("february", "feb"),
        ("march", "mar"),
        ("april", "apr"),
        ("may",),
        ("june", "jun"),
        ("july", "jul"),
        ("august", "aug"),
        ("september", "sept", "sep"),
        ("october", "oct"),
        ("november", "nov"),
        ("december", "dec"),
    ),
    "es": (
        ("enero",),
        ("febrero",),
        ("marzo",),
        ("abril",),
        ("mayo",),
        ("junio",),
        ("julio",),
        ("agosto",),
        ("septiembre", "setiembre"),
        ("octubre",),
        ("noviembre",),
        ("diciembre",),
    ),
    "fr": (
        ("janvier",),
        ("fevrier",),
        ("mars",),
        ("avril",),
        ("mai",),
        ("juin",),
        ("juillet",),
        ("aout",),
        ("septembre",),
        ("octobre",),
        ("novembre",),
        ("decembre",),
    ),
    "de": (
        ("januar", "janner"),
        ("februar",),
        ("marz",),
        ("april",),
        ("mai",),
        ("juni",),
        ("juli",),
        ("august",),
        ("september",),
        ("oktober",),
        ("november",),
        ("dezember",),
    ),
    "nl": (
        ("januari",),
        ("februari",),
        ("maart",),
        ("april",),
        ("mei",),
        ("juni",),
        ("juli",),
        ("augustus",),
        ("september",),
        ("oktober",),
        ("november",),
        ("december",),
    ),
    "it": (
        ("gennaio",),
        ("febbraio",),
        ("marzo",),
        ("aprile",),
        ("maggio",),
        ("giugno",),
        ("luglio",),
        ("agosto",),
        ("settembre",),
        ("ottobre",),
        ("novembre",),
        ("dicembre",),
    ),
    "pt": (
        ("janeiro",),
        ("fevereiro",),
        ("marco",),
        ("abril",),
        ("maio",),
        ("junho",),
        ("julho",),
        ("agosto",),
        ("setembro",),
        ("outubro",),
        ("novembro",),
        ("dezembro",),
    ),
    # Polish and Czech write the month of a date in the genitive ("3 marca", "3. března").
    "pl": (
        ("stycznia", "styczen"),
        ("lutego", "luty"),
        ("marca", "marzec"),
        ("kwietnia", "kwiecien"),
        ("maja", "maj"),
        ("czerwca", "czerwiec"),
        ("lipca", "lipiec"),
        ("sierpnia", "sierpien"),
        ("wrzesnia", "wrzesien"),
        ("pazdziernika", "pazdziernik"),
        ("listopada", "listopad"),
        ("grudnia", "grudzien"),
    ),
    "cs": (
        ("ledna", "leden"),
        ("unora", "unor"),
        ("brezna", "brezen"),
        ("dubna", "duben"),
        ("kvetna", "kveten"),
        ("cervna", "cerven"),
        ("cervence", "cervenec"),
        ("srpna", "srpen"),
        ("zari",),
        ("rijna", "rijen"),
        ("listopadu", "listopad"),
        ("prosince", "prosinec"),
    ),
}
"""Per language, the names of the months in order (folded; genitive forms where a date uses them)."""

_MONTH_NUMBER: dict[str, int] = {
    name: index
    for months in MONTHS.values()
    for index, names in enumerate(months, 1)
    for name in names
}
_MONTH = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th|er|e|o|º|°)?\.?"
_YEAR = r"(?P<year>(?:1[89]|20)\d\d)"
_OF = r"(?:[ \t]+(?:de|del|di|of))?"
_FORMS = (
    # 1988-03-03, 1988/03/03, 1988.03.03
    re.compile(r"(?<!\d)(?P<year>(?:1[89]|20)\d\d)[-/.](?P<a>\d{1,2})[-/.](?P<b>\d{1,2})(?!\d)"),
    # 03/04/1988, 3.4.1988, 03-04-1988, 3. 4. 1988
    re.compile(
        r"(?<![\d.])(?P<a>\d{1,2})(?P<sep>[-/.])[ \t]?(?P<b>\d{1,2})(?P=sep)[ \t]?"
        r"(?P<year>(?:1[89]|20)\d\d)(?!\d)"
    ),
    # 3 March 1988, 3. März 1988, 3 de marzo de 1988, le 3 mars 1988, 3rd of March, 1988
    re.compile(rf"(?<!\d){_DAY}{_OF}[ \t]+(?P<month>{_MONTH})\b\.?{_OF},?[ \t]+{_YEAR}(?!\d)"),
    # March 3, 1988 ; March 3rd 1988
    re.compile(rf"\b(?P<month>{_MONTH})\b\.?[ \t]+{_DAY},?[ \t]+{_YEAR}(?!\d)"),
)


def _numeric(first: int, second: int, day_first: bool) -> tuple[int, int]:
    """(month, day) of a numeric date written ``first``/``second``."""
    if first > 12:
        return second, first
    if second > 12:
        return first, second
    return (second, first) if day_first else (first, second)


def _built(match: re.Match[str], day_first: bool) -> date | None:
    groups = match.groupdict()
    year = int(groups["year"])
    if groups.get("month"):
        month, day = _MONTH_NUMBER[groups["month"]], int(groups["day"])
    elif match.re is _FORMS[0]:
        month, day = int(groups["a"]), int(groups["b"])
    else:
        month, day = _numeric(int(groups["a"]), int(groups["b"]), day_first)
    try:
        return date(year, month, day)
    except ValueError:
        return None


def first_date(text: str, day_first: bool = False) -> date | None:
    """The first date written in ``text`` (any form above), or None.

    Args:
        text: a line or a sentence, as written.
        day_first: read an ambiguous numeric date (``03/04/1988``) day first (European).
            A date with dots (``03.04.1988``) is always day first.
    """
    folded = fold(text)
    found: list[tuple[int, date]] = []
    for form in _FORMS:
        for match in form.finditer(folded):
            dots = match.groupdict().get("sep") == "."
            value = _built(match, day_first or dots)
            if value is not None:
                found.append((match.start(), value))
                break
    return min(found, key=lambda item: item[0])[1] if found else None


__all__ = ["MONTHS", "first_date"]

"""What the customer told us, read from their emails by rules (the offline model's reading).

Later messages win over earlier ones (a corrected VIN replaces the first);
a value found wrong before (``CustomerInfo.rejected``) is never taken again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import date

from ..cue_matching import fold_one_for_one as fold
from .labels import (
    ACCIDENT_WORDS,
    LABELS,
    LICENSED_FOR,
    MILE_WORDS,
    NO_ACCIDENTS,
    NONE_WORDS,
    US_STATES,
)
from .state import CustomerInfo, Message

FIELD_LABELS: dict[str, str] = {
    "first_name": "Your first name",
    "last_name": "Your last name",
    "date_of_birth": "Your date of birth (YYYY-MM-DD)",
    "zip_code": "The ZIP code where the car is kept",
    "license_number": "Your driver's license number",
    "license_state": "The state that issued your license (two letters, e.g. CA)",
    "years_licensed": "How many years you have been licensed",
    "vin": "The vehicle identification number (VIN, 17 characters)",
    "vehicle_year": "The car's model year",
    "vehicle_make": "The car's make (e.g. Honda)",
    "vehicle_model": "The car's model (e.g. Civic)",
    "annual_mileage": "About how many miles a year you drive",
    "accidents_last_5_years": "How many accidents you had in the last 5 years",
}
"""Every field the planner may ask for, as the question email names it."""

APPLICANT_FIELDS = ("first_name", "last_name", "date_of_birth", "zip_code")
DRIVER_FIELDS = ("license_number", "license_state", "years_licensed")
VEHICLE_FIELDS = ("vin", "vehicle_year", "vehicle_make", "vehicle_model")
REQUIRED_FIELDS = APPLICANT_FIELDS + DRIVER_FIELDS + VEHICLE_FIELDS
"""What a quote needs; accidents default to 0 and mileage to 12,000 when not given."""

_DATE = r"(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{4}|\d{1,2}\.\s?\d{1,2}\.\s?\d{4})"
_BULLET = r"^[ \t]*(?:[*\-\u2022>]+[ \t]*)?"
_SUFFIX = r"(?:[ \t]*(?:#|no\.?|nr\.?|number|num\.?|n[°o]))?"
_SEP = r"[ \t]*(?:[:=\-\u2013]|\uff1a)[ \t]*"


def _alternation(phrases: Iterable[str]) -> str:
    unique = sorted({fold(p) for p in phrases}, key=len, reverse=True)
    return "|".join(re.escape(p).replace("\\ ", r"\s+").replace("'", "['\u2019]?") for p in unique)


def _labels(field: str) -> str:
    return _alternation(p for words in LABELS[field].values() for p in words)


def _labelled(field: str, value: str) -> re.Pattern[str]:
    """``Label: value`` on a line of its own (a list bullet allowed), over folded text."""
    return re.compile(rf"{_BULLET}(?:{_labels(field)}){_SUFFIX}{_SEP}{value}", re.M)


_ID = r"((?=[a-z0-9\-]*\d)[a-z0-9][a-z0-9\-]{3,19})\b"
_LABELLED: dict[str, re.Pattern[str]] = {
    "full_name": _labelled("full_name", r"([^\n,;]+?)[ \t]*$"),
    "first_name": _labelled("first_name", r"([^\n,;]+?)[ \t]*$"),
    "last_name": _labelled("last_name", r"([^\n,;]+?)[ \t]*$"),
    "date_of_birth": _labelled("date_of_birth", _DATE),
    "zip_code": _labelled("zip_code", r"(\d{5})(?:-\d{4})?\b"),
    "license_number": _labelled("license_number", _ID),
    "license_state": _labelled("license_state", r"([a-z]{2})\b"),
    "years_licensed": _labelled("years_licensed", r"(\d{1,2})\b"),
    "accidents_last_5_years": _labelled(
        "accidents_last_5_years", rf"(\d{{1,2}}\b|{_alternation(NONE_WORDS)})"
    ),
    "vin": _labelled("vin", r"((?=[a-z0-9]*\d)[a-z0-9]{6,20})\b"),
    "vehicle_year": _labelled("vehicle_year", r"((?:19|20)\d\d)\b"),
    "vehicle_make": _labelled("vehicle_make", r"([a-z][a-z\-]+)"),
    "vehicle_model": _labelled("vehicle_model", r"([a-z0-9][a-z0-9\-]*)"),
    "annual_mileage": _labelled("annual_mileage", r"(\d{1,3}(?:[,.]\d{3})+|\d{3,6})\b"),
}
"""The labelled lines of each field (over :func:`fold`-ed text)."""

_ANY_LICENSE = _labels("license_number")
_INLINE: dict[str, re.Pattern[str]] = {
    # "my driver's license is D4821937 (CA)", "license D4821937", "Licencia de conducir: X (AZ)"
    "license_number": re.compile(
        rf"\b(?:{_ANY_LICENSE}){_SUFFIX}[ \t]*(?:is|es|ist|est|je)?[ \t]*[:#\-]?[ \t]*{_ID}"
    ),
    # the state in brackets after the number: "D12345678901 (IL)"
    "license_state": re.compile(
        rf"\b(?:{_ANY_LICENSE})[^\n]{{0,40}}?\(([a-z]{{2}})\)"
        r"|\b(?:issued\s+(?:in|by)|expedida\s+en|ausgestellt\s+in)\s+([a-z]{2})\b"
    ),
    "years_licensed": re.compile("|".join(f"(?:{p})" for p in LICENSED_FOR)),
    "no_accidents": re.compile(rf"\b(?:{_alternation(NO_ACCIDENTS)})"),
    "accidents": re.compile(rf"\b(\d{{1,2}})[ \t]+(?:{'|'.join(ACCIDENT_WORDS)})\b"),
    "vin": re.compile(
        r"\bvin\b[ \t]*(?:number|is|es|ist)?[ \t]*[:#\-]?[ \t]*((?=[a-z]*\d)[a-z0-9]{6,20})\b"
    ),
    "annual_mileage": re.compile(
        rf"(\d{{1,3}}(?:[,.]\d{{3}})+|\d{{3,6}})[ \t]*(?:{'|'.join(MILE_WORDS)})\b"
    ),
}
"""Details written in a sentence rather than on a labelled line (over folded text)."""

VEHICLE = re.compile(
    r"\b(19[89]\d|20\d\d)\s+([A-Z][A-Za-z\-]+|[A-Z]{2,})\s+([A-Za-z0-9][A-Za-z0-9\-]*)"
    r"(?=[\s,.;:!?)\]]|$)"
)
"""``2018 Toyota Corolla`` in the text as written (the make is capitalised), any punctuation after."""


def _span_value(original: str, match: re.Match[str]) -> str:
    """The first group that matched, as the customer wrote it (case and accents kept)."""
    index = next(i for i, group in enumerate(match.groups(), 1) if group)
    return original[match.start(index) : match.end(index)].strip()


def _iso_date(text: str) -> str | None:
    text = text.replace(" ", "")
    try:
        if "/" in text:
            month, day, year = (int(part) for part in text.split("/"))
            return date(year, month, day).isoformat()
        if "." in text:
            day, month, year = (int(part) for part in text.split("."))
            return date(year, month, day).isoformat()
        return date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def _number(text: str) -> int:
    return int(text.replace(",", "").replace(".", ""))


def _state(text: str) -> str | None:
    code = text.upper()
    return code if code in US_STATES else None


def _count(text: str) -> int:
    return 0 if fold(text) in {fold(word) for word in NONE_WORDS} else int(text)


def _values(text: str) -> dict[str, object]:
    """Every field one message states (labels case- and accent-insensitive)."""
    folded = fold(text)
    found: dict[str, object] = {}

    def take(name: str, pattern: re.Pattern[str], convert: Callable[[str], object | None]) -> None:
        if name in found:
            return
        match = pattern.search(folded)
        if match:
            value = convert(_span_value(text, match))
            if value is not None:
                found[name] = value

    full = _LABELLED["full_name"].search(folded)
    if full:
        words = _span_value(text, full).split()
        if len(words) >= 2:
            found["first_name"], found["last_name"] = words[0], " ".join(words[1:])
    for name in ("first_name", "last_name"):  # a labelled first or last name wins
        if _LABELLED[name].search(folded):
            found.pop(name, None)
        take(name, _LABELLED[name], str.strip)
    take("date_of_birth", _LABELLED["date_of_birth"], _iso_date)
    take("zip_code", _LABELLED["zip_code"], str)
    take("license_state", _LABELLED["license_state"], _state)
    take("license_state", _INLINE["license_state"], _state)
    take("license_number", _LABELLED["license_number"], str.upper)
    take("license_number", _INLINE["license_number"], str.upper)
    take("years_licensed", _LABELLED["years_licensed"], int)
    take("years_licensed", _INLINE["years_licensed"], int)
    take("accidents_last_5_years", _LABELLED["accidents_last_5_years"], _count)
    if _INLINE["no_accidents"].search(folded) and "accidents_last_5_years" not in found:
        found["accidents_last_5_years"] = 0
    take("accidents_last_5_years", _INLINE["accidents"], int)
    take("vin", _LABELLED["vin"], str.upper)
    take("vin", _INLINE["vin"], str.upper)
    for name in ("vehicle_year", "vehicle_make", "vehicle_model"):
        take(name, _LABELLED[name], int if name == "vehicle_year" else str)
    vehicle = VEHICLE.search(text)
    if vehicle:
        found.setdefault("vehicle_year", int(vehicle.group(1)))
        found.setdefault("vehicle_make", vehicle.group(2))
        found.setdefault("vehicle_model", vehicle.group(3))
    take("annual_mileage", _LABELLED["annual_mileage"], _number)
    take("annual_mileage", _INLINE["annual_mileage"], _number)
    return found


def extract(messages: Iterable[Message], known: CustomerInfo, sender: str = "") -> CustomerInfo:
    """``known`` updated with what the customer's messages state (later ones win).

    Args:
        messages: the conversation; only the customer's messages are read.
        known: what is known so far (its ``rejected`` values are never taken again).
        sender: the customer's address (their email on the quote).
    """
    info = known.model_copy(deep=True)
    if sender and not info.email:
        info.email = sender
    for message in messages:
        if message.role != "customer":
            continue
        for name, value in _values(message.content).items():
            if str(value) in info.rejected.get(name, []):
                continue
            setattr(info, name, value)
    return info


def missing(info: CustomerInfo, fields: Iterable[str] = REQUIRED_FIELDS) -> list[str]:
    """The fields of ``fields`` not known yet, in order."""
    return [name for name in fields if getattr(info, name) in (None, "")]


_MENTIONS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\bvin\b|identification number", re.I), ("vin",)),
    (re.compile(r"birth|\bdob\b|\bage\b", re.I), ("date_of_birth",)),
    (re.compile(r"\bzip\b|postal", re.I), ("zip_code",)),
    (re.compile(r"licen[cs]e", re.I), ("license_number", "license_state")),
    (re.compile(r"mileage|miles", re.I), ("annual_mileage",)),
    (re.compile(r"accident", re.I), ("accidents_last_5_years",)),
    (
        re.compile(r"\bmake\b|\bmodel\b|vehicle year|model year", re.I),
        ("vehicle_make", "vehicle_model", "vehicle_year"),
    ),
    (re.compile(r"\bname\b", re.I), ("first_name", "last_name")),
)


def fields_named(comment: str) -> list[str]:
    """The customer fields a reviewer's comment is about ("VIN is incorrect" -> ``vin``)."""
    named: list[str] = []
    for pattern, fields in _MENTIONS:
        if pattern.search(comment):
            named += [name for name in fields if name not in named]
    return named


def reject(info: CustomerInfo, fields: Iterable[str]) -> CustomerInfo:
    """``info`` with the current values of ``fields`` marked wrong and cleared."""
    changed = info.model_copy(deep=True)
    for name in fields:
        value = getattr(changed, name)
        if value not in (None, ""):
            values = changed.rejected.setdefault(name, [])
            if str(value) not in values:
                values.append(str(value))
        setattr(changed, name, None)
    return changed

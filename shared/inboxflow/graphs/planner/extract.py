"""What the customer told us, read from their emails by rules (the offline model's reading).

Later messages win over earlier ones (a corrected VIN replaces the first);
a value found wrong before (``CustomerInfo.rejected``) is never taken again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import date

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

_I = re.IGNORECASE | re.MULTILINE
_DATE = r"(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{4})"
_PATTERNS: dict[str, re.Pattern[str]] = {
    "full_name": re.compile(r"^\s*(?:full\s+)?name\s*[:\-]\s*([^\n,;]+)$", _I),
    "first_name": re.compile(r"^\s*first\s+name\s*[:\-]\s*([^\n,;]+)$", _I),
    "last_name": re.compile(r"^\s*(?:last|family)\s+name\s*[:\-]\s*([^\n,;]+)$", _I),
    "date_of_birth": re.compile(
        rf"(?:date\s+of\s+birth|birth\s*date|\bdob\b|\bborn(?:\s+on)?)\s*[:\-]?\s*{_DATE}", _I
    ),
    "zip_code": re.compile(r"\bzip(?:\s*code)?\s*[:\-]?\s*(\d{5})\b", _I),
    "license_number": re.compile(
        r"licen[cs]e(?:\s*(?:number|no\.?|#))?\s*(?:is\s*)?[:\-]?\s*([A-Z]*\d[A-Z0-9]{3,19})\b", _I
    ),
    "license_state": re.compile(
        r"(?:licen[cs]e[^\n]{0,40}?\(([A-Z]{2})\)|licen[cs]e\s+state\s*[:\-]?\s*([A-Z]{2})\b"
        r"|issued\s+in\s+([A-Z]{2})\b)"
    ),
    "years_licensed": re.compile(
        r"(?:licensed\s+(?:for\s+)?(\d{1,2})\s+years|years\s+licensed\s*[:\-]?\s*(\d{1,2}))", _I
    ),
    "accidents_last_5_years": re.compile(
        r"(?:\b(no)\s+accidents|(\d{1,2})\s+accidents?|accidents?\s*[:\-]\s*(\d{1,2}|none))", _I
    ),
    "vin": re.compile(r"\bVIN\b\s*(?:number|is)?\s*[:#\-]?\s*((?=[A-Z]*\d)[A-Z0-9]{6,20})\b", _I),
    "vehicle": re.compile(
        r"\b(19[89]\d|20\d\d)\s+([A-Z][A-Za-z\-]+)\s+([A-Z0-9][A-Za-z0-9\-]*)(?=[\s,.;]|$)"
    ),
    "vehicle_year": re.compile(r"^\s*(?:model\s+)?year\s*[:\-]\s*(\d{4})\b", _I),
    "vehicle_make": re.compile(r"^\s*make\s*[:\-]\s*([A-Za-z\-]+)", _I),
    "vehicle_model": re.compile(r"^\s*model\s*[:\-]\s*([A-Za-z0-9\-]+)", _I),
    "annual_mileage": re.compile(
        r"(?:(\d{1,3}(?:,\d{3})+|\d{3,6})\s*(?:miles|mi)\b|mileage\s*[:\-]?\s*(\d{1,3}(?:,\d{3})+|\d{3,6}))",
        _I,
    ),
}


def _first(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group)


def _iso_date(text: str) -> str | None:
    try:
        if "/" in text:
            month, day, year = (int(part) for part in text.split("/"))
            return date(year, month, day).isoformat()
        return date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _values(text: str) -> dict[str, object]:
    """Every field one message states."""
    found: dict[str, object] = {}

    def take(name: str, convert: Callable[[re.Match[str]], object | None]) -> None:
        match = _PATTERNS[name].search(text)
        if match:
            value = convert(match)
            if value is not None:
                found[name] = value

    full = _PATTERNS["full_name"].search(text)
    if full:
        words = full.group(1).split()
        if len(words) >= 2:
            found["first_name"], found["last_name"] = words[0], " ".join(words[1:])
    take("first_name", lambda m: m.group(1).strip())
    take("last_name", lambda m: m.group(1).strip())
    take("date_of_birth", lambda m: _iso_date(m.group(1)))
    take("zip_code", lambda m: m.group(1))
    take("license_number", lambda m: m.group(1).upper())
    take("license_state", lambda m: _first(m).upper())
    take("years_licensed", lambda m: int(_first(m)))
    take(
        "accidents_last_5_years",
        lambda m: 0 if _first(m).lower() in ("no", "none") else int(_first(m)),
    )
    take("vin", lambda m: m.group(1).upper())
    vehicle = _PATTERNS["vehicle"].search(text)
    if vehicle:
        found["vehicle_year"] = int(vehicle.group(1))
        found["vehicle_make"], found["vehicle_model"] = vehicle.group(2), vehicle.group(3)
    take("vehicle_year", lambda m: int(m.group(1)))
    take("vehicle_make", lambda m: m.group(1))
    take("vehicle_model", lambda m: m.group(1))
    take("annual_mileage", lambda m: _number(_first(m)))
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

"""What each customer field must be, whoever read it: the offline rules or the model.

``checked("vin", "1ftfw1e50mfa12345")`` gives the value to keep (``None``) and why it is
refused (the check digit); the planner takes a value only through here, so a VIN from
Gemini's structured answer meets the same ISO 3779 check digit as one read by rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from .cues import STATE_NAMES, US_STATES
from .dates import first_date
from .folding import fold
from .quoting import vin_problem

_ZIP = re.compile(r"^(\d{5})(?:-\d{4})?$")
_LICENCE = re.compile(r"^[A-Z0-9]+(?:[ -][A-Z0-9]+)*$")
_NAME_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Checked:
    """A field's value as the quote takes it, or why it cannot be taken.

    Attributes:
        value: the normalised value (``None`` when refused or empty).
        problem: why the value was refused (for the question to the customer), or None.
    """

    value: object | None
    problem: str | None = None


def _state_key(text: str) -> str:
    return re.sub(r"\s+", " ", fold(text).replace(".", "")).strip(" \t()[],;:")


_STATE_KEYS = {_state_key(name): code for name, code in STATE_NAMES.items()}


def state_code(text: str) -> str | None:
    """``IL``, ``il``, ``Illinois``, ``(New Jersey)`` or ``Washington D.C.`` as a state code,
    or None."""
    cleaned = _state_key(text)
    if cleaned.upper() in US_STATES:
        return cleaned.upper()
    return _STATE_KEYS.get(cleaned)


def _whole_number(value: object, low: int, high: int) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    else:
        return None
    return number if low <= number <= high else None


def checked(name: str, value: object, today: date | None = None) -> Checked:
    """``value`` for the field ``name`` as the quote takes it, or why not.

    Args:
        name: a :class:`~.state.CustomerFacts` field.
        value: what was read (a string or a number).
        today: the date the value is judged on (ages, model years); default today.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return Checked(None)
    today = today or date.today()
    text = str(value).strip()
    if name == "vin":
        vin = re.sub(r"[\s-]", "", text).upper()
        problem = vin_problem(vin)
        return Checked(None, f"the VIN {vin} is not valid: {problem}") if problem else Checked(vin)
    if name == "license_state":
        code = state_code(text)
        return Checked(code) if code else Checked(None, f"{text!r} is not a US state")
    if name == "date_of_birth":
        born = _iso(text) or first_date(text)
        if born is None:
            return Checked(None, f"{text!r} is not a date")
        age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
        if not 14 <= age <= 110:
            return Checked(None, f"{born.isoformat()} gives an age of {age}")
        return Checked(born.isoformat())
    if name == "zip_code":
        match = _ZIP.match(text)
        return Checked(match.group(1)) if match else Checked(None, f"{text!r} is not a ZIP code")
    if name == "license_number":
        number = re.sub(r"\s+", " ", text.upper())
        plain = re.sub(r"[ -]", "", number)
        if _LICENCE.match(number) and 4 <= len(plain) <= 25 and _NAME_DIGIT.search(plain):
            return Checked(number)
        return Checked(None, f"{text!r} is not a license number")
    bounds = {
        "years_licensed": (0, 80),
        "accidents_last_5_years": (0, 20),
        "annual_mileage": (0, 200_000),
        "vehicle_year": (1950, today.year + 2),
    }
    if name in bounds:
        whole = _whole_number(value, *bounds[name])
        return Checked(whole) if whole is not None else Checked(None, f"{text!r} is out of range")
    if name in ("first_name", "last_name"):
        if _NAME_DIGIT.search(text) or len(text) > 60:
            return Checked(None, f"{text!r} is not a name")
        return Checked(text)
    return Checked(text[:60])


def _iso(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


__all__ = ["Checked", "checked", "state_code"]

"""The planner's quoting service: a personal auto (PPA) insurance quoting service.

The planner graph builds a quote step by step: open a
quote for an applicant, add drivers and vehicles, then rate it. Adapters:
``EmbeddedQuoting`` (``adapters/embedded_quoting.py``, the default: quotes as
documents in the checkpoint store, deterministic premiums) and ``HttpQuoting``
(``adapters/http_quoting.py``: a real HTTP client with timeouts and retries,
so a real quoting API can be plugged in; ``dev/doubles/quoting_api.py`` serves
the embedded engine over HTTP for tests and ``inboxflow dev``).

Every write takes an idempotency ``key`` (the effect journal's key): the same
call with the same key returns the first result instead of adding twice.
Failures raise ``QuotingError``; the planner's ``tools`` node turns them into
``{"status": "error", "message": ...}`` and the planner decides what next.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import date
from typing import Literal

from pydantic import Field

from ...deferred import DeferredModel
from ...field_defaults import empty_list
from ...ports.wired import Service

QuotingErrorCode = Literal[
    "invalid_input",  # a field is missing or malformed (``field`` names it)
    "invalid_vin",  # 17 characters, no I/O/Q, check digit (position 9) must match
    "not_found",  # no such quote
    "not_ratable",  # rating needs at least one driver and one vehicle
    "unavailable",  # the service failed or timed out after retries (transient)
]


# The VIN check digit (ISO 3779; 49 CFR 565.15): the rule of every quote, checked by the
# quoting service and by the planner when it reads a VIN.

_TRANSLITERATION = {
    **{str(d): d for d in range(10)},
    **dict(zip("ABCDEFGH", range(1, 9), strict=True)),
    **dict(zip("JKLMN", range(1, 6), strict=True)),
    "P": 7,
    "R": 9,
    **dict(zip("STUVWXYZ", range(2, 10), strict=True)),
}
_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def vin_check_digit(vin: str) -> str:
    """The check digit (position 9) a 17-character VIN must carry: ``0``-``9`` or ``X``.

    Raises:
        ValueError: a character is not allowed in a VIN (I, O, Q, or not a letter/digit).
    """
    total = 0
    for char, weight in zip(vin.upper(), _WEIGHTS, strict=True):
        if char not in _TRANSLITERATION:
            raise ValueError(f"{char!r} is not allowed in a VIN")
        total += _TRANSLITERATION[char] * weight
    remainder = total % 11
    return "X" if remainder == 10 else str(remainder)


def vin_problem(vin: str) -> str | None:
    """Why ``vin`` is not a valid North American VIN, or None when it is."""
    vin = vin.strip().upper()
    if len(vin) != 17:
        return f"a VIN has 17 characters, this one has {len(vin)}"
    bad = sorted({c for c in vin if c not in _TRANSLITERATION})
    if bad:
        return f"a VIN cannot contain {', '.join(bad)} (letters I, O and Q are never used)"
    expected = vin_check_digit(vin)
    if vin[8] != expected:
        return f"the check digit (9th character) is {vin[8]}, it should be {expected}: a character is mistyped"
    return None


class QuotingError(Exception):
    """A quoting call the service refused or could not answer.

    Attributes:
        code: what went wrong (see ``QuotingErrorCode``).
        message: a sentence for the planner and the agency reviewer.
        field: the input field at fault, when one is (``vin``, ``date_of_birth``...).
        retryable: True when the same call may succeed later (``unavailable``).
    """

    def __init__(self, code: QuotingErrorCode, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code: QuotingErrorCode = code
        self.message = message
        self.field = field
        self.retryable = code == "unavailable"


class Applicant(DeferredModel):
    """The person asking for the quote (the policy's named insured)."""

    first_name: str = Field(min_length=1)
    last_name: str = Field(min_length=1)
    email: str = Field(min_length=3)
    date_of_birth: date
    zip_code: str = Field(pattern=r"^\d{5}$")


class Driver(DeferredModel):
    """A driver to be listed on the policy."""

    first_name: str = Field(min_length=1)
    last_name: str = Field(min_length=1)
    date_of_birth: date
    license_number: str = Field(min_length=4)
    license_state: str = Field(pattern=r"^[A-Z]{2}$")
    years_licensed: int = Field(ge=0, le=80)
    accidents_last_5_years: int = Field(default=0, ge=0, le=20)


class Vehicle(DeferredModel):
    """A vehicle to be insured (the VIN is checked by the service, check digit included)."""

    vin: str = Field(min_length=17, max_length=17)
    year: int = Field(ge=1981, le=2100)
    make: str = Field(min_length=1)
    model: str = Field(min_length=1)
    annual_mileage: int = Field(default=12000, ge=0, le=200000)


class QuoteSession(DeferredModel):
    """An open quote: what ``quote_initiate`` returns and every later call names."""

    session_id: str
    quote_id: str


class Rate(DeferredModel):
    """A rated quote. ``annual_premium_cents`` is deterministic for the same inputs."""

    quote_id: str
    annual_premium_cents: int = Field(ge=0)
    monthly_premium_cents: int = Field(ge=0)
    term_months: int = 12
    drivers: int = Field(ge=1)
    vehicles: int = Field(ge=1)
    valid_until: date


class Quote(DeferredModel):
    """The quote as the service holds it."""

    quote_id: str
    session_id: str
    applicant: Applicant
    drivers: list[Driver] = Field(default_factory=empty_list)
    vehicles: list[Vehicle] = Field(default_factory=empty_list)
    rate: Rate | None = None


class QuotingService(ABC):
    """Open, fill and rate PPA quotes."""

    @abstractmethod
    def initiate(self, applicant: Applicant, key: str) -> QuoteSession:
        """Open a quote for ``applicant``.

        Raises:
            QuotingError: ``invalid_input`` or ``unavailable``.
        """

    @abstractmethod
    def add_driver(self, quote_id: str, driver: Driver, key: str) -> Quote:
        """Add a driver; returns the quote after the change.

        Raises:
            QuotingError: ``not_found``, ``invalid_input`` or ``unavailable``.
        """

    @abstractmethod
    def add_vehicle(self, quote_id: str, vehicle: Vehicle, key: str) -> Quote:
        """Add a vehicle; returns the quote after the change.

        Raises:
            QuotingError: ``invalid_vin``, ``not_found``, ``invalid_input`` or ``unavailable``.
        """

    @abstractmethod
    def rate(self, quote_id: str, key: str) -> Rate:
        """Rate the quote (binding for ``valid_until``).

        Raises:
            QuotingError: ``not_ratable``, ``not_found`` or ``unavailable``.
        """

    @abstractmethod
    def get(self, quote_id: str) -> Quote:
        """The quote as it stands.

        Raises:
            QuotingError: ``not_found`` or ``unavailable``.
        """


QUOTING = Service[QuotingService]("quoting", QuotingService)
"""The planner's declaration of the service (``Graph(services=...)``, ``ctx.ports.service``)."""

"""The embedded quoting service: PPA quotes as documents in the checkpoint store.

A quote lives at ``quotes/{quote_id}``; every write runs in one transaction
with its idempotency record ``quote_keys/{sha256(key)}`` (created in the same
transaction, so the same key can never apply twice, even from two processes
at once). The record keeps the first result and a fingerprint of the request:
the same key with another request is refused (``invalid_input``, field ``key``).

Premiums are deterministic: ``premium_cents`` below is the whole formula.
VINs are checked as North American VINs are (``graphs.planner.quoting.vin_problem``).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pydantic import BaseModel

from ..clock import Clock
from ..graphs.planner.quoting import (
    Applicant,
    Driver,
    Quote,
    QuoteSession,
    QuotingError,
    QuotingService,
    Rate,
    Vehicle,
    vin_check_digit,
    vin_problem,
)
from ..ports.documents import DocumentStore, Transaction
from ..schema import QUOTE_KEYS, QUOTES

RATE_VALID_DAYS = 30
"""A rate is binding for this many days from the day it was given."""
KEY_RETENTION_S = 90 * 86400
"""How long an idempotency record is kept (``expire_at``, Firestore TTL): past any retry."""
_QUOTE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# --- the premium formula ----------------------------------------------------------------

BASE_CENTS_PER_VEHICLE = 60_000
"""$600 a year for each vehicle before any factor."""
TERRITORY_FACTORS = ("1.10", "1.20", "1.05", "1.15", "0.95", "0.90", "1.00", "1.05", "1.10", "1.25")
"""Indexed by the first digit of the applicant's ZIP code."""


def _age(born: date, on: date) -> int:
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def driver_factor(driver: Driver, on: date) -> Decimal:
    """Age x experience x accidents for one driver (age at ``on``)."""
    age = _age(driver.date_of_birth, on)
    age_factor = "1.80" if age < 21 else "1.40" if age < 25 else "1.00" if age < 65 else "1.15"
    licensed = driver.years_licensed
    experience = "1.30" if licensed < 3 else "1.10" if licensed < 10 else "1.00"
    accidents = Decimal(1) + Decimal("0.25") * driver.accidents_last_5_years
    return Decimal(age_factor) * Decimal(experience) * accidents


def vehicle_cents(vehicle: Vehicle, on: date) -> Decimal:
    """The base for one vehicle: newer cars cost more to repair, more miles more risk."""
    vehicle_age = on.year - vehicle.year
    age_factor = "1.15" if vehicle_age <= 3 else "1.00" if vehicle_age <= 10 else "0.85"
    miles = vehicle.annual_mileage
    mileage = "0.90" if miles < 7_500 else "1.00" if miles <= 15_000 else "1.15"
    return BASE_CENTS_PER_VEHICLE * Decimal(age_factor) * Decimal(mileage)


def premium_cents(quote: Quote, on: date) -> int:
    """The annual premium in cents for ``quote`` rated on ``on``.

    ``sum(vehicle bases) x riskiest driver's factor x (1 + 0.05 per extra driver)
    x territory factor``, rounded half up to the cent:

    - vehicle base: $600 x age (<= 3 years 1.15, <= 10 years 1.00, older 0.85)
      x mileage (< 7,500 mi 0.90, <= 15,000 mi 1.00, more 1.15);
    - driver factor: age (< 21 1.80, < 25 1.40, < 65 1.00, else 1.15) x years
      licensed (< 3 1.30, < 10 1.10, else 1.00) x (1 + 0.25 per accident in 5 years);
    - territory: ``TERRITORY_FACTORS`` by the first digit of the applicant's ZIP.
    """
    vehicles = sum((vehicle_cents(v, on) for v in quote.vehicles), Decimal(0))
    riskiest = max(driver_factor(d, on) for d in quote.drivers)
    extra_drivers = Decimal(1) + Decimal("0.05") * (len(quote.drivers) - 1)
    territory = Decimal(TERRITORY_FACTORS[int(quote.applicant.zip_code[0])])
    total = vehicles * riskiest * extra_drivers * territory
    return int(total.quantize(Decimal(1), rounding=ROUND_HALF_UP))


# --- the service --------------------------------------------------------------------------


def _fingerprint(operation: str, quote_id: str, body: BaseModel | None) -> str:
    payload = {"op": operation, "quote_id": quote_id, "body": body and body.model_dump(mode="json")}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def key_path(key: str) -> str:
    """Where the idempotency record of ``key`` is kept (hashed: keys may hold any character)."""
    return QUOTE_KEYS.path(hashlib.sha256(key.encode()).hexdigest())


class EmbeddedQuoting(QuotingService):
    """Quotes in the checkpoint store (SQLite or Firestore), rated by ``premium_cents``.

    Args:
        store: where quotes and idempotency records live.
        clock: gives the rating date (driver ages, vehicle ages, ``valid_until``).
    """

    def __init__(self, store: DocumentStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def _today(self) -> date:
        return datetime.fromtimestamp(self._clock.now(), UTC).date()

    def initiate(self, applicant: Applicant, key: str) -> QuoteSession:
        quote = Quote(
            quote_id=f"q_{secrets.token_hex(8)}",
            session_id=f"s_{secrets.token_hex(8)}",
            applicant=applicant,
        )

        def change(tx: Transaction, _: Quote | None) -> dict[str, Any]:
            tx.create(QUOTES.path(quote.quote_id), self._document(quote))
            return QuoteSession(session_id=quote.session_id, quote_id=quote.quote_id).model_dump()

        result = self._once(key, _fingerprint("initiate", "", applicant), None, change)
        return QuoteSession.model_validate(result)

    def add_driver(self, quote_id: str, driver: Driver, key: str) -> Quote:
        def change(tx: Transaction, quote: Quote | None) -> dict[str, Any]:
            assert quote is not None
            quote.drivers.append(driver)
            return self._save(tx, quote)

        fingerprint = _fingerprint("add_driver", quote_id, driver)
        return Quote.model_validate(self._once(key, fingerprint, quote_id, change))

    def add_vehicle(self, quote_id: str, vehicle: Vehicle, key: str) -> Quote:
        problem = vin_problem(vehicle.vin)
        if problem is not None:
            raise QuotingError("invalid_vin", f"VIN {vehicle.vin}: {problem}.", field="vin")
        vehicle = vehicle.model_copy(update={"vin": vehicle.vin.strip().upper()})

        def change(tx: Transaction, quote: Quote | None) -> dict[str, Any]:
            assert quote is not None
            if any(v.vin == vehicle.vin for v in quote.vehicles):
                raise QuotingError(
                    "invalid_input", f"VIN {vehicle.vin} is already on the quote.", field="vin"
                )
            quote.vehicles.append(vehicle)
            return self._save(tx, quote)

        fingerprint = _fingerprint("add_vehicle", quote_id, vehicle)
        return Quote.model_validate(self._once(key, fingerprint, quote_id, change))

    def rate(self, quote_id: str, key: str) -> Rate:
        def change(tx: Transaction, quote: Quote | None) -> dict[str, Any]:
            assert quote is not None
            if not quote.drivers or not quote.vehicles:
                missing = "a driver" if not quote.drivers else "a vehicle"
                raise QuotingError(
                    "not_ratable",
                    f"Quote {quote_id} cannot be rated: add {missing} first.",
                    field="drivers" if not quote.drivers else "vehicles",
                )
            today = self._today()
            annual = premium_cents(quote, today)
            quote.rate = Rate(
                quote_id=quote_id,
                annual_premium_cents=annual,
                monthly_premium_cents=int(
                    (Decimal(annual) / 12).quantize(Decimal(1), rounding=ROUND_HALF_UP)
                ),
                drivers=len(quote.drivers),
                vehicles=len(quote.vehicles),
                valid_until=today + timedelta(days=RATE_VALID_DAYS),
            )
            self._save(tx, quote)
            return quote.rate.model_dump(mode="json")

        return Rate.model_validate(
            self._once(key, _fingerprint("rate", quote_id, None), quote_id, change)
        )

    def get(self, quote_id: str) -> Quote:
        doc = self._store.get(QUOTES.path(quote_id)) if _QUOTE_ID.match(quote_id) else None
        if doc is None:
            raise QuotingError("not_found", f"There is no quote {quote_id}.", field="quote_id")
        return Quote.model_validate(doc["quote"])

    # --- storage ----------------------------------------------------------------------

    def _document(self, quote: Quote) -> dict[str, Any]:
        return {"quote": quote.model_dump(mode="json"), "updated_at": self._clock.now()}

    def _save(self, tx: Transaction, quote: Quote) -> dict[str, Any]:
        tx.set(QUOTES.path(quote.quote_id), self._document(quote))
        return quote.model_dump(mode="json")

    def _once(
        self, key: str, fingerprint: str, quote_id: str | None, change: Any
    ) -> dict[str, Any]:
        """Apply ``change(tx, quote)`` unless ``key`` was used; return the first result."""
        if not key:
            raise QuotingError(
                "invalid_input", "Every write needs an idempotency key.", field="key"
            )

        def run(tx: Transaction) -> dict[str, Any]:
            record = tx.get(key_path(key))
            quote: Quote | None = None
            if quote_id is not None:
                doc = tx.get(QUOTES.path(quote_id)) if _QUOTE_ID.match(quote_id) else None
                if doc is None and record is None:
                    raise QuotingError(
                        "not_found", f"There is no quote {quote_id}.", field="quote_id"
                    )
                quote = Quote.model_validate(doc["quote"]) if doc is not None else None
            if record is not None:
                if record["fingerprint"] != fingerprint:
                    raise QuotingError(
                        "invalid_input",
                        "This idempotency key was already used for a different request.",
                        field="key",
                    )
                return dict(record["result"])
            if quote is not None:
                quote.rate = None  # any change makes an earlier rate stale
            result: dict[str, Any] = change(tx, quote)
            tx.create(
                key_path(key),
                {
                    "fingerprint": fingerprint,
                    "result": result,
                    "created_at": self._clock.now(),
                    "expire_at": self._clock.now() + KEY_RETENTION_S,
                },
            )
            return result

        return self._store.run_transaction(run)


__all__ = [
    "BASE_CENTS_PER_VEHICLE",
    "RATE_VALID_DAYS",
    "TERRITORY_FACTORS",
    "EmbeddedQuoting",
    "premium_cents",
    "vin_check_digit",
    "vin_problem",
]

"""The embedded quoting service on a real store (SQLite, and the Firestore emulator)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.embedded_quoting import (
    EmbeddedQuoting,
    premium_cents,
    vin_check_digit,
    vin_problem,
)
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.graphs.planner.quoting import Applicant, Driver, Quote, QuotingError, Vehicle
from inboxflow.ports.checkpoint import CheckpointStore

# FakeClock's default start, 1_800_000_000, is 2027-01-15 08:00 UTC.
TODAY = date(2027, 1, 15)
GOOD_VIN = "1HGCM82633A004352"  # a real Honda Accord VIN, check digit 3
OTHER_VIN = "JH4KA7561PC008269"  # a real Acura Legend VIN, check digit 1


def applicant(**changes: Any) -> Applicant:
    values: dict[str, Any] = {
        "first_name": "Dana",
        "last_name": "Reyes",
        "email": "dana.reyes@example.com",
        "date_of_birth": date(1985, 6, 1),
        "zip_code": "94105",
    }
    return Applicant.model_validate({**values, **changes})


def driver(**changes: Any) -> Driver:
    values: dict[str, Any] = {
        "first_name": "Dana",
        "last_name": "Reyes",
        "date_of_birth": date(1985, 6, 1),
        "license_number": "D1234567",
        "license_state": "CA",
        "years_licensed": 20,
        "accidents_last_5_years": 1,
    }
    return Driver.model_validate({**values, **changes})


def vehicle(**changes: Any) -> Vehicle:
    values: dict[str, Any] = {
        "vin": GOOD_VIN,
        "year": 2020,
        "make": "Honda",
        "model": "Accord",
        "annual_mileage": 12000,
    }
    return Vehicle.model_validate({**values, **changes})


@pytest.fixture(params=["sqlite", pytest.param("firestore", marks=pytest.mark.emulator)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CheckpointStore]:
    if request.param == "sqlite":
        opened: CheckpointStore = SqliteCheckpointStore(tmp_path / "store.sqlite")
    else:
        request.getfixturevalue("firestore_env")
        from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

        opened = FirestoreCheckpointStore.from_env(os.environ)
    yield opened
    opened.close()


@pytest.fixture
def quoting(store: CheckpointStore) -> EmbeddedQuoting:
    return EmbeddedQuoting(store, FakeClock())


# --- VIN -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vin", "digit"),
    [("1M8GDM9AXKP042788", "X"), ("11111111111111111", "1"), (GOOD_VIN, "3"), (OTHER_VIN, "1")],
)
def test_check_digit_of_known_vins(vin: str, digit: str) -> None:
    assert vin_check_digit(vin) == digit
    assert vin_problem(vin) is None
    assert vin_problem(vin.lower()) is None


@pytest.mark.parametrize(
    ("vin", "says"),
    [
        ("1HGCM82643A004352", "check digit"),  # one digit of the VIN mistyped (3 -> 4)
        ("1HGCM82633A00435", "17 characters"),
        ("1HGCM8263IA004352", "I"),
        ("1HGCM8263OA004352", "O"),
        ("1HGCM8263QA004352", "Q"),
        ("1HGCM8263-A004352", "-"),
    ],
)
def test_bad_vins_say_why(vin: str, says: str) -> None:
    problem = vin_problem(vin)
    assert problem is not None and says in problem


def test_add_vehicle_with_a_mistyped_vin_is_refused_and_adds_nothing(
    quoting: EmbeddedQuoting,
) -> None:
    session = quoting.initiate(applicant(), key="k-init")
    with pytest.raises(QuotingError) as caught:
        quoting.add_vehicle(session.quote_id, vehicle(vin="1HGCM82643A004352"), key="k-veh")
    assert caught.value.code == "invalid_vin" and caught.value.field == "vin"
    assert not caught.value.retryable
    assert quoting.get(session.quote_id).vehicles == []
    # The refused key was not spent: the corrected call under a new key works.
    assert (
        quoting.add_vehicle(session.quote_id, vehicle(), key="k-veh-2").vehicles[0].vin == GOOD_VIN
    )


# --- quotes and idempotency ------------------------------------------------------------


def test_a_quote_is_opened_filled_and_rated_with_the_documented_premium(
    quoting: EmbeddedQuoting, store: CheckpointStore
) -> None:
    session = quoting.initiate(applicant(), key="k1")
    assert store.get(f"quotes/{session.quote_id}") is not None
    quoting.add_driver(session.quote_id, driver(), key="k2")
    quote = quoting.add_vehicle(session.quote_id, vehicle(vin=GOOD_VIN.lower()), key="k3")
    assert [v.vin for v in quote.vehicles] == [GOOD_VIN]
    rate = quoting.rate(session.quote_id, key="k4")
    # $600 x vehicle 1.00 (7 years old) x mileage 1.00 x driver 1.25 (one accident; age 41,
    # 20 years licensed: 1.00) x territory 1.25 (ZIP 9xxxx) = $937.50.
    assert rate.annual_premium_cents == 93_750
    assert rate.monthly_premium_cents == 7_813
    assert (rate.drivers, rate.vehicles, rate.term_months) == (1, 1, 12)
    assert rate.valid_until == date(2027, 2, 14)
    stored = quoting.get(session.quote_id)
    assert stored.rate == rate and stored.applicant == applicant()


def test_ids_are_random_and_distinct(quoting: EmbeddedQuoting) -> None:
    first = quoting.initiate(applicant(), key="a")
    second = quoting.initiate(applicant(), key="b")
    assert first.quote_id != second.quote_id and first.session_id != second.session_id
    assert len(first.quote_id) >= 16


def test_the_same_key_returns_the_first_result_and_applies_once(
    quoting: EmbeddedQuoting, store: CheckpointStore
) -> None:
    session = quoting.initiate(applicant(), key="trace:1:quote_initiate")
    assert quoting.initiate(applicant(), key="trace:1:quote_initiate") == session
    assert len(store.list("quotes")) == 1
    (record,) = [doc for _, doc in store.list("quote_keys")]
    assert record["expire_at"] >= FakeClock().now() + 90 * 86400  # Firestore TTL drops it later
    first = quoting.add_driver(session.quote_id, driver(), key="trace:2:add_driver")
    again = quoting.add_driver(session.quote_id, driver(), key="trace:2:add_driver")
    assert again == first and len(quoting.get(session.quote_id).drivers) == 1


def test_a_key_reused_for_another_request_is_refused(quoting: EmbeddedQuoting) -> None:
    session = quoting.initiate(applicant(), key="k1")
    quoting.add_driver(session.quote_id, driver(), key="k2")
    with pytest.raises(QuotingError) as caught:
        quoting.add_driver(session.quote_id, driver(first_name="Sam"), key="k2")
    assert caught.value.code == "invalid_input" and caught.value.field == "key"
    assert len(quoting.get(session.quote_id).drivers) == 1


def test_a_rate_key_returns_the_first_rate_and_a_change_makes_the_rate_stale(
    quoting: EmbeddedQuoting,
) -> None:
    session = quoting.initiate(applicant(), key="k1")
    quoting.add_driver(session.quote_id, driver(), key="k2")
    quoting.add_vehicle(session.quote_id, vehicle(), key="k3")
    rate = quoting.rate(session.quote_id, key="k4")
    quote = quoting.add_vehicle(session.quote_id, vehicle(vin=OTHER_VIN, year=1993), key="k5")
    assert quote.rate is None and quoting.get(session.quote_id).rate is None
    assert quoting.rate(session.quote_id, key="k4") == rate  # the first answer, replayed
    second = quoting.rate(session.quote_id, key="k6")
    assert second.vehicles == 2 and second.annual_premium_cents > rate.annual_premium_cents


def test_concurrent_calls_with_one_key_add_once(tmp_path: Path) -> None:
    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    quoting = EmbeddedQuoting(store, FakeClock())
    session = quoting.initiate(applicant(), key="k1")
    results: list[Quote] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(
                EmbeddedQuoting(
                    SqliteCheckpointStore(tmp_path / "store.sqlite"), FakeClock()
                ).add_driver(session.quote_id, driver(), key="same")
            )
        )
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6 and all(r == results[0] for r in results)
    assert len(quoting.get(session.quote_id).drivers) == 1


def test_rating_needs_a_driver_and_a_vehicle(quoting: EmbeddedQuoting) -> None:
    session = quoting.initiate(applicant(), key="k1")
    with pytest.raises(QuotingError) as no_driver:
        quoting.rate(session.quote_id, key="r1")
    assert no_driver.value.code == "not_ratable" and no_driver.value.field == "drivers"
    quoting.add_driver(session.quote_id, driver(), key="k2")
    with pytest.raises(QuotingError) as no_vehicle:
        quoting.rate(session.quote_id, key="r1")
    assert no_vehicle.value.code == "not_ratable" and no_vehicle.value.field == "vehicles"


@pytest.mark.parametrize("quote_id", ["q_nope", "../traces/x", "a/b", ""])
def test_unknown_quotes_are_not_found(quoting: EmbeddedQuoting, quote_id: str) -> None:
    for call in (
        lambda: quoting.get(quote_id),
        lambda: quoting.add_driver(quote_id, driver(), key=f"d{quote_id}"),
        lambda: quoting.add_vehicle(quote_id, vehicle(), key=f"v{quote_id}"),
        lambda: quoting.rate(quote_id, key=f"r{quote_id}"),
    ):
        with pytest.raises(QuotingError) as caught:
            call()
        assert caught.value.code == "not_found"


def test_a_write_without_a_key_is_refused(quoting: EmbeddedQuoting) -> None:
    with pytest.raises(QuotingError) as caught:
        quoting.initiate(applicant(), key="")
    assert caught.value.code == "invalid_input" and caught.value.field == "key"


# --- the premium formula ---------------------------------------------------------------


def _premium(drivers: list[Driver], vehicles: list[Vehicle], zip_code: str = "94105") -> int:
    quote = Quote(
        quote_id="q",
        session_id="s",
        applicant=applicant(zip_code=zip_code),
        drivers=drivers,
        vehicles=vehicles,
    )
    return premium_cents(quote, TODAY)


def test_each_rating_factor_moves_the_premium_as_documented() -> None:
    base = _premium([driver(accidents_last_5_years=0)], [vehicle()])
    assert base == 75_000  # $600 x territory 1.25
    assert _premium([driver(accidents_last_5_years=2)], [vehicle()]) == 112_500  # x 1.5
    young = driver(date_of_birth=date(2007, 1, 16), years_licensed=1, accidents_last_5_years=0)
    assert _premium([young], [vehicle()]) == 175_500  # x 1.80 (age 19) x 1.30 (1 year)
    turns_21_today = young.model_copy(update={"date_of_birth": date(2006, 1, 15)})
    assert _premium([turns_21_today], [vehicle()]) == 136_500  # x 1.40 x 1.30
    assert _premium([driver(accidents_last_5_years=0)], [vehicle(year=2025)]) == 86_250  # x 1.15
    assert _premium([driver(accidents_last_5_years=0)], [vehicle(year=2010)]) == 63_750  # x 0.85
    assert _premium([driver(accidents_last_5_years=0)], [vehicle(annual_mileage=5000)]) == 67_500
    assert _premium([driver(accidents_last_5_years=0)], [vehicle(annual_mileage=20000)]) == 86_250
    assert (
        _premium([driver(accidents_last_5_years=0)], [vehicle()], zip_code="50309") == 54_000
    )  # territory 0.90
    two = [driver(accidents_last_5_years=0), young]
    assert _premium(two, [vehicle(), vehicle(vin=OTHER_VIN)]) == 368_550  # 2 x 1.05 x riskiest

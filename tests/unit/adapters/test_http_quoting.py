"""The HTTP quoting adapter against the quoting API double, through real HTTP."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
import requests

from inboxflow.adapters.http_quoting import HttpQuoting
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.quoting_api import QuotingApiDouble
from inboxflow.graphs.planner.quoting import QuotingError
from tests.unit.adapters.test_embedded_quoting import GOOD_VIN, applicant, driver, vehicle

API_KEY = "test-quoting-key"


@pytest.fixture
def double() -> Iterator[QuotingApiDouble]:
    with QuotingApiDouble(clock=FakeClock(), api_key=API_KEY) as served:
        yield served


@pytest.fixture
def client(double: QuotingApiDouble) -> Iterator[HttpQuoting]:
    quoting = HttpQuoting(double.url, API_KEY, timeout=2.0, retries=3, backoff_s=0.01)
    yield quoting
    quoting.close()


def _error(call: object) -> QuotingError:
    with pytest.raises(QuotingError) as caught:
        call()  # type: ignore[operator]
    return caught.value


def test_a_quote_through_http_is_rated_like_the_embedded_engine(
    client: HttpQuoting, double: QuotingApiDouble
) -> None:
    session = client.initiate(applicant(), key="k1")
    client.add_driver(session.quote_id, driver(), key="k2")
    quote = client.add_vehicle(session.quote_id, vehicle(), key="k3")
    assert quote.vehicles[0].vin == GOOD_VIN and quote.drivers[0] == driver()
    rate = client.rate(session.quote_id, key="k4")
    assert (
        rate.annual_premium_cents == 93_750
    )  # as tests/unit/adapters/test_embedded_quoting.py works out
    assert client.get(session.quote_id).rate == rate
    assert [c.idempotency_key for c in double.calls] == ["k1", "k2", "k3", "k4", None]
    assert [c.status for c in double.calls] == [201, 200, 200, 200, 200]


def test_every_error_code_comes_back_as_its_quoting_error(
    client: HttpQuoting, double: QuotingApiDouble
) -> None:
    session = client.initiate(applicant(), key="k1")
    not_found = _error(lambda: client.get("q_missing"))
    assert (not_found.code, not_found.field) == ("not_found", "quote_id")
    slash = _error(lambda: client.add_driver("a/b", driver(), key="kx"))
    assert slash.code == "not_found"
    not_ratable = _error(lambda: client.rate(session.quote_id, key="r1"))
    assert (not_ratable.code, not_ratable.field) == ("not_ratable", "drivers")
    bad_vin = _error(
        lambda: client.add_vehicle(session.quote_id, vehicle(vin="1HGCM82643A004352"), key="v1")
    )
    assert (bad_vin.code, bad_vin.field) == ("invalid_vin", "vin")
    assert "check digit" in bad_vin.message and not bad_vin.retryable
    client.add_driver(session.quote_id, driver(), key="d1")
    reused = _error(lambda: client.add_driver(session.quote_id, driver(first_name="Sam"), key="d1"))
    assert (reused.code, reused.field) == ("invalid_input", "key")
    unavailable = _error(lambda: double.fail_next("get", 503, times=10) or client.get("q_x"))
    assert unavailable.code == "unavailable" and unavailable.retryable
    # Each permanent refusal was asked once: 4xx answers are not retried.
    assert double.count("rate") == double.count("add_vehicle") == 1
    assert double.count("add_driver") == 2  # d1, then d1 reused ("a/b" matches no route)
    assert double.count("get", 503) == 4  # the first try and three retries


def test_a_malformed_body_is_invalid_input_naming_the_field(double: QuotingApiDouble) -> None:
    answer = requests.post(
        f"{double.url}/v1/quotes",
        json={**applicant().model_dump(mode="json"), "zip_code": "941"},
        headers={"Authorization": f"Bearer {API_KEY}", "Idempotency-Key": "k"},
        timeout=5,
    )
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_input" and answer.json()["field"] == "zip_code"
    unkeyed = requests.post(
        f"{double.url}/v1/quotes",
        json=applicant().model_dump(mode="json"),
        headers={"Authorization": f"Bearer {API_KEY}"},
        timeout=5,
    )
    assert unkeyed.status_code == 400 and unkeyed.json()["field"] == "Idempotency-Key"


@pytest.mark.parametrize("status", [503, 429, 502, 504])
def test_a_transient_failure_is_retried_with_the_same_key_then_succeeds(
    client: HttpQuoting, double: QuotingApiDouble, status: int
) -> None:
    session = client.initiate(applicant(), key="k1")
    double.fail_next("add_driver", status, times=2)
    quote = client.add_driver(session.quote_id, driver(), key="k2")
    assert len(quote.drivers) == 1
    tries = [c for c in double.calls if c.endpoint == "add_driver"]
    assert [c.status for c in tries] == [status, status, 200]
    assert {c.idempotency_key for c in tries} == {"k2"}


def test_a_retry_after_a_lost_answer_does_not_add_twice(
    client: HttpQuoting, double: QuotingApiDouble
) -> None:
    session = client.initiate(applicant(), key="k1")
    double.fail_next("add_vehicle", 503, after_apply=True)  # the change is made, the answer lost
    quote = client.add_vehicle(session.quote_id, vehicle(), key="k2")
    assert [c.status for c in double.calls if c.endpoint == "add_vehicle"] == [503, 200]
    assert len(quote.vehicles) == 1 and len(client.get(session.quote_id).vehicles) == 1


def test_a_timeout_becomes_unavailable_after_the_retries(double: QuotingApiDouble) -> None:
    client = HttpQuoting(double.url, API_KEY, timeout=0.2, retries=1, backoff_s=0.01)
    double.slow_next("*", 1.0, times=2)
    started = time.monotonic()
    error = _error(lambda: client.initiate(applicant(), key="k1"))
    assert error.code == "unavailable" and error.retryable
    assert time.monotonic() - started < 1.0  # two tries of 0.2 s, not the server's 1 s
    time.sleep(1.2)  # the double records a call once it has answered
    assert double.count("initiate") == 2
    client.close()


def test_a_refused_api_key_is_not_retried(double: QuotingApiDouble) -> None:
    client = HttpQuoting(double.url, "wrong-key", retries=3, backoff_s=0.01)
    error = _error(lambda: client.initiate(applicant(), key="k1"))
    assert error.code == "unavailable" and not error.retryable and "API key" in error.message
    assert double.count("initiate") == 1 and double.count("initiate", 401) == 1
    client.close()


def test_no_server_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = HttpQuoting(f"http://127.0.0.1:{port}", None, timeout=0.5, retries=1, backoff_s=0.01)
    error = _error(lambda: client.get("q_1"))
    assert error.code == "unavailable" and error.retryable
    client.close()


def test_settings_come_from_the_environment() -> None:
    client = HttpQuoting.from_env(
        {"INBOXFLOW_QUOTING_URL": "https://quotes.example/", "INBOXFLOW_QUOTING_API_KEY": "s3"}
    )
    assert client.base_url == "https://quotes.example"
    assert client._session.headers["Authorization"] == "Bearer s3"
    with pytest.raises(ValueError, match="INBOXFLOW_QUOTING_URL"):
        HttpQuoting.from_env({})
    with pytest.raises(ValueError, match="http"):
        HttpQuoting("quotes.example")

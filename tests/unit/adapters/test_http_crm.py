"""The HTTP CRM adapter through real HTTP against the local CRM double: lookups with the key,
retries with backoff on 5xx/429/timeouts, clear errors, the selection by INBOXFLOW_CRM_URL, and
the support graph finding a customer only the HTTP CRM knows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inboxflow.adapters.embedded_crm import SAMPLE_CUSTOMERS, EmbeddedCRM
from inboxflow.adapters.http_crm import HttpCRM, choose_crm
from inboxflow.dev.doubles.crm_api import CrmDouble, start_crm_double
from inboxflow.errors import NodeFailed, RetryableError
from inboxflow.graphs.support.crm import CUSTOMERS, CRMError, CRMUnavailable, Customer
from tests.harness.support import build, email, run, tickets

ACME = Customer(
    customer_id="cus_pro_acme",
    name="Acme Rockets",
    email="ops@acme-rockets.example",
    plan="pro",
    tenure_months=7,
    seats=25,
    region="us",
)


@pytest.fixture
def double() -> Iterator[CrmDouble]:
    with start_crm_double([*SAMPLE_CUSTOMERS, ACME], api_key="crm-key") as running:
        yield running


def _crm(double: CrmDouble, **kw) -> tuple[HttpCRM, list[float]]:
    waits: list[float] = []
    kw.setdefault("api_key", "crm-key")
    return HttpCRM(double.base_url, sleep=waits.append, **kw), waits


def test_a_customer_is_found_by_address_with_the_key(double):
    crm, waits = _crm(double)
    assert crm.find_by_email("  OPS@Acme-Rockets.example ") == ACME
    assert crm.find_by_email("nobody@example.com") is None
    (path, query, auth), _ = double.requests
    assert (path, query, auth) == (
        "/customers",
        {"email": ["ops@acme-rockets.example"]},
        "Bearer crm-key",
    )
    assert waits == []


def test_transient_failures_are_retried_with_backoff(double):
    crm, waits = _crm(double)
    double.fail(503, 502)
    assert crm.find_by_email("ops@acme-rockets.example") == ACME
    assert waits == [0.2, 0.4] and len(double.requests) == 3
    double.fail(429, retry_after=1.5)
    assert crm.find_by_email("ops@acme-rockets.example") == ACME
    assert waits[-1] == 1.5  # Retry-After honoured


def test_a_crm_that_stays_down_or_slow_is_retryable(double):
    crm, _ = _crm(double, attempts=3)
    double.fail(503, 503, 503)
    with pytest.raises(CRMUnavailable, match=r"unavailable after 3 attempts \(HTTP 503\)"):
        crm.find_by_email("ops@acme-rockets.example")
    assert isinstance(CRMUnavailable("x"), RetryableError)
    slow, _ = _crm(double, timeout_s=0.2, attempts=2)
    double.stall(1.0)
    assert slow.find_by_email("ops@acme-rockets.example") == ACME  # the second try answers
    double.stall(1.0)
    double.stall(1.0)
    with pytest.raises(CRMUnavailable, match="ReadTimeout"):
        slow.find_by_email("ops@acme-rockets.example")


def test_refusals_and_unreadable_answers_are_clear_errors_without_retries(double):
    wrong, waits = _crm(double, api_key="stolen")
    with pytest.raises(CRMError, match=r"refused the request \(401\): check INBOXFLOW_CRM_API_KEY"):
        wrong.find_by_email("ops@acme-rockets.example")
    assert len(double.requests) == 1 and waits == []
    assert issubclass(CRMError, NodeFailed)
    crm, _ = _crm(double)
    double.answer(200, "<html>maintenance</html>")
    with pytest.raises(CRMError, match=r"not \{'customers': \[\.\.\.\]\}"):
        crm.find_by_email("a@b.example")
    double.answer(200, {"customers": [ACME.model_dump(), ACME.model_dump()]})
    with pytest.raises(CRMError, match=r"2 customers for a@b\.example: refusing to guess"):
        crm.find_by_email("a@b.example")
    double.answer(200, {"customers": [{**ACME.model_dump(), "plan": "platinum"}]})
    with pytest.raises(CRMError, match=r"CRM customer for a@b.example: plan: Input should be"):
        crm.find_by_email("a@b.example")
    double.answer(400, {"error": "bad email"})
    with pytest.raises(CRMError, match="CRM answered 400"):
        crm.find_by_email("a@b.example")
    double.answer(404, {"error": "no such customer"})
    assert crm.find_by_email("a@b.example") is None


def test_choose_crm_follows_the_environment(double):
    assert isinstance(choose_crm({}), EmbeddedCRM)
    chosen = choose_crm(
        {"INBOXFLOW_CRM_URL": double.base_url + "/", "INBOXFLOW_CRM_API_KEY": "crm-key"}
    )
    assert isinstance(chosen, HttpCRM) and chosen.find_by_email(ACME.email) == ACME
    with pytest.raises(ValueError, match="INBOXFLOW_CRM_TIMEOUT_S: 'soon' is not a number"):
        choose_crm({"INBOXFLOW_CRM_URL": double.base_url, "INBOXFLOW_CRM_TIMEOUT_S": "soon"})
    with pytest.raises(ValueError, match=r"INBOXFLOW_CRM_URL: 'crm\.local' is not an http"):
        choose_crm({"INBOXFLOW_CRM_URL": "crm.local"})


def test_the_support_graph_looks_customers_up_in_the_http_crm(double, tmp_path, monkeypatch):
    monkeypatch.setenv("INBOXFLOW_CRM_URL", double.base_url)
    monkeypatch.setenv("INBOXFLOW_CRM_API_KEY", "crm-key")
    runtime = build(tmp_path)
    assert isinstance(runtime.ports.service(CUSTOMERS), HttpCRM)
    state = run(
        runtime,
        email(ACME.email, "Sync", "Our sync keeps failing with timeouts since this morning.", "a1"),
    )
    assert state["customer"]["customer_id"] == "cus_pro_acme" and state["customer_known"]
    assert state["supervision"]["urgency"] == "high"  # pro + service disruption
    assert len(tickets(runtime, "cus_pro_acme")) == 1
    assert any(query == {"email": [ACME.email]} for _, query, _ in double.requests)
    runtime.store.close()


def test_a_crm_that_folds_unicode_case_does_not_make_a_look_alike_the_customer():
    """The double lowercases as many CRMs do (the Kelvin sign becomes a k): the adapter asks
    by the address's key and takes no customer whose address is another's."""
    kim = ACME.model_copy(update={"customer_id": "cus_kim", "email": "kim@acme-rockets.example"})
    with start_crm_double([kim], api_key="crm-key") as running:
        crm, _ = _crm(running)
        assert crm.find_by_email("\u212aim@acme-rockets.example") is None
        assert crm.find_by_email("KIM@acme-rockets.example") == kim
        assert crm.find_by_email("kim@acme-roc\u212aets.example") is None  # no IDNA 2008 domain
        assert [q["email"] for _, q, _ in running.requests] == [
            ["\u212aim@acme-rockets.example"],
            ["kim@acme-rockets.example"],
        ]


def test_settings_are_checked_and_the_key_stays_out_of_the_repr():
    crm = HttpCRM("https://crm.example.com/api/", "secret-key")
    assert crm.base_url == "https://crm.example.com/api"
    assert "secret-key" not in repr(crm)
    with pytest.raises(ValueError, match="at least one attempt"):
        HttpCRM("https://crm.example.com", attempts=0)
    with pytest.raises(ValueError, match="positive timeout"):
        HttpCRM("https://crm.example.com", timeout_s=0)

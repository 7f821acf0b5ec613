"""A planner's customer wait is bound to the customer (issue 25, 3): only a reply from the
customer's own address, authenticated by our receiving server, resumes the wait or is queued
for the trace; a stranger in the thread (no party of it, ``threads.py``) starts a trace of
their own; anything else in the thread is recorded (``failures``, ``inboxflow trace``),
claimed ``refused`` and never read, so it never changes the quote."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.cli import inspect
from inboxflow.ingest.claims import claim_path
from inboxflow.mail import Email
from inboxflow.mail_stamps import trace_key_of
from tests.harness.mail_auth import gmail_fail, gmail_pass
from tests.harness.planner import (
    AGENCY,
    MAILBOX,
    PASS,
    VALID_VIN,
    CustomerWait,
    Mailbox,
    build,
    eml,
    pending,
    reply_email,
    sample,
    sent,
    state,
)

CUSTOMER = "jordan.rivera@example.com"
DETAILS = (
    "Hi,\n\nMy driver's license is D4821937 (CA), licensed for 12 years, no accidents.\n"
    f"VIN: {VALID_VIN}\n\nJordan"
)
MALLORY = {"address": "mallory@evil.example", "name": "Jordan Rivera"}
STRANGERS = [
    pytest.param({"sender": MALLORY}, gmail_pass("mallory@evil.example"), id="a stranger"),
    pytest.param(
        {"sender": MALLORY, "message_id": "quote-jordan-1@example.com"},
        gmail_pass("mallory@evil.example"),
        id="forged with the thread's first Message-ID",
    ),
    pytest.param({}, gmail_fail(CUSTOMER), id="the customer spoofed, dmarc=fail"),
    pytest.param({}, None, id="the customer, no Authentication-Results"),
    pytest.param({}, gmail_pass(CUSTOMER, "mx.evil.example"), id="foreign authserv-id"),
    pytest.param(
        {"sender": {"address": CUSTOMER, "name": ""}, "headers": {}},
        "mx.google.com; dkim=none; spf=neutral smtp.mailfrom=bounce@evil.example; "
        "dmarc=none header.from=example.com",
        id="dmarc=none",
    ),
]


@pytest.fixture
def wait(tmp_path: Path) -> CustomerWait:
    # The store file ``inboxflow trace --home tmp_path`` reads.
    return CustomerWait(build(tmp_path, store=SqliteCheckpointStore(tmp_path / "inboxflow.db")))


def _deliver(
    mailbox: Mailbox, first: Email, first_id: str, n: int, authentication: str | None, **fields: Any
) -> str:
    """A reply in ``first``'s thread (by default the customer's, with their details)."""
    reply = reply_email(first, DETAILS, "ignored", message_id=f"reply-{n}@example.com")
    reply = reply.model_validate({**reply.model_dump(), **fields})
    raw = eml(reply, authentication)
    return mailbox.gmail.deliver(MAILBOX, raw, thread_id=first_id, notify=False)


@pytest.mark.parametrize(("fields", "authentication"), STRANGERS)
def test_a_reply_that_is_not_the_customers_own_resumes_nothing_and_is_recorded(
    wait: CustomerWait,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fields: dict[str, Any],
    authentication: str | None,
) -> None:
    before = state(wait.runtime, wait.trace_id)
    gmail_id = _deliver(wait.mailbox, wait.email, wait.first_id, 1, authentication, **fields)
    report = wait.notify()
    wait.runtime.bus.drain()  # type: ignore[attr-defined]
    assert report.resumed == [] and report.queued == []
    claim = wait.claim(gmail_id)
    after = wait.runtime.store.get_trace(wait.trace_id)
    assert after is not None and after.status == "waiting" and after.step == wait.checkpoint.step
    assert state(wait.runtime, wait.trace_id)["customer_info"] == before["customer_info"]
    assert wait.approval()["status"] == "pending"  # the wait's deadline still holds
    assert wait.runtime.store.list("trace_replies") == []
    if fields.get("sender") == MALLORY:
        # no party of the thread: a trace of her own, which says why (threads.py)
        assert claim["state"] == "started" and report.started == [claim["trace_id"]]
        own = wait.runtime.store.get_trace(claim["trace_id"])
        assert own is not None and own.route is not None and own.trace_id != wait.trace_id
        assert "mallory@evil.example is not a party of thread" in str(own.route.outside_thread)
        assert own.state["email"]["sender"]["address"] == MALLORY["address"]
        assert own.state["customer_info"]["email"] == MALLORY["address"]  # not Jordan's quote
    else:
        # the customer's address, unauthenticated: a party, but a wait needs the customer
        assert report.started == []
        assert claim["state"] == "refused" and claim["trace_id"] == wait.trace_id
        (failure,) = wait.ingest_failures()
        assert failure["trace_id"] == wait.trace_id and "changes nothing" in failure["reason"]
        # the agency sees it on the trace
        inspect.trace(wait.trace_id, at=None, as_json=False, dev=False, home=tmp_path)
        shown = " ".join(capsys.readouterr().out.split())
        assert "1 recorded failures" in shown and gmail_id in shown

    # the customer's own reply still resumes the wait, with the customer's details
    _deliver(wait.mailbox, wait.email, wait.first_id, 2, PASS)
    report = wait.notify()
    assert report.resumed == [wait.trace_id]
    wait.runtime.bus.drain()  # type: ignore[attr-defined]
    resumed = state(wait.runtime, wait.trace_id)
    assert resumed["customer_info"]["vin"] == VALID_VIN
    assert [m for m in resumed["seen_reply_ids"] if m.startswith("reply-1")] == []


def test_a_strangers_reply_during_a_review_is_not_queued_nor_read(tmp_path: Path) -> None:
    runtime = build(tmp_path)
    mailbox, first = Mailbox(runtime), sample("41")
    first_id, report = mailbox.receive(first)
    (trace_id,) = report.started
    assert pending(runtime, trace_id).payload["tool"] == "ask_customer"  # the agency reviews

    stranger = gmail_pass("mallory@evil.example")
    gmail_id = _deliver(mailbox, first, first_id, 1, stranger, sender=MALLORY)
    report = mailbox.ingest()
    assert report.queued == [] and runtime.store.list("trace_replies") == []
    claim = runtime.store.get(claim_path(MAILBOX, gmail_id))
    assert claim is not None and claim["state"] == "started"  # a trace of her own
    assert claim["trace_id"] != trace_id and report.started == [claim["trace_id"]]

    runtime.ports.approvals.decisions.decide_as(
        pending(runtime, trace_id).approval_id, AGENCY, "approve"
    )
    runtime.bus.drain()  # type: ignore[attr-defined]
    after = state(runtime, trace_id)
    assert after["seen_reply_ids"] == [first_id]
    assert after["customer_info"].get("vin") != VALID_VIN


def test_mail_to_the_customer_carries_nothing_of_the_trace(wait: CustomerWait) -> None:
    """What the customer receives names no trace id, and no key it could hash into the
    Message-ID of a review email: the stamps are random (``mail_stamps.py``)."""
    (asked,) = sent(wait.runtime, wait.trace_id)
    stamp = asked["headers"]["X-Inboxflow-Trace"]
    assert re.fullmatch(r"[0-9a-f]{32}", stamp)
    assert wait.trace_id not in stamp and wait.trace_id not in asked["message_id"]
    digest = hashlib.sha256(asked["trace_key"].encode()).hexdigest()[:32]
    assert digest not in (stamp, asked["message_id"])
    assert trace_key_of(wait.runtime.store, stamp) == asked["trace_key"]  # we can still tell

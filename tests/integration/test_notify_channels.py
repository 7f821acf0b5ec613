"""Reviewer channels end to end: SES on moto (``mock_aws`` and moto's server over HTTP), a
webhook on a local receiver and Gmail's outbox, behind the approval service.

Done when a reviewer configured for SES gets exactly one email per approval under
duplicate delivery and a crash after the send.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.channels import ChannelNotifier, channel_factory
from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.adapters.notifiers import OutboxNotifier, outbox_messages
from inboxflow.adapters.ses_notifier import SesNotifier
from inboxflow.adapters.webhook_notifier import WebhookNotifier
from inboxflow.approvals.settings import ApprovalConfig
from inboxflow.config import Delivery, InboxflowConfig, parse_config
from inboxflow.envelope import Envelope
from inboxflow.errors import RetryableError
from inboxflow.graphs.pipeline.settings import PipelineSettings
from inboxflow.ports.notifier import Notification, Notifier
from tests.harness.approval import LINK, Harness, sample
from tests.harness.ses_double import REGION, SesDouble
from tests.harness.webhook_receiver import WebhookReceiver

SENDER = "approvals@brightlane.io"
ANA = "ana@partner.example"  # verified in the sandbox
BEN = "ben@partner.example"  # verified in the sandbox
EVE = "eve@elsewhere.example"  # not verified: the sandbox refuses her
GIL = "gil@brightlane.io"  # gmail (the outbox here)
OPS = "ops@brightlane.io"  # the on-call chat room's webhook
HOSTILE_BODY = "<script>alert('x')</script> <img src=x onerror=alert(1)> & please refund"


@pytest.fixture(params=["mock_aws", "server"])
def ses(request: pytest.FixtureRequest) -> Iterator[SesDouble]:
    with SesDouble(request.param).running() as double:
        double.verify(SENDER, ANA, BEN)
        yield double


@pytest.fixture
def chat() -> Iterator[WebhookReceiver]:
    with WebhookReceiver().running() as receiver:
        yield receiver


def _config(url: str = "https://chat.example/hook") -> InboxflowConfig:
    return parse_config(
        {
            "channels": {"ses": {"region": REGION, "sender": SENDER}},
            "reviewers": {
                ANA: {"channel": "ses"},
                BEN: {"channel": "ses"},
                EVE: {"channel": "ses"},
                OPS: {"channel": "webhook", "url": url, "format": "chat"},
            },
        },
        graphs={},
    )


def _harness(
    tmp_path: Path,
    ses: SesDouble,
    reviewers: tuple[str, ...],
    url: str = "https://chat.example/hook",
    sleeps: list[float] | None = None,
) -> Harness:
    h = Harness(
        tmp_path,
        config=ApprovalConfig(base_url="http://approvals.test"),
        settings=PipelineSettings(reviewers=reviewers, approval_deadline_s=3600),
    )
    waits = sleeps if sleeps is not None else []

    def build(delivery: Delivery) -> Notifier:
        if delivery.channel == "ses":
            assert delivery.region and delivery.sender
            return SesNotifier(
                h.store,
                delivery.region,
                delivery.sender,
                h.clock,
                client=ses.client(),
                sleep=waits.append,
            )
        if delivery.channel == "webhook":
            assert delivery.url
            return WebhookNotifier(
                h.store, delivery.url, delivery.format or "chat", h.clock, sleep=waits.append
            )
        return OutboxNotifier(h.store, h.clock, deliver=h.inbox.append)

    h.service.notifier = ChannelNotifier(_config(url), build, h.store)
    return h


def _hostile_email() -> dict[str, Any]:
    email = sample("04-complaint-double-charge")
    email["subject"] = "Refund <b>now</b> <script>steal()</script>"
    email["body_text"] = HOSTILE_BODY + "\n" + str(email.get("body_text") or "")
    return email


def _redeliver(h: Harness, trace_id: str) -> None:
    approval = h.approval_of(trace_id)
    h.service.after_pause(approval)
    h.runtime.handle(
        Envelope(trace_id=trace_id, graph="pipeline", node="review", step=approval.step, sent_at=0)
    )
    h.drain()


def test_an_ses_reviewer_gets_text_and_html_with_the_link_and_no_token_in_the_subject(
    tmp_path: Path, ses: SesDouble
) -> None:
    h = _harness(tmp_path, ses, (ANA,))
    trace_id = h.start(_hostile_email())
    approval = h.approval_of(trace_id)

    (sent,) = ses.sent_to(ANA)
    assert sent["source"] == SENDER
    (request,) = ses.requests_to(ANA)
    simple = request["Content"]["Simple"]
    subject, text, html = (
        simple["Subject"]["Data"],
        simple["Body"]["Text"]["Data"],
        simple["Body"]["Html"]["Data"],
    )
    assert subject.startswith("Approve reply to ") and "t=" not in subject and "http" not in subject
    (link,) = [m for m in LINK.finditer(text)]
    assert link.group(1) == approval.approval_id
    token = link.group(2)
    assert token not in subject and f"?t={token}" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<b>now</b>" not in html
    assert sent["body"] == html  # what moto kept is what was sent
    # The link opens the review page (a GET changes nothing).
    assert h.client.get(f"/a/{approval.approval_id}?t={token}").status_code == 200
    # The outbox keeps the receipt with the token redacted.
    (copy,) = outbox_messages(h.store, channel="ses")
    assert copy["message_id"] == sent["id"] and token not in copy["text"]


def test_duplicate_delivery_and_a_crash_after_the_send_give_one_email_per_reviewer(
    tmp_path: Path, ses: SesDouble
) -> None:
    h = _harness(tmp_path, ses, (ANA, BEN))
    crashed: list[str] = []

    def crash_once(point: str) -> None:
        if point.startswith("after_effect:notify-") and point not in crashed:
            crashed.append(point)
            raise SimulatedCrash(point)  # the process dies after SES accepted the email

    h.service.journal.fault = crash_once
    trace_id = h.start()
    assert len(crashed) == 2  # each send crashed once; the bus redelivered the pausing step
    for _ in range(2):
        _redeliver(h, trace_id)
    assert len(ses.sent_to(ANA)) == 1 and len(ses.sent_to(BEN)) == 1
    assert len([r for r in ses.arrived if ANA in r["Destination"]["ToAddresses"]]) == 1
    effects = [doc for path, doc in h.store.list("effects") if ":notify-0-" in path]
    assert sorted(e["reconciled"] for e in effects) == [True, True]
    assert h.approval_of(trace_id).notify_errors == {}


def test_the_sandbox_refusal_is_recorded_for_that_reviewer_and_the_others_are_notified(
    tmp_path: Path, ses: SesDouble
) -> None:
    h = _harness(tmp_path, ses, (EVE, ANA))
    trace_id = h.start()
    approval = h.approval_of(trace_id)
    assert len(ses.sent_to(ANA)) == 1 and ses.sent_to(EVE) == []
    error = approval.notify_errors[EVE]
    assert error.startswith("ses: ") and "MessageRejected" in error
    assert "not verified" in error and EVE in error
    assert set(approval.notify_errors) == {EVE}
    # A refusal is final: a redelivery does not knock on SES's door again.
    arrived = len(ses.arrived)
    _redeliver(h, trace_id)
    assert len(ses.arrived) == arrived
    assert h.store.get_trace(trace_id).status == "waiting"  # type: ignore[union-attr]


def test_throttling_is_retried_with_backoff(tmp_path: Path, ses: SesDouble) -> None:
    sleeps: list[float] = []
    h = _harness(tmp_path, ses, (ANA,), sleeps=sleeps)
    ses.throttle_next = 2
    h.start()
    assert len(ses.sent_to(ANA)) == 1
    assert len(ses.arrived) == 3 and sleeps == [0.5, 1.0]


def test_throttling_that_outlasts_the_retries_is_redelivered_and_others_are_notified_first(
    tmp_path: Path, ses: SesDouble
) -> None:
    sleeps: list[float] = []
    h = _harness(tmp_path, ses, (ANA, BEN), sleeps=sleeps)
    ses.throttle_next = 4  # every try of ANA's first send
    trace_id = h.start()  # after_pause raises RetryableError; the bus redelivers the step
    assert [m["to"] for m in ses.sent()] == [[BEN], [ANA]]  # BEN did not wait for ANA
    assert sleeps[:3] == [0.5, 1.0, 2.0]
    assert len([r for r in ses.arrived if ANA in r["Destination"]["ToAddresses"]]) == 5
    assert h.approval_of(trace_id).notify_errors == {}
    with pytest.raises(RetryableError):  # the same outcome without the bus around it
        ses.throttle_next = 4
        _harness(tmp_path / "again", ses, (ANA,)).service.notifier.send(
            Notification(ANA, "s", "t", "<p>h</p>", "k-again")
        )


def test_one_approval_reaches_a_gmail_an_ses_and_a_webhook_reviewer_once_each(
    tmp_path: Path, ses: SesDouble, chat: WebhookReceiver
) -> None:
    h = _harness(tmp_path, ses, (GIL, ANA, OPS), url=chat.url)
    trace_id = h.start()
    _redeliver(h, trace_id)
    approval = h.approval_of(trace_id)
    assert [m["to"] for m in h.inbox] == [GIL]
    assert len(ses.sent_to(ANA)) == 1
    (post,) = chat.posts
    button = post["cardsV2"][0]["card"]["sections"][0]["widgets"][1]["buttonList"]["buttons"][0]
    url = button["onClick"]["openLink"]["url"]
    match = re.search(r"/a/([^?]+)\?t=(.+)$", url)
    assert match and match.group(1) == approval.approval_id
    assert h.client.get(f"/a/{match.group(1)}?t={match.group(2)}").status_code == 200
    assert match.group(2) not in post["text"]
    channels = sorted(m["channel"] for m in outbox_messages(h.store))
    assert channels == ["gmail", "ses", "webhook"]
    assert approval.notify_errors == {}


def test_the_deployed_wiring_sends_through_moto_over_http(tmp_path: Path) -> None:
    """``channel_factory`` as a function builds it: live delivery, the credentials secret as
    ``INBOXFLOW_SES_CREDENTIALS``, the endpoint from ``AWS_ENDPOINT_URL_SESV2``."""
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
    from inboxflow.clock import FakeClock

    with SesDouble("server").running() as ses:
        ses.verify(SENDER, ANA)
        store = SqliteCheckpointStore(tmp_path / "live.db")
        environ = {**ses.environ(), "INBOXFLOW_NOTIFY_DELIVERY": "live"}
        notifier = ChannelNotifier(
            _config(), channel_factory(store, FakeClock(), environ, None), store
        )
        receipt = notifier.send(
            Notification(ANA, "Approve", "text", "<p>html</p>", "tr:1:notify-0-ana")
        )
        (sent,) = ses.sent_to(ANA)
        assert receipt == {"id": sent["id"], "channel": "ses"}
        assert notifier.find("tr:1:notify-0-ana") == {"id": sent["id"]}
        store.close()

"""Digests through each reviewer channel: Amazon SES (moto), a chat webhook (a local receiver)
and Gmail (the Gmail API double through the real client), behind ``ChannelNotifier``.

Each reviewer gets one digest with one sign-in link; a crash after the send is found again
by the digest's key on every channel, so nothing is sent twice.
"""

from __future__ import annotations

import email
import json
from collections.abc import Iterator
from email import policy
from pathlib import Path

import pytest

from inboxflow.adapters.channels import ChannelNotifier
from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.adapters.notifiers import GmailNotifier, OutboxNotifier
from inboxflow.adapters.ses_notifier import SesNotifier
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.webhook_notifier import WebhookNotifier
from inboxflow.approvals.digests import DIGEST_LEASE_S
from inboxflow.clock import FakeClock
from inboxflow.config import Delivery
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.ports.notifier import Notifier
from tests.harness.digest import SIGN_IN, URL, DigestWorld, digest_config, utc
from tests.harness.ses_double import REGION, SesDouble
from tests.harness.webhook_receiver import WebhookReceiver

SENDER = "approvals@brightlane.io"
MAILBOX = "maya.chen@brightlane.io"
ANA = "ana@partner.example"  # SES
OPS = "ops-lead"  # the on-call room's webhook
GIL = "gil@brightlane.io"  # Gmail


@pytest.fixture
def ses() -> Iterator[SesDouble]:
    with SesDouble("mock_aws").running() as double:
        double.verify(SENDER, ANA)
        yield double


@pytest.fixture
def chat() -> Iterator[WebhookReceiver]:
    with WebhookReceiver().running() as receiver:
        yield receiver


@pytest.fixture
def gmail() -> Iterator[GoogleApiDouble]:
    with GoogleApiDouble(clock=FakeClock(utc("2027-01-15 09:00"))) as double:
        double.seed_from_workspace_json(mailbox=MAILBOX, now=utc("2027-01-15 09:00"))
        yield double


def _world(
    tmp_path: Path, ses: SesDouble, chat: WebhookReceiver, gmail: GoogleApiDouble
) -> tuple[DigestWorld, Notifier]:
    config = digest_config(
        {
            ANA: {"channel": "ses", "notify": "digest"},
            OPS: {"channel": "webhook", "url": chat.url, "format": "chat", "notify": "digest"},
            GIL: {"notify": "digest"},
        },
        {"daily_at": None},
        channels={"ses": {"region": REGION, "sender": SENDER}},
    )
    store = SqliteCheckpointStore(tmp_path / "inboxflow.db")
    world = DigestWorld(store, FakeClock(utc("2027-01-15 10:00")), config)
    workspace = GoogleWorkspace(MAILBOX, store, api_url=gmail.url, sleep=lambda s: None)
    gmail_notifier = GmailNotifier(workspace)

    def build(delivery: Delivery) -> Notifier:
        if delivery.channel == "ses":
            return SesNotifier(
                store, REGION, SENDER, world.clock, client=ses.client(), sleep=lambda s: None
            )
        if delivery.channel == "webhook":
            assert delivery.url
            return WebhookNotifier(store, delivery.url, "chat", world.clock, sleep=lambda s: None)
        if delivery.channel == "gmail":
            return gmail_notifier
        return OutboxNotifier(store, world.clock)

    return world, ChannelNotifier(config, build, store, gmail_notifier)


def _gmail_digests(gmail: GoogleApiDouble) -> list[email.message.EmailMessage]:
    return [
        email.message_from_bytes(m["raw"], policy=policy.default)  # type: ignore[misc]
        for m in gmail.messages(MAILBOX, label="SENT")
        if m["headers"].get("To") == GIL
    ]


def test_each_channel_gets_one_digest_with_one_sign_in_link(
    tmp_path: Path, ses: SesDouble, chat: WebhookReceiver, gmail: GoogleApiDouble
) -> None:
    world, channels = _world(tmp_path, ses, chat, gmail)
    for reviewer in (ANA, OPS, GIL):
        world.pend([reviewer], "support")
        world.pend([reviewer])
    digests = world.make(notifier=channels)
    assert sorted(o.action for o in digests.sweep()) == ["sent", "sent", "sent"]
    assert [o.action for o in digests.sweep()] == ["not_due"] * 3

    [by_ses] = ses.requests_to(ANA)
    ses_text = by_ses["Content"]["Simple"]["Body"]["Text"]["Data"]
    assert by_ses["Content"]["Simple"]["Subject"]["Data"] == "2 decisions wait for you"
    assert "pipeline: 1" in ses_text and "support: 1" in ses_text
    assert len(URL.findall(ses_text)) == 1 and SIGN_IN.search(ses_text)

    [post] = chat.posts
    card = json.dumps(post)
    assert len(SIGN_IN.findall(card)) == 1  # the button, never the text
    assert "2 decisions wait for you" in card

    [by_gmail] = _gmail_digests(gmail)
    text = by_gmail.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    assert by_gmail["Subject"] == "2 decisions wait for you"
    assert len(URL.findall(text)) == 1 and SIGN_IN.search(text)


def test_a_crash_after_the_send_is_found_on_every_channel(
    tmp_path: Path, ses: SesDouble, chat: WebhookReceiver, gmail: GoogleApiDouble
) -> None:
    world, channels = _world(tmp_path, ses, chat, gmail)

    def crash(point: str) -> None:
        if point == "after_send":
            raise SimulatedCrash(point)

    for reviewer in (ANA, OPS, GIL):
        world.pend([reviewer])
        with pytest.raises(SimulatedCrash):
            world.make(notifier=channels, fault=crash).send_due(reviewer)
    world.clock.advance(DIGEST_LEASE_S)
    outcomes = world.make(notifier=channels).sweep()
    assert [o.action for o in outcomes] == ["reconciled"] * 3
    assert len(ses.requests_to(ANA)) == 1
    assert len(chat.posts) == 1
    assert len(_gmail_digests(gmail)) == 1

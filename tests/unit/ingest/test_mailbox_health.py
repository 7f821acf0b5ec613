"""A mailbox's health through the real clients against the Gmail and OAuth doubles: a revoked
consent disconnects it once (no retry storm), a reconnect resumes it, and a lapsed watch or an
expired history id recovers with a catch-up listing from the last message seen."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.google_credentials import GMAIL_MODIFY_SCOPE, credentials_from_env
from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.mailbox_tokens import FileTokenStore
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.dev.doubles.oauth_api import OAuthDouble
from inboxflow.dev.mailbox_connect import connect_mailbox
from inboxflow.graphs import graph_registry
from inboxflow.ingest.claims import message_trace_id
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.ingest.notification import GmailNotification
from inboxflow.ingest.sync import IngestOptions, Ingestor
from inboxflow.ingest.watch import renew_watches
from inboxflow.ports.notifier import Notification, Notifier
from inboxflow.workspace import seed_workspace
from tests.harness.consent import ConsentBrowser
from tests.harness.runtimes import runtime_for
from tests.unit.ingest.test_ingest import MAILBOX, eml

TOPIC = "projects/inboxflow-local/topics/inboxflow-gmail"
DAY = 86400.0


class RecordingNotifier(Notifier):
    """The reviewers' notifier port, recording what it is asked to send."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    def send(self, note: Notification) -> dict[str, Any]:
        self.sent.append(note)
        return {"to": note.to, "id": str(len(self.sent))}

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        return None


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.clock = FakeClock()
        self.oauth = OAuthDouble()
        self.google = GoogleApiDouble(clock=self.clock, oauth=self.oauth).start()
        self.tokens = FileTokenStore(tmp_path / "mailbox-tokens")
        self.client_file = tmp_path / "client.json"
        self.client_file.write_text(json.dumps(self.oauth.client_secrets(base_url=self.google.url)))
        self.store = SqliteCheckpointStore(tmp_path / "ingest.db")
        seed_workspace(self.store, self.clock.now())
        self.notifier = RecordingNotifier()
        self.runtime = runtime_for(
            tmp_path,
            clock=self.clock,
            graphs=graph_registry(),
            store=self.store,
            bus=InProcessBus(clock=self.clock),
            workspace=StoreWorkspace(self.store, self.clock),
            notifier=self.notifier,
        )
        self.reader = GoogleApiGmailReader(
            api_url=self.google.url, credentials=credentials_from_env({}, tokens=self.tokens)
        )
        self.ingestor = Ingestor(
            self.runtime, self.reader, IngestOptions(backoff_base_s=0.01), sleep=lambda s: None
        )
        self.registry = MailboxRegistry(self.store)
        self.registry.add(MAILBOX, self.clock.now(), settings={"reviewers": ["ops@brightlane.io"]})
        self.connect()
        summary = renew_watches(self.store, self.reader, self.clock, topic=TOPIC)
        assert summary["renewed"], summary

    def connect(self) -> None:
        connected = connect_mailbox(
            MAILBOX,
            self.client_file,
            (GMAIL_MODIFY_SCOPE,),
            self.tokens,
            browser=ConsentBrowser(MAILBOX).register(),
            say=lambda line: None,
            api_url=self.google.url,
            timeout_s=20,
        )
        self.registry.record_connection(
            MAILBOX, {"type": "authorized_user", "scopes": list(connected.scopes)}, self.clock.now()
        )

    def notify(self) -> Any:
        return self.ingestor.ingest(GmailNotification(MAILBOX, self.google.history_id(MAILBOX)))


@pytest.fixture
def setup(tmp_path: Path) -> Any:
    running = Setup(tmp_path)
    yield running
    running.google.stop()


def test_a_revoked_consent_disconnects_the_mailbox_once_without_a_retry_storm(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    setup.oauth.expire_access_tokens()
    setup.oauth.revoke_account(MAILBOX)
    before = setup.oauth.refresh_attempts
    caplog.set_level(logging.INFO)
    reports = []
    for n in range(5):
        setup.google.deliver(MAILBOX, eml(n))
        reports.append(setup.notify())  # returns: the notification is acknowledged
    assert [r.outcome for r in reports] == ["disconnected"] * 5
    assert setup.oauth.refresh_attempts - before == 1
    mailbox = setup.registry.get(MAILBOX)
    assert mailbox is not None and mailbox.health == "disconnected"
    assert mailbox.sync_owner is None
    (notice,) = setup.notifier.sent
    assert notice.to == "ops@brightlane.io"
    assert f"inboxflow mailbox connect {MAILBOX}" in notice.text
    alerts = [r for r in caplog.records if getattr(r, "outcome", None) == "mailbox_disconnected"]
    assert len(alerts) == 1 and alerts[0].levelno == logging.ERROR
    # Reconnected: restarting the watch catches the mailbox up (its cursor is behind), and
    # the mail that arrived meanwhile is ingested, each message once.
    setup.connect()
    caught: list[Any] = []
    renew_watches(
        setup.store,
        setup.reader,
        setup.clock,
        topic=TOPIC,
        catch_up=lambda a, h: caught.append(setup.ingestor.ingest(GmailNotification(a, h))),
    )
    (report,) = caught
    assert report.outcome == "ingested" and len(report.started) == 5
    assert setup.notify().started == []


def test_an_expired_history_id_catches_up_from_the_last_message_seen(setup: Setup) -> None:
    first = setup.google.deliver(MAILBOX, eml(1))
    assert setup.notify().started == [message_trace_id(MAILBOX, first)]
    setup.clock.advance(DAY)
    missed = setup.google.deliver(MAILBOX, eml(2))  # its notification was lost
    setup.clock.advance(9 * DAY)
    latest = setup.google.deliver(MAILBOX, eml(3))
    setup.google.expire_history(MAILBOX, setup.google.history_id(MAILBOX))
    report = setup.notify()
    assert report.full_sync is not None and report.full_sync["query"].startswith("after:")
    assert sorted(report.started) == sorted(message_trace_id(MAILBOX, g) for g in (missed, latest))
    assert report.duplicates == 1  # the last message seen is listed again, not ingested again
    mailbox = setup.registry.get(MAILBOX)
    assert mailbox is not None and mailbox.last_full_sync is not None


def test_a_lapsed_watch_catches_up_when_it_is_renewed(setup: Setup) -> None:
    first = setup.google.deliver(MAILBOX, eml(1))
    setup.notify()
    setup.clock.advance(8 * DAY)  # the watch lapsed: Gmail published nothing since
    during = [setup.google.deliver(MAILBOX, eml(n)) for n in (2, 3)]
    caught: list[Any] = []

    def catch_up(address: str, history_id: int) -> None:
        caught.append(setup.ingestor.ingest(GmailNotification(address, history_id)))

    summary = renew_watches(setup.store, setup.reader, setup.clock, topic=TOPIC, catch_up=catch_up)
    assert summary["renewed"][0]["lapsed"] is True
    (report,) = caught
    assert sorted(report.started) == sorted(message_trace_id(MAILBOX, g) for g in during)
    assert message_trace_id(MAILBOX, first) not in report.started
    fresh = renew_watches(setup.store, setup.reader, setup.clock, topic=TOPIC, catch_up=catch_up)
    assert fresh["renewed"][0]["lapsed"] is False and len(caught) == 1


def test_a_process_holding_the_revoked_token_retries_with_the_reconnected_one(
    setup: Setup,
) -> None:
    """A node function that cached the old credentials: its call fails retryable once, then
    the next call reads the new token (no permanent failure of the step)."""
    from inboxflow.ports.gmail_reader import GmailUnavailable

    setup.reader.watch(MAILBOX, TOPIC, ["INBOX"])  # credentials cached in this process
    setup.oauth.revoke_account(MAILBOX)
    setup.connect()  # the owner reconnected (from another process)
    with pytest.raises(GmailUnavailable, match="a new token was stored since"):
        setup.reader.watch(MAILBOX, TOPIC, ["INBOX"])
    assert setup.reader.watch(MAILBOX, TOPIC, ["INBOX"]).history_id > 0

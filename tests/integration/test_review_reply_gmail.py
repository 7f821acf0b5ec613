"""A reviewer answers the review email in Gmail: the real client sends the notification and
reads the reply, against the Gmail double; the reply's In-Reply-To leads back to the approval,
or, when Gmail gave the review email a Message-ID of its own, the Gmail thread the reply is in."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.notifiers import GmailNotifier
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.ingest.notification import GmailNotification
from inboxflow.ingest.sync import IngestOptions, Ingestor
from inboxflow.ingest.watch import renew_watches
from tests.harness.runtimes import runtime_for
from tests.harness.thread_chat import MAILBOX, PASS, PLUGIN, eml

TOPIC = "projects/inboxflow-local/topics/inboxflow-gmail"


@dataclass
class GmailWorld:
    """thread_chat on a mailbox served by the Gmail double, through the real client."""

    double: GoogleApiDouble
    runtime: Any
    bus: InProcessBus
    notify: Callable[[], Any]


@contextmanager
def open_gmail_world(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, replace_message_ids: bool
) -> Iterator[GmailWorld]:
    """thread_chat behind the Gmail double; ``replace_message_ids`` as Gmail sometimes does."""
    monkeypatch.setenv("INBOXFLOW_GRAPHS", PLUGIN)
    clock = FakeClock()
    store = SqliteCheckpointStore(tmp_path / "gmail.db")
    with GoogleApiDouble(clock=clock) as double:
        double.gmail.replace_sent_message_ids = replace_message_ids
        workspace = GoogleWorkspace(MAILBOX, store, api_url=double.url, sleep=lambda s: None)
        bus = InProcessBus(clock=clock)
        runtime = runtime_for(
            tmp_path,
            clock=clock,
            store=store,
            bus=bus,
            workspace=workspace,
            notifier=GmailNotifier(workspace),
        )
        ingestor = Ingestor(
            runtime,
            GoogleApiGmailReader(api_url=double.url, environ=os.environ),
            IngestOptions(backoff_base_s=0.01),
            sleep=lambda s: None,
        )
        MailboxRegistry(store).add(MAILBOX, clock.now(), graph="thread_chat")
        renew_watches(store, ingestor.gmail, clock, topic=TOPIC)

        def notify() -> Any:
            return ingestor.ingest(GmailNotification(MAILBOX, double.history_id(MAILBOX)))

        yield GmailWorld(double, runtime, bus, notify)
    store.close()


@pytest.fixture
def gmail_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GmailWorld]:
    with open_gmail_world(tmp_path, monkeypatch, replace_message_ids=True) as world:
        yield world


def _review_email(world: GmailWorld) -> tuple[str, Any, dict[str, Any]]:
    """A trace paused for review; its approval and the review email sent to agent@."""
    world.double.deliver(MAILBOX, eml(1))
    trace_id = world.notify().started[0]
    world.bus.drain()
    (approval,) = [a for a in world.runtime.ports.approvals.pending() if a.trace_id == trace_id]
    (sent,) = [
        m for m in world.double.messages(MAILBOX, label="SENT") if m["to"] == "agent@agency.test"
    ]
    return trace_id, approval, sent


def _reply_in_thread(world: GmailWorld, sent: dict[str, Any], n: int, **fields: Any) -> str:
    """A reply quoting the Message-ID the reviewer saw (Gmail's): the double threads it."""
    gmail_id = sent["headers"]["Message-ID"]
    raw = eml(
        n,
        subject=f"Re: {sent['subject']}",
        headers=f"In-Reply-To: {gmail_id}\r\nReferences: {gmail_id}\r\n"
        + fields.pop("headers", ""),
        **fields,
    )
    return world.double.deliver(MAILBOX, raw)


def test_a_reply_to_a_review_email_whose_message_id_gmail_replaced_decides_by_its_thread(
    gmail_world: GmailWorld,
) -> None:
    trace_id, approval, sent = _review_email(gmail_world)
    assert "gmail-assigned" in sent["headers"]["Message-ID"]  # our id is not in the reply
    reply_id = _reply_in_thread(
        gmail_world, sent, 2, sender="Agent <agent@agency.test>", body="approve"
    )
    (reply,) = [m for m in gmail_world.double.messages(MAILBOX) if m["id"] == reply_id]
    assert reply["thread_id"] == sent["thread_id"]
    report = gmail_world.notify()
    assert report.review_replies == [approval.approval_id] and report.started == []
    decided = gmail_world.runtime.ports.approvals.get(approval.approval_id)
    assert (decided.decision, decided.decided_by) == ("approve", "agent@agency.test")
    gmail_world.bus.drain()
    checkpoint = gmail_world.runtime.store.get_trace(trace_id)
    assert checkpoint.pause["kind"] == "customer_reply"


@pytest.mark.parametrize(
    ("sender", "authentication", "headers", "outcome"),
    [
        ("Mallory <mallory@elsewhere.test>", PASS, "", "not_a_reviewer"),
        (
            "Agent <agent@agency.test>",
            "mx.google.com; dmarc=fail header.from=agency.test",
            "",
            "not_authenticated",
        ),
        ("Agent <agent@agency.test>", None, "", "not_authenticated"),
        # the sender's own pass, below the verdict of our receiving server, does not count
        (
            "Agent <agent@agency.test>",
            "mx.google.com; spf=softfail smtp.mailfrom=m@evil.example; dmarc=none "
            "header.from=agency.test",
            "Authentication-Results: mx.google.com; dmarc=pass header.from=agency.test\r\n",
            "not_authenticated",
        ),
    ],
)
def test_a_reply_in_the_review_thread_from_anyone_else_decides_nothing(
    gmail_world: GmailWorld, sender: str, authentication: str | None, headers: str, outcome: str
) -> None:
    trace_id, approval, sent = _review_email(gmail_world)
    reply_id = _reply_in_thread(
        gmail_world,
        sent,
        2,
        sender=sender,
        body="approve",
        headers=headers,
        authentication=authentication,
    )
    report = gmail_world.notify()
    assert report.review_replies == [approval.approval_id] and report.started == []
    claim = gmail_world.runtime.store.get(f"mail_claims/{MAILBOX}:{reply_id}")
    assert claim["state"] == "review_reply" and claim["review_outcome"] == outcome
    still = gmail_world.runtime.ports.approvals.get(approval.approval_id)
    assert still.status == "pending"
    assert gmail_world.runtime.store.get_trace(trace_id).status == "waiting"


def test_a_reply_to_the_review_email_sent_through_gmail_decides_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_gmail_world(tmp_path, monkeypatch, replace_message_ids=False) as world:
        double, bus = world.double, world.bus
        trace_id, approval, sent = _review_email(world)
        approvals = world.runtime.ports.approvals
        message_id = sent["headers"]["Message-ID"]
        assert message_id.startswith("<inboxflow.")

        body = f"Approve.\r\n\r\nOn Thu, {MAILBOX} wrote:\r\n> reject: example"
        references = f"In-Reply-To: {message_id}\r\nReferences: {message_id}\r\n"
        reply = eml(
            2,
            sender="Agent <agent@agency.test>",
            subject=f"Re: {sent['subject']}",
            body=body,
            headers=references,
        )
        double.deliver(MAILBOX, reply)
        report = world.notify()
        assert report.review_replies == [approval.approval_id]  # type: ignore[attr-defined]
        assert report.started == []  # type: ignore[attr-defined]
        decided = approvals.get(approval.approval_id)
        assert decided is not None and decided.decision == "approve"
        assert decided.decided_by == "agent@agency.test"

        double.deliver(
            MAILBOX, eml(3, sender="agent@agency.test", body="reject: too late", headers=references)
        )
        world.notify()
        still = approvals.get(approval.approval_id)
        assert still is not None and still.decision == "approve"  # the first decision stands
        bus.drain()
        checkpoint = world.runtime.store.get_trace(trace_id)
        assert checkpoint is not None and checkpoint.pause is not None
        assert checkpoint.pause["kind"] == "customer_reply"

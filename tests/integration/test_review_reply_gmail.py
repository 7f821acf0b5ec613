"""A reviewer answers the review email in Gmail: the real client sends the notification and
reads the reply, against the Gmail double; the reply's In-Reply-To leads back to the approval."""

from __future__ import annotations

from pathlib import Path

import pytest

from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.notifiers import GmailNotifier
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.ingest.ingest import IngestOptions, Ingestor
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.ingest.notification import GmailNotification
from inboxflow.ingest.watch import renew_watches
from tests.runtimes import runtime_for
from tests.thread_chat_harness import MAILBOX, PLUGIN, eml

TOPIC = "projects/inboxflow-local/topics/inboxflow-gmail"


def test_a_reply_to_the_review_email_sent_through_gmail_decides_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INBOXFLOW_GRAPHS", PLUGIN)
    clock = FakeClock()
    store = SqliteCheckpointStore(tmp_path / "gmail.db")
    with GoogleApiDouble(clock=clock) as double:
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
            GoogleApiGmailReader(api_url=double.url),
            IngestOptions(backoff_base_s=0.01),
            sleep=lambda s: None,
        )
        MailboxRegistry(store).add(MAILBOX, clock.now(), graph="thread_chat")
        renew_watches(store, ingestor.gmail, clock, topic=TOPIC)

        def notify() -> object:
            return ingestor.ingest(GmailNotification(MAILBOX, double.history_id(MAILBOX)))

        double.deliver(MAILBOX, eml(1))
        trace_id = notify().started[0]  # type: ignore[attr-defined]
        bus.drain()
        approvals = runtime.services.approvals
        (approval,) = [a for a in approvals.pending() if a.trace_id == trace_id]
        (sent,) = [
            m for m in double.messages(MAILBOX, label="SENT") if m["to"] == "agent@agency.test"
        ]
        message_id = sent["headers"]["Message-ID"]
        assert message_id.startswith("<inboxflow.")

        body = f"Approve, thanks\r\n\r\nOn Thu, {MAILBOX} wrote:\r\n> reject: example"
        references = f"In-Reply-To: {message_id}\r\nReferences: {message_id}\r\n"
        reply = eml(
            2,
            sender="Agent <agent@agency.test>",
            subject=f"Re: {sent['subject']}",
            body=body,
            headers=references,
        )
        double.deliver(MAILBOX, reply)
        report = notify()
        assert report.review_replies == [approval.approval_id]  # type: ignore[attr-defined]
        assert report.started == []  # type: ignore[attr-defined]
        decided = approvals.get(approval.approval_id)
        assert decided is not None and decided.decision == "approve"
        assert decided.decided_by == "agent@agency.test"

        double.deliver(
            MAILBOX, eml(3, sender="agent@agency.test", body="reject: too late", headers=references)
        )
        notify()
        still = approvals.get(approval.approval_id)
        assert still is not None and still.decision == "approve"  # the first decision stands
        bus.drain()
        checkpoint = store.get_trace(trace_id)
        assert checkpoint is not None and checkpoint.pause is not None
        assert checkpoint.pause["kind"] == "customer_reply"

"""Ingest of a mailbox routed to the ``thread_chat`` plug-in graph, on SQLite or the Firestore
emulator: customer replies in the thread, review emails and replies to them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from email.utils import parseaddr
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.approvals.service import ApprovalService
from inboxflow.clock import FakeClock
from inboxflow.dev.adapters.memory_gmail_reader import InMemoryGmailReader
from inboxflow.engine.waits import Approval
from inboxflow.ingest.claims import claim_path
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.ingest.notification import GmailNotification
from inboxflow.ingest.report import IngestReport
from inboxflow.ingest.sync import IngestOptions, Ingestor
from inboxflow.ingest.watch import renew_watches
from inboxflow.mail_stamps import stamped_message_id
from inboxflow.ports.checkpoint import Checkpoint, CheckpointStore
from tests.harness.mail_auth import auth_line, gmail_pass
from tests.harness.runtimes import runtime_for

PLUGIN = "tests.plugin.thread_chat:THREAD_CHAT"
MAILBOX = "desk@agency.test"
CUSTOMER = "Dana Reyes <dana@example.com>"
PASS = "pass"


def eml(
    n: int,
    sender: str = CUSTOMER,
    subject: str = "Car insurance quote",
    body: str = "Hello, I would like a quote for my car.",
    headers: str = "",
    authentication: str | None = PASS,
    content_type: str = "text/plain",
    message_id: str | None = None,
) -> bytes:
    """A message to the mailbox (``headers``: extra header lines, CRLF-terminated).

    ``authentication``: the Authentication-Results Gmail puts on top; ``PASS`` (default)
    vouches for the sender as on genuine mail, None leaves it out, anything else is the
    header's value.
    """
    verdict = ""
    if authentication is not None:
        value = gmail_pass(parseaddr(sender)[1]) if authentication == PASS else authentication
        verdict = auth_line(value)
    return (
        f"{verdict}From: {sender}\r\nTo: {MAILBOX}\r\nSubject: {subject}\r\n"
        f"Message-ID: {message_id or f'<m{n}@example.com>'}\r\nDate: Thu, 14 Jan 2027 09:12:31 +0000\r\n{headers}"
        f"Content-Type: {content_type}; charset=utf-8\r\n\r\n"
        f"{body}\r\n"
    ).encode()


class ChatWorld:
    """One mailbox routed to ``thread_chat``, the in-memory Gmail fake, and a fake clock."""

    def __init__(self, tmp_path: Path, store: CheckpointStore | None = None) -> None:
        self.clock = FakeClock()
        self.bus = InProcessBus(clock=self.clock)
        self.store = store or SqliteCheckpointStore(tmp_path / "chat.db")
        self.runtime = runtime_for(
            tmp_path,
            clock=self.clock,
            store=self.store,
            bus=self.bus,
            workspace=StoreWorkspace(self.store, self.clock),
        )
        self.gmail = InMemoryGmailReader()
        self.ingestor = Ingestor(self.runtime, self.gmail, IngestOptions(), sleep=lambda s: None)
        MailboxRegistry(self.store).add(MAILBOX, self.clock.now(), graph="thread_chat")
        renew_watches(self.store, self.gmail, self.clock, topic="projects/p/topics/t")

    @property
    def approvals(self) -> ApprovalService:
        service = self.runtime.ports.approvals
        assert service is not None
        return service  # type: ignore[no-any-return]

    def deliver(self, raw: bytes, thread_id: str | None = None) -> tuple[str, int]:
        """A message arrives (no notification yet): its Gmail id and the history id."""
        gmail_id = self.gmail.deliver(MAILBOX, raw, notify=False, thread_id=thread_id)
        return gmail_id, self.gmail.history_id(MAILBOX)

    def notify(self, history_id: int | None = None) -> IngestReport:
        """The Gmail notification for ``history_id`` (default: the latest) is handled."""
        latest = history_id if history_id is not None else self.gmail.history_id(MAILBOX)
        return self.ingestor.ingest(GmailNotification(MAILBOX, latest))

    def start(self, n: int = 1, subject: str = "Car insurance quote") -> tuple[str, str]:
        """A first email starts a trace; returns ``(trace_id, its Gmail thread id)``."""
        thread, _ = self.deliver(eml(n, subject=subject))
        report = self.notify()
        assert len(report.started) == 1, report.summary()
        return report.started[0], thread

    def trace(self, trace_id: str) -> Checkpoint:
        checkpoint = self.store.get_trace(trace_id)
        assert checkpoint is not None
        return checkpoint

    def claim(self, gmail_id: str) -> dict[str, Any]:
        doc = self.store.get(claim_path(MAILBOX, gmail_id))
        assert doc is not None
        return doc

    def traces(self) -> list[str]:
        return [trace_id for trace_id, _ in self.store.list("traces")]

    def pending_approval(self, trace_id: str) -> Approval:
        found = [a for a in self.approvals.pending() if a.trace_id == trace_id]
        assert len(found) == 1, found
        return found[0]

    def waiting_for_customer(self) -> tuple[str, str]:
        """A trace whose plan a reviewer approved, now paused for the customer's reply:
        ``(trace_id, thread_id)``."""
        trace_id, thread = self.start()
        self.bus.drain()
        approval = self.pending_approval(trace_id)
        self.approvals.decisions.decide_as(approval.approval_id, "agent@agency.test", "approve")
        self.bus.drain()
        assert self.trace(trace_id).pause["kind"] == "customer_reply"  # type: ignore[index]
        return trace_id, thread

    def review_message_id(self, approval: Approval, reviewer: str) -> str:
        """The Message-ID of the review email sent to ``reviewer`` (its random stamp, as the reviewer received it)."""
        stamps = [
            doc["stamp"]
            for _, doc in self.store.list("outbox")
            if doc["to"] == reviewer and f":{approval.step}:notify-" in doc["trace_key"]
        ]
        assert len(stamps) == 1, stamps
        return stamped_message_id(stamps[0], "agency.test")


STORES = ["sqlite", pytest.param("firestore", marks=pytest.mark.emulator)]
"""Parameters of a ``chat`` fixture: ``@pytest.fixture(params=STORES)``."""


def chat_world(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ChatWorld]:
    """The body of a ``chat`` fixture: the world on ``request.param``'s store (SQLite, or an
    empty Firestore emulator), the plug-in registered through ``INBOXFLOW_GRAPHS``."""
    monkeypatch.setenv("INBOXFLOW_GRAPHS", PLUGIN)
    if request.param == "sqlite":
        store: CheckpointStore = SqliteCheckpointStore(tmp_path / "chat.db")
    else:
        request.getfixturevalue("firestore_env")
        from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

        store = FirestoreCheckpointStore.from_env(os.environ)
    yield ChatWorld(tmp_path, store)
    store.close()

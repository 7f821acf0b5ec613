"""Helpers for the planner graph's tests: an embedded runtime, its samples, the agency deciding,
the customer replying (through ``runtime.resume``, the reply queue, or Gmail ingestion)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.approvals.service import ApprovalService
from inboxflow.clock import FakeClock
from inboxflow.dev.adapters.memory_gmail_reader import InMemoryGmailReader
from inboxflow.engine.runtime import Runtime
from inboxflow.engine.waits import Approval
from inboxflow.graphs.planner.graph import SAMPLES as SAMPLE_DIR
from inboxflow.graphs.planner.quoting import Quote
from inboxflow.graphs.planner.settings import PlannerSettings
from inboxflow.ingest.claims import claim_path
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.ingest.notification import GmailNotification
from inboxflow.ingest.sync import IngestOptions, Ingestor
from inboxflow.mail import Email, load_email_file
from inboxflow.mail_stamps import stamped_message_id
from inboxflow.ports.checkpoint import CheckpointStore
from inboxflow.routing import RouteDecision
from inboxflow.schema import TRACE_REPLIES
from inboxflow.start import start_email_trace
from tests.harness.mail_auth import gmail_pass
from tests.harness.runtimes import embedded_settings, runtime_for

SAMPLES = sorted(p for p in SAMPLE_DIR.iterdir() if p.suffix == ".json")
MAILBOX = "quotes@brightlane.io"
PASS = "pass"
"""``authentication`` of :func:`eml`: Gmail's verdict vouching for the sender."""
AGENCY = "agent@brightlane.io"
VALID_VIN = "2HGFC2F56KH512345"
"""A 2019 Honda Civic's VIN with a correct check digit."""
BAD_VIN = "2HGFC2F50KH512345"
"""The same VIN with a wrong check digit (position 9)."""
DAY = 86400.0


def sample(prefix: str) -> Email:
    """The planner sample whose file name starts with ``prefix``."""
    return load_email_file(next(p for p in SAMPLES if p.name.startswith(prefix)))


def build(
    tmp_path: Path,
    bus: InProcessBus | None = None,
    store: CheckpointStore | None = None,
    settings: PlannerSettings | None = None,
    environ: dict[str, str] | None = None,
    **kw: Any,
) -> Runtime:
    """An embedded runtime (store workspace: sent mail lands in the store) with the agency's
    reviewer configured; the quoting port is the default (``EmbeddedQuoting``) unless
    ``environ`` names a quoting API (``INBOXFLOW_QUOTING_URL``)."""
    if bus is None:  # not ``or``: an empty bus is falsy
        bus = InProcessBus(clock=FakeClock())
    if store is None:
        store = SqliteCheckpointStore(tmp_path / "planner.db")
    if environ is not None:
        kw["settings"] = embedded_settings(tmp_path, environ={**os.environ, **environ})
    runtime = runtime_for(
        tmp_path,
        clock=bus.clock,
        store=store,
        bus=bus,
        workspace=StoreWorkspace(store, bus.clock),
        **kw,
    )
    runtime.ports.graph_settings.use("planner", settings or PlannerSettings(reviewers=[AGENCY]))
    return runtime


def start(runtime: Runtime, email: Email) -> str:
    """Start the planner on ``email`` and run until it pauses or ends."""
    decision = RouteDecision("planner", None, "test", mailbox=email.mailbox)
    trace_id = start_email_trace(runtime, email, decision).trace_id
    runtime.bus.drain()  # type: ignore[attr-defined]
    return trace_id


def checkpoint(runtime: Runtime, trace_id: str) -> Any:
    """The trace's checkpoint."""
    found = runtime.store.get_trace(trace_id)
    assert found is not None
    return found


def state(runtime: Runtime, trace_id: str) -> dict[str, Any]:
    """The trace's state."""
    return dict(checkpoint(runtime, trace_id).state)


def pending(runtime: Runtime, trace_id: str) -> Approval:
    """The trace's one pending agency review."""
    (approval,) = [
        a
        for a in runtime.ports.approvals.pending()
        if a.trace_id == trace_id and a.kind == "agency_review"
    ]
    return approval


def decide(
    runtime: Runtime,
    trace_id: str,
    decision: str,
    edit: dict[str, str] | None = None,
    comment: str | None = None,
) -> Approval:
    """The agency decides the trace's pending review (approval service); run on."""
    approval = pending(runtime, trace_id)
    runtime.ports.approvals.decisions.decide_as(
        approval.approval_id, AGENCY, decision, edit, comment
    )
    runtime.bus.drain()  # type: ignore[attr-defined]
    return approval


def approve_all(runtime: Runtime, trace_id: str, limit: int = 10) -> list[str]:
    """Approve every agency review of the trace until it stops on something else; the tools."""
    tools = []
    for _ in range(limit):
        found = checkpoint(runtime, trace_id)
        if found.status != "waiting" or (found.pause or {}).get("kind") != "agency_review":
            return tools
        tools.append(pending(runtime, trace_id).payload["tool"])
        decide(runtime, trace_id, "approve")
    raise AssertionError(f"still reviewing after {limit} approvals: {tools}")


def reply_email(
    first: Email, body: str, gmail_id: str, at: datetime | None = None, **fields: Any
) -> Email:
    """The customer's reply in ``first``'s thread (quoting what we sent, as mail clients do)."""
    values: dict[str, Any] = {
        "message_id": f"{gmail_id}@example.com",
        "thread_id": first.thread_id,
        "mailbox": first.mailbox,
        "sender": first.sender.model_dump(),
        "subject": f"Re: {first.subject}",
        "body_text": f"{body}\n\nOn Mon, 18 Jan 2027, {first.mailbox} wrote:\n> Thank you for "
        "asking us for a car insurance quote.\n> VIN: 1HGCM82633A004352\n",
        "received_at": at or datetime(2027, 1, 19, 10, 0, tzinfo=UTC),
        "gmail_id": gmail_id,
        "in_reply_to": first.message_id,
    }
    return Email.model_validate({**values, **fields})


def resume_with_reply(runtime: Runtime, trace_id: str, reply: Email) -> None:
    """What ingest does for a reply to a trace waiting on ``customer_reply``; then run on."""
    runtime.resume(
        trace_id,
        {
            "decision": "reply",
            "payload": {"email": reply.model_dump(mode="json")},
            "reviewer": reply.sender.address,
        },
    )
    runtime.bus.drain()  # type: ignore[attr-defined]


def queue_reply(runtime: Runtime, trace_id: str, reply: Email) -> None:
    """What ingest does for a reply that arrives while the trace runs: queue it for the trace."""
    runtime.store.set(
        f"{TRACE_REPLIES.name}/{trace_id}:{reply.gmail_id}",
        {
            "trace_id": trace_id,
            "gmail_id": reply.gmail_id,
            "email": reply.model_dump(mode="json"),
            "received_at": reply.received_at.timestamp(),
        },
    )


def sent(runtime: Runtime, trace_id: str) -> list[dict[str, Any]]:
    """Emails the trace sent to the customer (stamped with its journal keys), oldest first."""
    return [
        doc
        for doc in runtime.ports.workspace.sent()
        if str(doc.get("trace_key", "")).startswith(f"{trace_id}:")
    ]


def quote(runtime: Runtime, quote_id: str) -> Quote:
    """The quote as the quoting service holds it (the default, embedded one)."""
    from inboxflow.adapters.embedded_quoting import EmbeddedQuoting

    return EmbeddedQuoting(runtime.store, runtime.clock).get(quote_id)


def fire_due_deadlines(runtime: Runtime) -> int:
    """Run the deadline tasks due by the runtime's clock, as the approval function's /timeout."""
    service = runtime.ports.approvals

    def timeout(task: Any) -> None:
        service.deadlines.on_timeout(
            str(task.payload["approval_id"]), int(task.payload.get("hop", 0))
        )

    fired: int = service.tasks.run_due(runtime.clock.now(), timeout)
    runtime.bus.drain()  # type: ignore[attr-defined]
    return fired


# --- Gmail ingestion (the real path of a reply) ----------------------------------------------


def eml(email: Email, authentication: str | None = PASS) -> bytes:
    """``email`` as the raw message Gmail would hold.

    ``authentication``: the Authentication-Results Gmail added on top; ``PASS`` (the default)
    vouches for the sender as Gmail does for genuine mail; None: no such header.
    """
    headers = []
    if authentication is not None:
        verdict = gmail_pass(email.sender.address) if authentication == PASS else authentication
        headers.append(f"Authentication-Results: {verdict}")
    headers += [
        f"From: {email.sender.formatted()}",
        f"To: Brightlane Insurance <{MAILBOX}>",
        f"Subject: {email.subject}",
        f"Message-ID: <{email.message_id}>",
        f"Date: {format_datetime(email.received_at)}",
    ]
    if email.in_reply_to:
        headers += [f"In-Reply-To: <{email.in_reply_to}>", f"References: <{email.in_reply_to}>"]
    headers.append("Content-Type: text/plain; charset=utf-8")
    body = email.body_text.replace("\n", "\r\n")
    return ("\r\n".join(headers) + "\r\n\r\n" + body).encode()


class Mailbox:
    """The agency's mailbox on the in-memory Gmail double, ingested by the real ``Ingestor``."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.gmail = InMemoryGmailReader()
        self.ingestor = Ingestor(runtime, self.gmail, IngestOptions(), sleep=lambda s: None)
        MailboxRegistry(runtime.store).add(MAILBOX, runtime.clock.now(), graph="planner")
        self.gmail.deliver(MAILBOX, b"From: a@b.example\r\n\r\nx", labels=("SENT",), notify=False)
        self.ingest()

    def receive(
        self, email: Email, thread_id: str | None = None, authentication: str | None = PASS
    ) -> tuple[str, Any]:
        """Deliver ``email`` to the mailbox and ingest it; its Gmail id and the report."""
        raw = eml(email, authentication)
        gmail_id = self.gmail.deliver(MAILBOX, raw, thread_id=thread_id, notify=False)
        return gmail_id, self.ingest()

    def review_message_id(self, approval: Approval, reviewer: str = AGENCY) -> str:
        """The Message-ID of the review email ``reviewer`` received for ``approval``."""
        stamps = [
            doc["stamp"]
            for _, doc in self.runtime.store.list("outbox")
            if doc["to"] == reviewer and f":{approval.step}:notify-" in doc["trace_key"]
        ]
        assert len(stamps) == 1, stamps
        return stamped_message_id(stamps[0], "brightlane.io").strip("<>")

    def ingest(self) -> Any:
        report = self.ingestor.ingest(GmailNotification(MAILBOX, self.gmail.history_id(MAILBOX)))
        self.runtime.bus.drain()  # type: ignore[attr-defined]
        return report


class CustomerWait:
    """A planner trace waiting for the customer's answer, and its mailbox."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.mailbox = Mailbox(runtime)
        self.email = sample("41")
        self.first_id, report = self.mailbox.receive(self.email)
        (self.trace_id,) = report.started
        decide(runtime, self.trace_id, "approve")
        self.checkpoint = checkpoint(runtime, self.trace_id)
        assert self.checkpoint.pause["kind"] == "customer_reply"
        self.wait = str(self.checkpoint.pause["approval_id"])
        self.approvals: ApprovalService = runtime.ports.approvals

    def deliver(self, body: str, n: int) -> str:
        """The customer's reply lands in the thread (no notification yet); its Gmail id."""
        reply = reply_email(self.email, body, "ignored", message_id=f"reply-{n}@example.com")
        return self.mailbox.gmail.deliver(
            MAILBOX, eml(reply), thread_id=self.first_id, notify=False
        )

    def notify(self) -> Any:
        """Ingest the mailbox's notification, leaving what it publishes on the bus."""
        gmail = self.mailbox.gmail
        return self.mailbox.ingestor.ingest(GmailNotification(MAILBOX, gmail.history_id(MAILBOX)))

    def claim(self, gmail_id: str) -> dict[str, Any]:
        found = self.runtime.store.get(claim_path(MAILBOX, gmail_id))
        assert found is not None
        return found

    def approval(self) -> dict[str, Any]:
        found = self.runtime.store.get(f"approvals/{self.wait}")
        assert found is not None
        return found

    def runs(self, node: str) -> int:
        return [e.step_name for e in self.runtime.store.step_logs(self.trace_id)].count(node)

    def reminders(self) -> list[dict[str, Any]]:
        return [
            d for d in sent(self.runtime, self.trace_id) if "customer_reminder" in d["trace_key"]
        ]

    def ingest_failures(self) -> list[dict[str, Any]]:
        return [d for _, d in self.runtime.store.list("failures") if d["function"] == "ingest"]

"""Emails from files into the runtime the way Gmail ingestion takes them (``inboxflow run``, ``eval``).

Each email is received by the ``Ingestor`` as if Gmail had listed it in its
mailbox (``Ingestor.receive``), its Gmail thread being the one its headers name
(``References``/``In-Reply-To``, see ``mail.headers.derive_thread_id``). So a
reply resumes the trace of its thread waiting for that customer, continues a
support ticket, is queued on a busy planner trace, or answers a review email,
exactly as through Gmail, by ingest's own code. Two differences, both so that
a file always shows up somewhere: mail that loop protection forbids to answer
gets a trace created ``done`` with the reason (``start_email_trace``), where
Gmail ingestion only records it; and an email without a usable mailbox address
starts a trace without thread handling.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..config import InboxflowConfig
from ..engine.runtime import Runtime
from ..ingest.claims import message_trace_id
from ..ingest.mailboxes import DEFAULT_GRAPH, Mailbox
from ..ingest.sync import Ingestor
from ..mail import Email
from ..mail.loop_guard import auto_reply_block
from ..routing import RouteDecision, route
from ..start import start_email_trace
from .adapters.memory_gmail_reader import InMemoryGmailReader

Received = Literal[
    "started", "resumed", "queued", "review_reply", "blocked", "refused", "duplicate", "unreadable"
]
Decide = Callable[[Email], RouteDecision]


@dataclass(frozen=True)
class Delivered:
    """What became of one email.

    Attributes:
        action: ``started`` a trace, ``resumed`` the one waiting for this reply,
            ``queued`` it on its busy trace, answered a review email
            (``review_reply``), ``blocked`` by loop protection (a trace created
            ``done``), ``refused`` (its wait had ended), ``duplicate``, or
            ``unreadable`` (no trace could start: ``reason``).
        trace_id: the trace it started, resumed or was queued on (None if none).
        reason: why, for ``refused``, ``unreadable`` and ``blocked``.
    """

    action: Received
    trace_id: str | None = None
    reason: str | None = None


class FileInbox:
    """Delivers parsed emails to a runtime through ``Ingestor.receive``.

    Args:
        runtime: the runtime (its store keeps claims, threads and queued replies).
        config: the routing rules.
        decide: the route of an email that starts a trace, in place of the rules
            (``inboxflow run --graph NAME``); None: the rules.
    """

    def __init__(
        self, runtime: Runtime, config: InboxflowConfig, decide: Decide | None = None
    ) -> None:
        self.runtime = runtime
        self.config = config
        self.decide = decide
        router = None if decide is None else (lambda email, mailbox: decide(email))
        self.ingestor = Ingestor(runtime, InMemoryGmailReader(), config=config, router=router)

    def route(self, email: Email) -> RouteDecision:
        """Where ``email`` goes if it starts a trace."""
        return self.decide(email) if self.decide is not None else route(email, self.config)

    def deliver(self, email: Email, gmail_id: str | None = None) -> Delivered:
        """Hand ``email`` to ingest as message ``gmail_id`` (default: a new id) of its mailbox.

        Raises:
            PermanentError: loop-protected mail whose trace cannot be created (unknown graph).
        """
        blocked = auto_reply_block(email)
        if blocked:
            trace_id = message_trace_id(email.mailbox, gmail_id) if gmail_id else None
            started = start_email_trace(self.runtime, email, self.route(email), trace_id)
            return Delivered("blocked", started.trace_id, blocked)
        try:
            mailbox = Mailbox(address=email.mailbox, graph=DEFAULT_GRAPH)
        except ValueError:
            started = start_email_trace(self.runtime, email, self.route(email))
            return Delivered("started", started.trace_id)
        gmail_id = gmail_id or f"file-{uuid.uuid4().hex[:16]}"
        report = self.ingestor.receive(mailbox, email, gmail_id)
        if report.duplicates:
            return Delivered("duplicate")
        claim = self.ingestor.claims.get(mailbox.address, gmail_id)
        if claim is None:
            return Delivered("unreadable")
        exists = self.runtime.checkpoints.get_trace(claim.trace_id) is not None
        action: Received = claim.state if claim.state in _RECEIVED else "unreadable"  # type: ignore[assignment]
        return Delivered(action, claim.trace_id if exists else None, claim.reason)


_RECEIVED = frozenset({"started", "resumed", "queued", "review_reply", "refused"})

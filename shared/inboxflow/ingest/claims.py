"""Message claims: ``mail_claims/{mailbox}:{gmail_id}``, one per Gmail message ever seen.

The claim is a create-only write, so of all the notifications, redeliveries
and concurrent runs that list a message, exactly one creates its claim; the
others see ``DocumentExists`` and skip it. The claim records what was decided
for the message (start trace X, resume trace Y at step k, blocked because R)
and whether that was carried out: a claim still ``claimed`` (its owner crashed
between the claim and the start) is finished by the next run that meets it,
never left behind. Every action is idempotent (a trace id derived from the
message, a resume of one step), so finishing twice has one outcome.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from ..ports.checkpoint import CheckpointStore, Transaction

COLLECTION = "mail_claims"

ClaimState = Literal[
    "claimed",  # created; the decision is not carried out yet
    "started",  # a new trace was started
    "resumed",  # a waiting trace was resumed with this message
    "blocked",  # loop protection: recorded, no trace
    "own",  # our own message (X-Inboxflow-Trace): skipped
    "skipped",  # not an inbound INBOX message (SENT, DRAFT, not INBOX)
    "gone",  # deleted before we could fetch it
    "unreadable",  # not an email we can parse: recorded in failures
]
FINISHED: frozenset[str] = frozenset(
    {"started", "resumed", "blocked", "own", "skipped", "gone", "unreadable"}
)


def claim_id(mailbox: str, gmail_id: str) -> str:
    """Document id of a message's claim."""
    return f"{mailbox}:{gmail_id}"


def claim_path(mailbox: str, gmail_id: str) -> str:
    """Document path of a message's claim."""
    return f"{COLLECTION}/{claim_id(mailbox, gmail_id)}"


def message_trace_id(mailbox: str, gmail_id: str) -> str:
    """The trace a message starts: derived from mailbox and Gmail id, so a retry finds it."""
    return hashlib.sha256(f"gmail:{mailbox}:{gmail_id}".encode()).hexdigest()[:16]


class Claims:
    """Create, decide and finish message claims through the checkpoint store port."""

    def __init__(self, store: CheckpointStore, retention_s: float = 30 * 86400) -> None:
        self.store = store
        self.retention_s = retention_s

    def claim(
        self, mailbox: str, gmail_id: str, thread_id: str, now: float, via: str
    ) -> tuple[bool, dict[str, Any]]:
        """Claim a message.

        Args:
            mailbox: the mailbox address.
            gmail_id: Gmail's message id.
            thread_id: Gmail's thread id (may be empty when not known yet).
            now: claim time.
            via: ``history`` or ``full_sync``.

        Returns:
            ``(created, claim)``: True and the new claim, or False and the existing one.
        """
        doc: dict[str, Any] = {
            "mailbox": mailbox,
            "gmail_id": gmail_id,
            "thread_id": thread_id,
            "trace_id": message_trace_id(mailbox, gmail_id),
            "state": "claimed",
            "via": via,
            "claimed_at": now,
            "updated_at": now,
            "expire_at": now + self.retention_s,
        }
        path = claim_path(mailbox, gmail_id)
        if self.store.create(path, doc):
            return True, doc
        existing = self.store.get(path)
        return False, existing if existing is not None else doc

    def decide(
        self, mailbox: str, gmail_id: str, decision: dict[str, Any], now: float
    ) -> dict[str, Any]:
        """Record how the message will be handled, unless a decision is already recorded.

        Returns:
            The claim with the decision that stands (the first one recorded wins).
        """
        path = claim_path(mailbox, gmail_id)

        def record(tx: Transaction) -> dict[str, Any]:
            doc = tx.get(path) or {}
            if doc.get("action"):
                return doc
            doc.update(decision, updated_at=now)
            tx.set(path, doc)
            return doc

        return self.store.run_transaction(record)

    def finish(
        self, mailbox: str, gmail_id: str, state: ClaimState, now: float, **fields: Any
    ) -> None:
        """Mark a claim carried out (``state`` one of ``FINISHED``)."""
        path = claim_path(mailbox, gmail_id)

        def mark(tx: Transaction) -> None:
            doc = tx.get(path) or {}
            doc.update(fields, state=state, updated_at=now)
            tx.set(path, doc)

        self.store.run_transaction(mark)

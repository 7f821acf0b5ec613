"""Message claims: ``mail_claims/{mailbox}:{gmail_id}``, one per Gmail message ever seen.

The claim is a create-only write, so of all the notifications, redeliveries
and concurrent runs that list a message, exactly one creates its claim; the
others see ``DocumentExists`` and skip it. The claim records what was decided
for the message (start trace X, resume trace Y at step k, blocked because R)
and whether that was carried out. A claim is held under a short lease
(``CLAIM_LEASE_S``) by the run that created it, renewed by the run's heartbeat
(``heartbeat.py``) while it is alive: another run meeting a ``claimed`` claim
under a live lease leaves it to its owner (and has its notification redelivered rather than
move the cursor past it); a claim whose lease ran out (its owner died between
the claim and the start) or was released (its owner failed) is taken over and
finished, never left behind. Every action is idempotent (a trace id derived
from the message, a resume of one step), so finishing twice has one outcome.
A resume is noted on the claim (``resume_sent``) before it is published: a
run taking the claim over after its owner died then knows that the wait it
finds over may have been ended by this very message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..ports.documents import DocumentStore, Transaction
from ..schema import MAIL_CLAIMS

CLAIM_LEASE_S = 15.0
"""How long a claim outlives the last renewal of its run. Pub/Sub gives a notification
5 delivery attempts over about 30 s of backoff: a killed run's claims must lapse well
within that, so a redelivery takes them over instead of the notification being
dead-lettered for want of time. A live run renews every ``CLAIM_LEASE_S / 3``."""

ClaimState = Literal[
    "claimed",  # created; the decision is not carried out yet
    "started",  # a new trace was started
    "resumed",  # a waiting trace was resumed with this message
    "refused",  # a reply for a wait that had ended: recorded in failures, nothing resumed
    "queued",  # a reply queued on its busy trace (reply_queue.py)
    "review_reply",  # a reply to a review email: decided, or refused with the reason
    "blocked",  # loop protection: recorded, no trace
    "own",  # our own message (X-Inboxflow-Trace): skipped
    "skipped",  # not an inbound INBOX message (SENT, DRAFT, not INBOX)
    "gone",  # deleted before we could fetch it
    "unreadable",  # not an email we can parse: recorded in failures
]
FINISHED: frozenset[str] = frozenset(
    {
        "started",
        "resumed",
        "refused",
        "queued",
        "review_reply",
        "blocked",
        "own",
        "skipped",
        "gone",
        "unreadable",
    }
)


def claim_id(mailbox: str, gmail_id: str) -> str:
    """Document id of a message's claim."""
    return f"{mailbox}:{gmail_id}"


def claim_path(mailbox: str, gmail_id: str) -> str:
    """Document path of a message's claim."""
    return MAIL_CLAIMS.path(claim_id(mailbox, gmail_id))


def message_trace_id(mailbox: str, gmail_id: str) -> str:
    """The trace a message starts: derived from mailbox and Gmail id, so a retry finds it."""
    return hashlib.sha256(f"gmail:{mailbox}:{gmail_id}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Claim:
    """A message's claim as read: what ingest decided for it and how that ended.

    Attributes:
        mailbox: the mailbox address.
        gmail_id: Gmail's message id.
        state: ``claimed`` until carried out, then one of ``FINISHED``.
        trace_id: the trace it started, resumed, was queued on or was refused for
            (the id derived from the message until then; a review reply starts none).
        thread_id: Gmail's thread id ("" when not known).
        via: ``history`` or ``full_sync``.
        reason: why, for ``blocked``, ``skipped``, ``unreadable``, ``refused`` and a
            refused review reply (None otherwise).
        sender: the From address, once the message was read (None before).
        approval_id: the approval a review reply answered (``review_reply`` only).
        review_outcome: what the review reply did to it (``decided``, ``refused``...).
        decision: the choice a review reply took (when it decided).
    """

    mailbox: str
    gmail_id: str
    state: ClaimState
    trace_id: str
    thread_id: str = ""
    via: str = ""
    reason: str | None = None
    sender: str | None = None
    approval_id: str | None = None
    review_outcome: str | None = None
    decision: str | None = None

    @property
    def finished(self) -> bool:
        """Whether its decision was carried out."""
        return self.state in FINISHED


def _claim(mailbox: str, gmail_id: str, doc: Mapping[str, Any]) -> Claim:
    """The claim a ``mail_claims`` document records."""
    return Claim(
        mailbox=mailbox,
        gmail_id=gmail_id,
        state=doc.get("state") or "claimed",
        trace_id=str(doc.get("trace_id") or message_trace_id(mailbox, gmail_id)),
        thread_id=str(doc.get("thread_id") or ""),
        via=str(doc.get("via") or ""),
        reason=_text(doc.get("reason")),
        sender=_text(doc.get("sender")),
        approval_id=_text(doc.get("approval_id")),
        review_outcome=_text(doc.get("review_outcome")),
        decision=_text(doc.get("decision")),
    )


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


class Claims:
    """Create, read, decide and finish message claims through the documents port."""

    def __init__(
        self, store: DocumentStore, retention_s: float = 30 * 86400, lease_s: float = CLAIM_LEASE_S
    ) -> None:
        self.store = store
        self.retention_s = retention_s
        self.lease_s = lease_s

    def claim(
        self, mailbox: str, gmail_id: str, thread_id: str, now: float, via: str, owner: str
    ) -> tuple[bool, dict[str, Any]]:
        """Claim a message.

        Args:
            mailbox: the mailbox address.
            gmail_id: Gmail's message id.
            thread_id: Gmail's thread id (may be empty when not known yet).
            now: claim time.
            via: ``history`` or ``full_sync``.
            owner: the ingest run claiming it (holds the lease).

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
            "owner": owner,
            "lease_until": now + self.lease_s,
            "claimed_at": now,
            "updated_at": now,
            "expire_at": now + self.retention_s,
        }
        path = claim_path(mailbox, gmail_id)
        if self.store.create(path, doc):
            return True, doc
        existing = self.store.get(path)
        return False, existing if existing is not None else doc

    def get(self, mailbox: str, gmail_id: str) -> Claim | None:
        """The message's claim, or None if it was never claimed (or its record expired)."""
        doc = self.store.get(claim_path(mailbox, gmail_id))
        return None if doc is None else _claim(mailbox, gmail_id, doc)

    def take_over(self, mailbox: str, gmail_id: str, owner: str, now: float) -> bool:
        """Take an unfinished claim whose lease ran out (or was released).

        Returns:
            True if ``owner`` now holds it; False if it is finished or leased by another run.
        """
        path = claim_path(mailbox, gmail_id)

        def take(tx: Transaction) -> bool:
            doc = tx.get(path)
            if doc is None or doc.get("state") in FINISHED:
                return False
            if doc.get("owner") != owner and float(doc.get("lease_until") or 0) > now:
                return False
            doc.update(owner=owner, lease_until=now + self.lease_s, updated_at=now)
            doc["takeovers"] = int(doc.get("takeovers") or 0) + 1
            tx.set(path, doc)
            return True

        return self.store.run_transaction(take)

    def renew(self, mailbox: str, gmail_id: str, owner: str, now: float) -> bool:
        """Extend ``owner``'s lease on an unfinished claim (its run is alive).

        Returns:
            True if ``owner`` still holds it; False once it is finished or another run
            took it over (the heartbeat then stops renewing it).
        """
        path = claim_path(mailbox, gmail_id)

        def extend(tx: Transaction) -> bool:
            doc = tx.get(path)
            if doc is None or doc.get("state") in FINISHED or doc.get("owner") != owner:
                return False
            doc.update(lease_until=now + self.lease_s, updated_at=now)
            tx.set(path, doc)
            return True

        return self.store.run_transaction(extend)

    def release(self, mailbox: str, gmail_id: str, owner: str, now: float) -> None:
        """Give an unfinished claim back (its owner failed) so a redelivery need not wait."""
        path = claim_path(mailbox, gmail_id)

        def give_back(tx: Transaction) -> None:
            doc = tx.get(path)
            if doc and doc.get("owner") == owner and doc.get("state") not in FINISHED:
                doc.update(lease_until=0, updated_at=now)
                tx.set(path, doc)

        self.store.run_transaction(give_back)

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

    def note(self, mailbox: str, gmail_id: str, now: float, **fields: Any) -> None:
        """Record ``fields`` on an unfinished claim (a step of carrying out its decision)."""
        path = claim_path(mailbox, gmail_id)

        def record(tx: Transaction) -> None:
            doc = tx.get(path)
            if doc is None or doc.get("state") in FINISHED:
                return
            doc.update(fields, updated_at=now)
            tx.set(path, doc)

        self.store.run_transaction(record)

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

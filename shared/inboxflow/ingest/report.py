"""What one Gmail notification did: the report logged, returned, and read by tests and the bench."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["ingested", "stale", "deferred", "rejected", "disconnected"]
"""``deferred``: another run was listing the mailbox and will cover this notification;
``disconnected``: the mailbox's authorization is gone (acknowledged, Gmail not called)."""


@dataclass
class IngestReport:
    """What one notification did (logged, returned, and read by tests and the bench)."""

    mailbox: str
    history_id: int
    outcome: Outcome = "ingested"
    cursor_before: int | None = None
    cursor_after: int | None = None
    pages: int = 0
    listed: int = 0
    started: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    queued: list[str] = field(default_factory=list)
    """Traces a reply was queued on (``trace_replies``)."""
    review_replies: list[str] = field(default_factory=list)
    """Approvals a reply to a review email answered (decided or not: see the claim)."""
    duplicates: int = 0
    in_flight: int = 0
    repaired: int = 0
    rounds: int = 1
    """Listings of the history this run did (more than one when notifications were deferred to it)."""
    blocked: int = 0
    own: int = 0
    skipped: int = 0
    gone: int = 0
    unreadable: int = 0
    full_sync: dict[str, Any] | None = None
    latest_message_ms: int | None = None
    """``internalDate`` of the newest message fetched (where a later catch-up starts)."""
    error: str | None = None

    def count(self, state: str) -> None:
        """Count a message finished ``state`` where the report has a counter for it."""
        if state in ("blocked", "own", "skipped", "gone", "unreadable"):
            setattr(self, state, getattr(self, state) + 1)

    def summary(self) -> str:
        """One log line."""
        if self.outcome != "ingested":
            return f"{self.mailbox} @{self.history_id}: {self.outcome} {self.error or ''}".strip()
        return (
            f"{self.mailbox} @{self.history_id}: cursor {self.cursor_before} -> {self.cursor_after}, "
            f"{self.listed} listed, {len(self.started)} started, {len(self.resumed)} resumed, "
            f"{len(self.queued)} queued, {len(self.review_replies)} review replies, "
            f"{self.duplicates} duplicates, {self.in_flight} in flight elsewhere, "
            f"{self.repaired} repaired, {self.blocked} blocked, "
            f"{self.own} own, {self.skipped} skipped"
            + (f", full sync of {self.full_sync['messages']}" if self.full_sync else "")
        )

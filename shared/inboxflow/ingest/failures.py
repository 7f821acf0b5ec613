"""Acknowledged ingestion failures (``failures/``): what was refused or unreadable, and why.

A failure naming a message (``gmail_id``) has one record per message, so a
redelivery rewrites it rather than adding another.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from ..clock import Clock
from ..ports.documents import DocumentStore
from ..schema import FAILURES

FUNCTION = "ingest"
MAX_RAW_FAILURE_BYTES = 16 * 1024


@dataclass(eq=False)
class FailureLog:
    """Records what ingestion acknowledged without carrying it out.

    Args:
        store: where ``failures/`` live.
        clock: time source.
        retention_s: how long a record is kept.
    """

    store: DocumentStore
    clock: Clock
    retention_s: float

    def record(
        self,
        reason: str,
        message: Any = None,
        mailbox: str = "",
        trace_id: str = "",
        gmail_id: str = "",
    ) -> None:
        """Record an acknowledged failure; one per message when ``gmail_id`` names it (a
        redelivery rewrites the same record)."""
        now = self.clock.now()
        doc: dict[str, Any] = {
            "status": "failed",
            "reason": reason,
            "at": now,
            "expire_at": now + self.retention_s,
            "function": FUNCTION,
            "node": FUNCTION,
        }
        if mailbox:
            doc["mailbox"] = mailbox
        if trace_id:
            doc["trace_id"] = trace_id
        if message is not None:
            doc["message"] = json.dumps(message, default=repr)[:MAX_RAW_FAILURE_BYTES]
        if gmail_id:
            key = hashlib.sha256(f"{mailbox}:{gmail_id}".encode()).hexdigest()[:24]
            self.store.set(FAILURES.path(f"ingest-{key}"), doc)
            return
        self.store.set(FAILURES.path(event_id(now)), doc)


def event_id(now: float) -> str:
    """A unique, time-ordered document id."""
    return f"{int(now * 1000):013d}-{uuid.uuid4().hex[:8]}"

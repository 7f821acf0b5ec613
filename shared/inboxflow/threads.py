"""The thread resolver: ``threads/{mailbox}:{thread_id}`` -> the trace of that Gmail thread.

A new message in a thread whose trace is ``waiting`` on a ``customer_reply``
pause resumes that trace (docs/architecture.md §6, "wait for the
customer's reply"); any other message starts a new trace, which becomes the thread's.
The mapping keeps the trace it replaced (``previous_trace_id``), so a trace
started by a reply can find the thread's earlier one (``trace_before``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .ports.checkpoint import CheckpointStore
from .ports.documents import DocumentStore, Transaction
from .schema import THREADS

CUSTOMER_REPLY = "customer_reply"


def thread_path(mailbox: str, thread_id: str) -> str:
    """Document path of a thread's mapping."""
    return THREADS.path(f"{mailbox}:{thread_id}")


@dataclass(frozen=True)
class WaitingTrace:
    """A trace paused until the customer answers: resume it at ``step``."""

    trace_id: str
    step: int


class ThreadResolver:
    """Maps Gmail threads to traces: the mapping in the documents port, the traces in the checkpoint port."""

    def __init__(
        self, store: DocumentStore, checkpoints: CheckpointStore, retention_s: float = 90 * 86400
    ) -> None:
        self.store = store
        self.checkpoints = checkpoints
        self.retention_s = retention_s

    def trace_of(self, mailbox: str, thread_id: str) -> str | None:
        """The trace last started for the thread, or None."""
        if not thread_id:
            return None
        doc = self.store.get(thread_path(mailbox, thread_id))
        return str(doc["trace_id"]) if doc else None

    def trace_before(self, mailbox: str, thread_id: str, trace_id: str) -> str | None:
        """The thread's trace before ``trace_id`` started in it, or None (a new thread).

        Right whether or not ingest has recorded ``trace_id`` as the thread's yet (it
        does just after starting it, while the trace's first step may already run).
        """
        if not thread_id:
            return None
        doc = self.store.get(thread_path(mailbox, thread_id))
        if not doc:
            return None
        if doc.get("trace_id") != trace_id:
            return str(doc["trace_id"])
        previous = doc.get("previous_trace_id")
        return str(previous) if previous else None

    def waiting_for_reply(self, mailbox: str, thread_id: str) -> WaitingTrace | None:
        """The thread's trace if it is waiting for a customer reply, else None."""
        trace_id = self.trace_of(mailbox, thread_id)
        if trace_id is None:
            return None
        checkpoint = self.checkpoints.get_trace(trace_id)
        if checkpoint is None or checkpoint.status != "waiting":
            return None
        if (checkpoint.pause or {}).get("kind") != CUSTOMER_REPLY:
            return None
        return WaitingTrace(trace_id, checkpoint.step)

    def record(self, mailbox: str, thread_id: str, trace_id: str, now: float) -> None:
        """Make ``trace_id`` the thread's trace (a later start replaces an earlier one)."""
        if not thread_id:
            return
        path = thread_path(mailbox, thread_id)

        def write(tx: Transaction) -> None:
            doc: dict[str, Any] = tx.get(path) or {
                "mailbox": mailbox,
                "thread_id": thread_id,
                "created_at": now,
            }
            if doc.get("trace_id") not in (None, trace_id):
                doc["previous_trace_id"] = doc["trace_id"]
            doc.update(trace_id=trace_id, updated_at=now, expire_at=now + self.retention_s)
            tx.set(path, doc)

        self.store.run_transaction(write)

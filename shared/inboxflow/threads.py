"""The thread resolver: ``threads/{mailbox}:{thread_id}`` -> the trace of that Gmail thread.

A thread has parties: the addresses (``address_key``) that wrote or were addressed
in the messages that joined it. A message joins its thread (resumes or is queued
on the thread's trace, continues it, becomes its trace) only when it is in the thread
(Gmail's threadId; ``References``/``In-Reply-To`` for mail from files) *and* its
sender is a party (``ThreadResolver.outsider``): anyone can name a thread's
Message-ID in ``References``, so a stranger's mail that does starts a trace of its
own, never recorded as the thread's, and the reason is on its step 0 log
(``TraceRoute.outside_thread``). Where the thread's decisions need more (a
customer's answer to a wait), ingest also requires the customer, authenticated.

A new message in a thread whose trace is ``waiting`` on a ``customer_reply``
pause resumes that trace (docs/architecture.md §6, "wait for the
customer's reply"); any other message starts a new trace, which becomes the thread's.
The mapping keeps the trace it replaced (``previous_trace_id``), so a trace
started by a reply can find the thread's earlier one (``trace_before``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .engine.waits import CUSTOMER_REPLY
from .mail.addresses import address_key_or_none
from .ports.checkpoint import CheckpointStore
from .ports.documents import DocumentStore, Transaction
from .schema import THREADS


def thread_path(mailbox: str, thread_id: str) -> str:
    """Document path of a thread's mapping."""
    return THREADS.path(f"{mailbox}:{thread_id}")


def thread_parties(email: Mapping[str, Any]) -> set[str]:
    """The keys of the addresses that wrote or were addressed in ``email`` (a JSON email):
    its sender, the writer of the message it forwards, its To and Cc."""
    listed = [
        email.get("sender"),
        email.get("writer"),
        *(email.get("to") or ()),
        *(email.get("cc") or ()),
    ]
    keys = (
        address_key_or_none(str(item.get("address") or "")) if isinstance(item, Mapping) else None
        for item in listed
    )
    return {key for key in keys if key is not None}


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

    def outsider(self, mailbox: str, thread_id: str, sender: str) -> str | None:
        """Why a message from ``sender`` in the thread does not join it, or None when it does
        (its sender is a party of the thread, or the thread is new to us)."""
        if not thread_id:
            return None
        doc = self.store.get(thread_path(mailbox, thread_id))
        if not doc:
            return None
        key = address_key_or_none(sender)
        if key is not None and key in self._parties(doc):
            return None
        return (
            f"its sender {sender or '(none)'} is not a party of thread {thread_id}"
            f" (of trace {doc.get('trace_id')}): it starts a trace of its own"
        )

    def _parties(self, doc: Mapping[str, Any]) -> set[str]:
        """The thread's parties; a mapping written before parties were kept: those of its
        trace's email."""
        if "parties" in doc:
            return set(doc["parties"])
        checkpoint = self.checkpoints.get_trace(str(doc.get("trace_id") or ""))
        email = checkpoint.state.get("email") if checkpoint is not None else None
        return thread_parties(email) if isinstance(email, Mapping) else set()

    def trace_before(self, mailbox: str, thread_id: str, trace_id: str, sender: str) -> str | None:
        """The thread's trace before ``trace_id`` started in it, or None (a new thread, or
        ``sender``, who wrote the email of ``trace_id``, is not a party of it).

        Right whether or not ingest has recorded ``trace_id`` as the thread's yet (it
        does just after starting it, while the trace's first step may already run).
        """
        if not thread_id or self.outsider(mailbox, thread_id, sender) is not None:
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

    def record(
        self, mailbox: str, thread_id: str, trace_id: str, now: float, parties: set[str]
    ) -> None:
        """Make ``trace_id`` the thread's trace (a later start replaces an earlier one) and
        ``parties`` (``thread_parties`` of its email) parties of the thread.

        Only for a message that joins the thread (``outsider`` is None for its sender).
        """
        if not thread_id:
            return
        path = thread_path(mailbox, thread_id)
        known = self._parties(self.store.get(path) or {"parties": []})

        def write(tx: Transaction) -> None:
            doc: dict[str, Any] = tx.get(path) or {
                "mailbox": mailbox,
                "thread_id": thread_id,
                "created_at": now,
            }
            if doc.get("trace_id") not in (None, trace_id):
                doc["previous_trace_id"] = doc["trace_id"]
            doc.update(
                trace_id=trace_id,
                parties=sorted(known | set(doc.get("parties") or ()) | parties),
                updated_at=now,
                expire_at=now + self.retention_s,
            )
            tx.set(path, doc)

        self.store.run_transaction(write)

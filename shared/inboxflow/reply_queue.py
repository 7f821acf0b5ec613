"""Customer replies queued on a busy trace: ``trace_replies/{trace_id}:{gmail_id}``.

A graph that declares ``queues_thread_replies`` (the planner) talks with a
customer over several turns. A reply in the trace's Gmail thread that arrives
while the trace is not waiting on ``customer_reply`` (it is running, or
waiting on a reviewer) must not start a second trace, nor be lost: it is
queued here, and the graph's next planning step reads it::

    store.list("trace_replies", where=[("trace_id", "==", trace_id)], order_by="received_at")

Each document is ``{trace_id, gmail_id, email, received_at, queued_at, expire_at}``
(``email``: ``mail.Email`` in JSON form; ``received_at``: Gmail's internal date
in seconds, else the ingest time). It is written create-only, so a redelivered
notification queues a reply once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .engine.graph import Graph
from .engine.waits import CUSTOMER_REPLY
from .mail import Email
from .ports.checkpoint import Checkpoint, CheckpointStore
from .ports.documents import DocumentStore
from .schema import TRACE_REPLIES
from .threads import ThreadResolver


def reply_path(trace_id: str, gmail_id: str) -> str:
    """Document path of one queued reply."""
    return TRACE_REPLIES.path(f"{trace_id}:{gmail_id}")


class ReplyQueue:
    """Finds the busy trace a thread's reply belongs to, and queues the reply on it.

    Args:
        store: where replies are queued (and traces are read).
        graphs: the graphs served, by name (their ``queues_thread_replies`` flag decides).
        retention_s: how long a queued reply is kept (``expire_at``).
    """

    def __init__(
        self,
        store: DocumentStore,
        checkpoints: CheckpointStore,
        graphs: Mapping[str, Graph],
        retention_s: float = 90 * 86400,
    ) -> None:
        self.store = store
        self.checkpoints = checkpoints
        self.graphs = graphs
        self.retention_s = retention_s
        self.threads = ThreadResolver(store, checkpoints)

    def busy_trace(self, mailbox: str, thread_id: str) -> str | None:
        """The thread's trace if a reply must be queued on it, else None.

        That is: the trace's graph queues thread replies, the trace is not
        terminal, and it is not waiting on ``customer_reply`` (that one is resumed).
        """
        trace_id = self.threads.trace_of(mailbox, thread_id)
        if trace_id is None:
            return None
        checkpoint = self.checkpoints.get_trace(trace_id)
        if checkpoint is None or not self.queues(checkpoint):
            return None
        if (
            checkpoint.status == "waiting"
            and (checkpoint.pause or {}).get("kind") == CUSTOMER_REPLY
        ):
            return None
        return trace_id

    def queues(self, checkpoint: Checkpoint) -> bool:
        """Whether replies may be queued on this trace: not terminal, its graph reads them."""
        graph = self.graphs.get(checkpoint.graph)
        return not checkpoint.terminal and graph is not None and graph.queues_thread_replies

    def queue(self, trace_id: str, email: Email, received_at: float, now: float) -> bool:
        """Queue ``email`` on ``trace_id``; False when it was queued before (a redelivery)."""
        gmail_id = email.gmail_id or email.message_id
        doc: dict[str, Any] = {
            "trace_id": trace_id,
            "gmail_id": gmail_id,
            "email": email.model_dump(mode="json"),
            "received_at": float(received_at),
            "queued_at": now,
            "expire_at": now + self.retention_s,
        }
        return self.store.create(reply_path(trace_id, gmail_id), doc)

    def pending(self, trace_id: str) -> list[dict[str, Any]]:
        """The replies queued on ``trace_id``, oldest first."""
        return pending_replies(self.store, trace_id)


def pending_replies(store: DocumentStore, trace_id: str) -> list[dict[str, Any]]:
    """The reply records queued on ``trace_id``, oldest first (what a running trace reads)."""
    rows = store.list(
        TRACE_REPLIES.name, where=[("trace_id", "==", trace_id)], order_by="received_at"
    )
    return [doc for _, doc in rows]


__all__ = ["ReplyQueue", "pending_replies", "reply_path"]

"""The ``Workspace`` port as documents in the checkpoint store (the embedded default).

Contacts are ``contacts/{email}`` and events ``calendar_events/{id}`` (as
``seed_workspace`` writes them); drafts, sent replies and read marks are
``mailbox_drafts/{id}``, ``mailbox_sent/{id}`` and ``mailbox_read/{hash}``.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from datetime import UTC, datetime
from email.utils import getaddresses
from typing import Any

from ..mail import TRACE_HEADER, reply_subject
from ..mail.addresses import address_key_or_none, same_address
from ..mail_stamps import stamp_for, stamped_message_id
from ..ports.documents import DocumentStore
from ..ports.workspace import NewEvent, OutgoingReply, Workspace
from ..schema import CALENDAR_EVENTS, MAILBOX_DRAFTS, MAILBOX_READ, MAILBOX_SENT
from ..workspace import contact_in_store


class StoreWorkspace(Workspace):
    """The workspace as documents in the checkpoint store.

    Args:
        store: the checkpoint store holding the documents.
        clock: time source for ``created_at`` (anything with ``now()``); wall clock by default.
    """

    def __init__(self, store: DocumentStore, clock: Any = None) -> None:
        self.store = store
        self.clock = clock

    def _now(self) -> float:
        return float(self.clock.now()) if self.clock is not None else time.time()

    def get_contact(self, email: str) -> dict[str, Any] | None:
        return contact_in_store(self.store, email)

    def has_written_to(self, address: str) -> bool:
        key = address_key_or_none(address)
        if key is None:
            return False
        return any(
            same_address(written, key)
            for _, doc in self.store.list(MAILBOX_SENT.name)
            for _, written in getaddresses([str(doc.get("to") or "")])
        )

    def list_events(self, start: datetime, end: datetime) -> list[dict[str, Any]]:
        start_ts, end_ts = start.timestamp(), end.timestamp()
        rows = self.store.list(
            CALENDAR_EVENTS.name, where=[("start_ts", "<", end_ts)], order_by="start_ts"
        )
        return [doc for _, doc in rows if float(doc.get("end_ts", 0)) > start_ts]

    def write_reply(self, reply: OutgoingReply, *, send: bool) -> dict[str, Any]:
        kind, collection = ("sent", MAILBOX_SENT.name) if send else ("draft", MAILBOX_DRAFTS.name)
        stamp = stamp_for(self.store, reply.trace_key, self._now())
        message_id = stamped_message_id(stamp)
        # A random id: writing twice must show up as two documents, never be merged.
        doc_id = f"{kind}-{uuid.uuid4().hex[:16]}"
        headers = {
            TRACE_HEADER: stamp,
            "Message-ID": message_id,
            **reply.threading_headers(),
        }
        doc = {
            "id": doc_id,
            "kind": kind,
            "to": reply.to,
            "subject": reply_subject(reply.subject) if reply.in_reply_to else reply.subject,
            "body": reply.body,
            "thread_id": reply.thread_id,
            "message_id": message_id,
            "headers": headers,
            "trace_key": reply.trace_key,
            "created_at": self._now(),
        }
        self.store.set(f"{collection}/{doc_id}", doc)
        return doc

    def mark_as_read(self, message_id: str) -> dict[str, Any]:
        bare = message_id.strip().strip("<>")
        self.store.set(_read_mark_path(bare), {"message_id": bare, "read_at": self._now()})
        return {"id": bare, "found": True}

    def is_read(self, message_id: str) -> bool:
        """Whether ``mark_as_read`` was called for ``message_id`` (for the demo and tests)."""
        return self.store.get(_read_mark_path(message_id.strip().strip("<>"))) is not None

    def write_event(self, event: NewEvent) -> dict[str, Any]:
        path = CALENDAR_EVENTS.path(event.event_id)
        doc = {
            "id": event.event_id,
            "summary": event.summary,
            "description": event.description,
            "attendees": list(event.attendees),
            "start": event.start.astimezone(UTC).isoformat(),
            "end": event.end.astimezone(UTC).isoformat(),
            "start_ts": event.start.timestamp(),
            "end_ts": event.end.timestamp(),
            "trace_key": event.trace_key,
        }
        if not self.store.create(path, doc):
            return self.store.get(path) or doc
        return doc

    def find_by_trace_key(self, trace_key: str) -> dict[str, Any] | None:
        for collection in (MAILBOX_DRAFTS.name, MAILBOX_SENT.name):
            rows = self.store.list(collection, where=[("trace_key", "==", trace_key)], limit=1)
            if rows:
                return rows[0][1]
        return None

    def drafts(self) -> list[dict[str, Any]]:
        """Every saved draft (for the demo and tests)."""
        return [doc for _, doc in self.store.list(MAILBOX_DRAFTS.name, order_by="created_at")]

    def sent(self) -> list[dict[str, Any]]:
        """Every sent reply (for the demo and tests)."""
        return [doc for _, doc in self.store.list(MAILBOX_SENT.name, order_by="created_at")]


def _read_mark_path(bare_message_id: str) -> str:
    return MAILBOX_READ.path(hashlib.sha256(bare_message_id.encode("utf-8")).hexdigest()[:32])


__all__ = ["StoreWorkspace"]

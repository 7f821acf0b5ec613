"""The mail and calendar port the pipeline acts through, and its embedded adapter.

``Workspace`` is what a node sees of the user's Google Workspace: contacts,
calendar events, drafts and sent mail. ``StoreWorkspace`` keeps them as
documents in the checkpoint store (``contacts/{email}``,
``calendar_events/{id}``, ``mailbox_drafts/{id}``, ``mailbox_sent/{id}``); the
Gmail/Calendar adapter implements the same five methods.

Everything the pipeline writes carries ``X-Inboxflow-Trace: {trace_key}``
(the effect journal's key), so that a step re-run after a crash can find what
it already did (``find_by_trace_key``) instead of doing it twice.
"""

from __future__ import annotations

import json
import time
import uuid
from abc import ABC, abstractmethod
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from typing import Any

from .ports.checkpoint import CheckpointStore

TRACE_HEADER = "X-Inboxflow-Trace"

CONTACTS = "contacts"
CALENDAR_EVENTS = "calendar_events"
DRAFTS = "mailbox_drafts"
SENT = "mailbox_sent"
SAVED_REPLIES = "saved_replies"
"""Canned answers the retrieve node matches against (a small knowledge base)."""


class Workspace(ABC):
    """Contacts, calendar and mailbox of the user the agent works for."""

    @abstractmethod
    def get_contact(self, email: str) -> dict[str, Any] | None:
        """The contact record for an address, or None if the sender is unknown."""

    @abstractmethod
    def list_events(self, start: datetime, end: datetime) -> list[dict[str, Any]]:
        """Calendar events overlapping ``[start, end)``, by start time.

        Each event has ``id``, ``summary``, ``start`` and ``end`` (ISO 8601, UTC).
        """

    @abstractmethod
    def create_draft(
        self, to: str, subject: str, body: str, thread_id: str, trace_key: str
    ) -> dict[str, Any]:
        """Save a draft reply stamped ``X-Inboxflow-Trace: trace_key``; returns it (with ``id``)."""

    @abstractmethod
    def send_reply(
        self, to: str, subject: str, body: str, thread_id: str, trace_key: str
    ) -> dict[str, Any]:
        """Send a reply stamped ``X-Inboxflow-Trace: trace_key``; returns it with its ``id``."""

    @abstractmethod
    def find_by_trace_key(self, trace_key: str) -> dict[str, Any] | None:
        """The draft or sent message stamped with ``trace_key``, or None (effect reconciliation)."""


class StoreWorkspace(Workspace):
    """The workspace as documents in the checkpoint store (the embedded default).

    Args:
        store: the checkpoint store holding the documents.
        clock: time source for ``created_at`` (anything with ``now()``); wall clock by default.
    """

    def __init__(self, store: CheckpointStore, clock: Any = None) -> None:
        self.store = store
        self.clock = clock

    def _now(self) -> float:
        return float(self.clock.now()) if self.clock is not None else time.time()

    def get_contact(self, email: str) -> dict[str, Any] | None:
        address = email.strip().lower()
        if not address or "/" in address:
            return None
        return self.store.get(f"{CONTACTS}/{address}")

    def list_events(self, start: datetime, end: datetime) -> list[dict[str, Any]]:
        start_ts, end_ts = start.timestamp(), end.timestamp()
        rows = self.store.list(
            CALENDAR_EVENTS, where=[("start_ts", "<", end_ts)], order_by="start_ts"
        )
        return [doc for _, doc in rows if float(doc.get("end_ts", 0)) > start_ts]

    def create_draft(
        self, to: str, subject: str, body: str, thread_id: str, trace_key: str
    ) -> dict[str, Any]:
        return self._write(DRAFTS, "draft", to, subject, body, thread_id, trace_key)

    def send_reply(
        self, to: str, subject: str, body: str, thread_id: str, trace_key: str
    ) -> dict[str, Any]:
        return self._write(SENT, "sent", to, subject, body, thread_id, trace_key)

    def find_by_trace_key(self, trace_key: str) -> dict[str, Any] | None:
        for collection in (DRAFTS, SENT):
            rows = self.store.list(collection, where=[("trace_key", "==", trace_key)], limit=1)
            if rows:
                return rows[0][1]
        return None

    def _write(
        self,
        collection: str,
        kind: str,
        to: str,
        subject: str,
        body: str,
        thread_id: str,
        trace_key: str,
    ) -> dict[str, Any]:
        doc_id = f"{kind}-{uuid.uuid4().hex[:16]}"
        doc = {
            "id": doc_id,
            "kind": kind,
            "to": to,
            "subject": subject,
            "body": body,
            "thread_id": thread_id,
            "headers": {TRACE_HEADER: trace_key},
            "trace_key": trace_key,
            "created_at": self._now(),
        }
        self.store.set(f"{collection}/{doc_id}", doc)
        return doc

    def drafts(self) -> list[dict[str, Any]]:
        """Every saved draft (for the demo and tests)."""
        return [doc for _, doc in self.store.list(DRAFTS, order_by="created_at")]

    def sent(self) -> list[dict[str, Any]]:
        """Every sent reply (for the demo and tests)."""
        return [doc for _, doc in self.store.list(SENT, order_by="created_at")]


# --- the bundled seed ------------------------------------------------------------------------


def load_seed() -> dict[str, Any]:
    """The bundled ``samples/workspace.json`` (contacts, calendar events, saved replies)."""
    text = (resources.files("inboxflow") / "samples" / "workspace.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def business_day(origin: date, n: int) -> date:
    """The ``n``-th business day after ``origin`` (``n = 1`` is the next one)."""
    day, counted = origin, 0
    while counted < n:
        day += timedelta(days=1)
        if day.weekday() < 5:
            counted += 1
    return day


def seed_workspace(
    store: CheckpointStore, now: float, seed: dict[str, Any] | None = None
) -> dict[str, int]:
    """Load the seed contacts, saved replies and calendar into ``store``.

    Event times in the seed are relative (``business_day``, ``start`` ``HH:MM``
    UTC, ``minutes``) and are placed after ``now`` so that the calendar is
    always upcoming. Idempotent: documents have fixed ids and are rewritten
    in place, so seeding again (even at a later ``now``) never duplicates.

    Returns:
        How many documents of each kind were written.
    """
    seed = seed if seed is not None else load_seed()
    today = datetime.fromtimestamp(now, UTC).date()
    for contact in seed.get("contacts", []):
        address = contact["email"].strip().lower()
        store.set(f"{CONTACTS}/{address}", {**contact, "email": address, "seeded": True})
    for reply in seed.get("saved_replies", []):
        store.set(f"{SAVED_REPLIES}/{reply['id']}", {**reply, "seeded": True})
    for event in seed.get("calendar_events", []):
        day = business_day(today, int(event["business_day"]))
        hour, minute = (int(part) for part in event["start"].split(":"))
        start = datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)
        end = start + timedelta(minutes=int(event["minutes"]))
        store.set(
            f"{CALENDAR_EVENTS}/{event['id']}",
            {
                "id": event["id"],
                "summary": event["summary"],
                "attendees": event.get("attendees", []),
                "start": start.isoformat(),
                "end": end.isoformat(),
                "start_ts": start.timestamp(),
                "end_ts": end.timestamp(),
                "seeded": True,
            },
        )
    return {
        "contacts": len(seed.get("contacts", [])),
        "saved_replies": len(seed.get("saved_replies", [])),
        "calendar_events": len(seed.get("calendar_events", [])),
    }


__all__ = [
    "TRACE_HEADER",
    "StoreWorkspace",
    "Workspace",
    "business_day",
    "load_seed",
    "seed_workspace",
]

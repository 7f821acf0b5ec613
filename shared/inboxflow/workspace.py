"""The mail and calendar port the pipeline acts through, and its embedded adapter.

``Workspace`` is what a node sees of the user's Google Workspace: contacts,
calendar (events, free/busy, inserts), drafts, sent mail and read marks.
``StoreWorkspace`` keeps them as documents in the checkpoint store
(``contacts/{email}``, ``calendar_events/{id}``, ``mailbox_drafts/{id}``,
``mailbox_sent/{id}``, ``mailbox_read/{id}``); ``GoogleWorkspace``
(``adapters/google_workspace.py``) implements the same methods on Gmail v1 and
Calendar v3. Contacts come from the checkpoint store in both (it is the CRM
stand-in); ``workspace_from_env`` picks the adapter.

Everything the pipeline writes carries ``X-Inboxflow-Trace: {trace_key}``
(the effect journal's key) and a Message-ID derived from that key, so that a
step re-run after a crash can find what it already did (``find_by_trace_key``)
instead of doing it twice. Calendar events get an id derived from the key, so
inserting one twice is a conflict, never a second event.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from typing import Any

from .mail import TRACE_HEADER, reply_subject
from .ports.checkpoint import CheckpointStore

CONTACTS = "contacts"
CALENDAR_EVENTS = "calendar_events"
DRAFTS = "mailbox_drafts"
SENT = "mailbox_sent"
READ_MARKS = "mailbox_read"
SAVED_REPLIES = "saved_replies"
"""Canned answers the retrieve node matches against (a small knowledge base)."""

DEFAULT_MESSAGE_ID_DOMAIN = "inboxflow.invalid"

Interval = tuple[datetime, datetime]


def trace_message_id(trace_key: str, domain: str = DEFAULT_MESSAGE_ID_DOMAIN) -> str:
    """The Message-ID (with angle brackets) a write stamped ``trace_key`` carries.

    Deterministic, so that ``find_by_trace_key`` can search for it
    (Gmail's ``rfc822msgid:``) without a custom-header search.
    """
    digest = hashlib.sha256(trace_key.encode("utf-8")).hexdigest()[:32]
    return f"<inboxflow.{digest}@{domain}>"


def trace_event_id(trace_key: str) -> str:
    """The calendar event id for ``trace_key`` (32 hex digits: valid base32hex for Calendar)."""
    return hashlib.sha256(trace_key.encode("utf-8")).hexdigest()[:32]


def reply_references(in_reply_to: str | None, references: Sequence[str] | str = ()) -> list[str]:
    """The References of a reply: the original's References then its Message-ID (RFC 5322 3.6.4).

    Args:
        in_reply_to: the original's Message-ID, with or without angle brackets.
        references: the original's References (a header value or a list of ids).

    Returns:
        Bracketed ids, oldest first, without duplicates.
    """
    items = references.split() if isinstance(references, str) else list(references)
    if in_reply_to:
        items.append(in_reply_to)
    result: list[str] = []
    for item in items:
        bare = item.strip().strip("<>").strip()
        if bare and f"<{bare}>" not in result:
            result.append(f"<{bare}>")
    return result


def merge_intervals(intervals: Sequence[Interval]) -> list[Interval]:
    """Sorted, non-overlapping union of ``intervals``."""
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class Workspace(ABC):
    """Contacts, calendar and mailbox of the user the agent works for.

    Mail methods return the message as a dict with at least ``id``, ``kind``
    (``draft`` or ``sent``), ``thread_id``, ``to``, ``subject``, ``message_id``
    (the RFC 5322 Message-ID), ``headers`` (``X-Inboxflow-Trace``,
    ``In-Reply-To``, ``References``) and ``trace_key``.
    """

    def for_mailbox(self, mailbox: str) -> Workspace:
        """The workspace of ``mailbox`` (adapters serving several mailboxes override this)."""
        return self

    @abstractmethod
    def get_contact(self, email: str) -> dict[str, Any] | None:
        """The contact record for an address, or None if the sender is unknown."""

    @abstractmethod
    def list_events(self, start: datetime, end: datetime) -> list[dict[str, Any]]:
        """Calendar events overlapping ``[start, end)``, by start time.

        Each event has ``id``, ``summary``, ``start`` and ``end`` (ISO 8601, UTC).
        """

    def free_busy(self, start: datetime, end: datetime) -> list[Interval]:
        """Busy intervals within ``[start, end)``, merged and sorted (aware UTC datetimes)."""
        busy = [
            (
                max(start, datetime.fromisoformat(event["start"])),
                min(end, datetime.fromisoformat(event["end"])),
            )
            for event in self.list_events(start, end)
        ]
        return merge_intervals([(s, e) for s, e in busy if s < e])

    @abstractmethod
    def create_draft(
        self,
        to: str,
        subject: str,
        body: str,
        thread_id: str,
        trace_key: str,
        *,
        in_reply_to: str | None = None,
        references: Sequence[str] | str = (),
    ) -> dict[str, Any]:
        """Save a draft reply stamped ``X-Inboxflow-Trace: trace_key``.

        Args:
            to: recipient address.
            subject: subject; ``Re: `` is added when it is missing (never doubled).
            body: plain-text body.
            thread_id: the conversation (a Gmail thread id when known).
            trace_key: the effect journal's key, stamped on the message.
            in_reply_to: the original's Message-ID; threads the reply.
            references: the original's References.

        Returns:
            The draft (see the class docstring for the shape).
        """

    @abstractmethod
    def send_reply(
        self,
        to: str,
        subject: str,
        body: str,
        thread_id: str,
        trace_key: str,
        *,
        in_reply_to: str | None = None,
        references: Sequence[str] | str = (),
    ) -> dict[str, Any]:
        """Send a reply in the thread, stamped ``X-Inboxflow-Trace: trace_key``.

        Arguments as for ``create_draft``. The reply carries ``In-Reply-To``
        (the original's Message-ID) and ``References`` (the original's
        References followed by its Message-ID).

        Returns:
            The sent message (see the class docstring for the shape).
        """

    @abstractmethod
    def mark_as_read(self, message_id: str) -> dict[str, Any]:
        """Mark a received message read.

        Args:
            message_id: its RFC 5322 Message-ID (contains ``@``) or the mailbox's own id.

        Returns:
            ``{"id": ..., "found": bool}``.
        """

    @abstractmethod
    def insert_event(
        self,
        summary: str,
        start: datetime,
        end: datetime,
        attendees: Sequence[str],
        trace_key: str,
        description: str = "",
    ) -> dict[str, Any]:
        """Put an event in the calendar, once per ``trace_key`` (its id derives from the key).

        Returns:
            The event: ``id``, ``summary``, ``start``, ``end`` (ISO 8601 UTC),
            ``attendees``, ``trace_key``.
        """

    @abstractmethod
    def find_by_trace_key(self, trace_key: str) -> dict[str, Any] | None:
        """The draft or sent message stamped with ``trace_key``, or None (effect reconciliation)."""


def contact_in_store(store: CheckpointStore, email: str) -> dict[str, Any] | None:
    """The contact document for ``email`` in the store (the CRM stand-in), or None."""
    address = email.strip().lower()
    if not address or "/" in address:
        return None
    return store.get(f"{CONTACTS}/{address}")


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
        return contact_in_store(self.store, email)

    def list_events(self, start: datetime, end: datetime) -> list[dict[str, Any]]:
        start_ts, end_ts = start.timestamp(), end.timestamp()
        rows = self.store.list(
            CALENDAR_EVENTS, where=[("start_ts", "<", end_ts)], order_by="start_ts"
        )
        return [doc for _, doc in rows if float(doc.get("end_ts", 0)) > start_ts]

    def create_draft(
        self,
        to: str,
        subject: str,
        body: str,
        thread_id: str,
        trace_key: str,
        *,
        in_reply_to: str | None = None,
        references: Sequence[str] | str = (),
    ) -> dict[str, Any]:
        return self._write(
            DRAFTS, "draft", to, subject, body, thread_id, trace_key, in_reply_to, references
        )

    def send_reply(
        self,
        to: str,
        subject: str,
        body: str,
        thread_id: str,
        trace_key: str,
        *,
        in_reply_to: str | None = None,
        references: Sequence[str] | str = (),
    ) -> dict[str, Any]:
        return self._write(
            SENT, "sent", to, subject, body, thread_id, trace_key, in_reply_to, references
        )

    def mark_as_read(self, message_id: str) -> dict[str, Any]:
        bare = message_id.strip().strip("<>")
        self.store.set(_read_mark_path(bare), {"message_id": bare, "read_at": self._now()})
        return {"id": bare, "found": True}

    def is_read(self, message_id: str) -> bool:
        """Whether ``mark_as_read`` was called for ``message_id`` (for the demo and tests)."""
        return self.store.get(_read_mark_path(message_id.strip().strip("<>"))) is not None

    def insert_event(
        self,
        summary: str,
        start: datetime,
        end: datetime,
        attendees: Sequence[str],
        trace_key: str,
        description: str = "",
    ) -> dict[str, Any]:
        event_id = trace_event_id(trace_key)
        path = f"{CALENDAR_EVENTS}/{event_id}"
        event = {
            "id": event_id,
            "summary": summary,
            "description": description,
            "attendees": list(attendees),
            "start": start.astimezone(UTC).isoformat(),
            "end": end.astimezone(UTC).isoformat(),
            "start_ts": start.timestamp(),
            "end_ts": end.timestamp(),
            "trace_key": trace_key,
        }
        if not self.store.create(path, event):
            return self.store.get(path) or event
        return event

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
        in_reply_to: str | None,
        references: Sequence[str] | str,
    ) -> dict[str, Any]:
        message_id = trace_message_id(trace_key)
        # A random id: writing twice must show up as two documents, never be merged.
        doc_id = f"{kind}-{uuid.uuid4().hex[:16]}"
        headers = {TRACE_HEADER: trace_key, "Message-ID": message_id}
        refs = reply_references(in_reply_to, references)
        if in_reply_to:
            headers["In-Reply-To"] = refs[-1]
            headers["References"] = " ".join(refs)
        doc = {
            "id": doc_id,
            "kind": kind,
            "to": to,
            "subject": reply_subject(subject) if in_reply_to else subject,
            "body": body,
            "thread_id": thread_id,
            "message_id": message_id,
            "headers": headers,
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


def workspace_from_env(
    store: CheckpointStore, environ: Mapping[str, str] | None = None, clock: Any = None
) -> Workspace:
    """The workspace adapter the environment selects (the lead wires this into ``wiring``).

    ``GoogleWorkspace`` when ``INBOXFLOW_GOOGLE_API_URL`` (the local Gmail and
    Calendar double) or Google credentials (``INBOXFLOW_GMAIL_CREDENTIALS`` or
    ``INBOXFLOW_GMAIL_CREDENTIALS_SECRET``) are configured, bound to
    ``INBOXFLOW_MAILBOX`` by default (``for_mailbox`` switches); otherwise
    ``StoreWorkspace``. Nothing is imported from ``googleapiclient`` here.

    Args:
        store: the checkpoint store (contacts; the whole workspace for ``StoreWorkspace``).
        environ: variables to read (default ``os.environ``).
        clock: time source (anything with ``now()``).
    """
    env = os.environ if environ is None else environ
    if (
        env.get("INBOXFLOW_GOOGLE_API_URL")
        or env.get("INBOXFLOW_GMAIL_CREDENTIALS")
        or env.get("INBOXFLOW_GMAIL_CREDENTIALS_SECRET")
    ):
        from .adapters.google_workspace import GoogleWorkspace

        return GoogleWorkspace.from_env(store, env, clock=clock)
    return StoreWorkspace(store, clock)


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


def seed_event_times(event: Mapping[str, Any], today: date) -> Interval:
    """Where a seed event (``business_day``, ``start`` ``HH:MM`` UTC, ``minutes``) falls after ``today``."""
    day = business_day(today, int(event["business_day"]))
    hour, minute = (int(part) for part in str(event["start"]).split(":"))
    start = datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)
    return start, start + timedelta(minutes=int(event["minutes"]))


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
        start, end = seed_event_times(event, today)
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
    "Interval",
    "StoreWorkspace",
    "Workspace",
    "business_day",
    "contact_in_store",
    "load_seed",
    "merge_intervals",
    "reply_references",
    "seed_event_times",
    "seed_workspace",
    "trace_event_id",
    "trace_message_id",
    "workspace_from_env",
]


def _read_mark_path(bare_message_id: str) -> str:
    return f"{READ_MARKS}/{hashlib.sha256(bare_message_id.encode('utf-8')).hexdigest()[:32]}"

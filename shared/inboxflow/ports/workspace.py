"""The mail and calendar port the pipeline acts through.

``Workspace`` is what a node sees of the user's Google Workspace: contacts,
calendar (events, free/busy, inserts), drafts, sent mail and read marks.
Adapters: ``StoreWorkspace`` (``adapters/store_workspace.py``, documents in the
checkpoint store, the embedded default) and ``GoogleWorkspace``
(``adapters/google_workspace.py``, Gmail v1 and Calendar v3).

Everything the pipeline writes carries ``X-Inboxflow-Trace: {stamp}`` and the
Message-ID ``<inboxflow.{stamp}@domain>``, where the stamp is drawn at random
once per effect key and kept in the store (``mail_stamps.py``: nothing in a
message lets its reader derive a trace id or another message's id), so that a
step re-run after a crash can find what it already did (``find_by_trace_key``)
instead of doing it twice. Calendar events
get an id derived from the key (``trace_event_id``), so inserting one twice
is a conflict, never a second event.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

DEFAULT_MESSAGE_ID_DOMAIN = "inboxflow.invalid"

Interval = tuple[datetime, datetime]


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


@dataclass(frozen=True)
class OutgoingReply:
    """A reply to write (draft or send); the arguments of ``Workspace.create_draft``."""

    to: str
    subject: str
    body: str
    thread_id: str
    trace_key: str
    in_reply_to: str | None = None
    references: Sequence[str] | str = ()

    def threading_headers(self) -> dict[str, str]:
        """``In-Reply-To`` and ``References`` of the reply; empty when it answers nothing."""
        if not self.in_reply_to:
            return {}
        refs = reply_references(self.in_reply_to, self.references)
        return {"In-Reply-To": refs[-1], "References": " ".join(refs)}


@dataclass(frozen=True)
class NewEvent:
    """A calendar event to insert; the arguments of ``Workspace.insert_event``."""

    summary: str
    start: datetime
    end: datetime
    attendees: tuple[str, ...]
    trace_key: str
    description: str = ""

    @property
    def event_id(self) -> str:
        """The event's id, derived from ``trace_key``: a second insert is a conflict."""
        return trace_event_id(self.trace_key)


class Workspace(ABC):
    """Contacts, calendar and mailbox of the user the agent works for.

    Mail methods return the message as a dict with at least ``id``, ``kind``
    (``draft`` or ``sent``), ``thread_id``, ``to``, ``subject``, ``message_id``
    (the RFC 5322 Message-ID), ``headers`` (``X-Inboxflow-Trace``: the stamp,
    ``In-Reply-To``, ``References``) and ``trace_key``.
    """

    def for_mailbox(self, mailbox: str) -> Workspace:
        """The workspace of ``mailbox`` (adapters serving several mailboxes override this)."""
        return self

    @abstractmethod
    def get_contact(self, email: str) -> dict[str, Any] | None:
        """The contact record for an address, or None if the sender is unknown."""

    def has_written_to(self, address: str) -> bool:
        """Whether the mailbox has already written to ``address``: a message in its sent
        mail (sent by the owner, or by a reviewed or permitted send) has it in ``To``
        (compared by ``mail.addresses.same_address``). Drafts do not count.

        What "corresponded with" means for the no-relay rule
        (``bindings.relay_refusal``). A workspace that cannot tell says False: the
        send then waits for a person.
        """
        return False

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
        """Save a draft reply stamped with the stamp of ``trace_key`` (``mail_stamps.py``).

        Args:
            to: recipient address.
            subject: subject; ``Re: `` is added when it is missing (never doubled).
            body: plain-text body.
            thread_id: the conversation (a Gmail thread id when known).
            trace_key: the effect journal's key; the message carries its stamp.
            in_reply_to: the original's Message-ID; threads the reply.
            references: the original's References.

        Returns:
            The draft (see the class docstring for the shape).
        """
        reply = OutgoingReply(to, subject, body, thread_id, trace_key, in_reply_to, references)
        return self.write_reply(reply, send=False)

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
        """Send a reply in the thread, stamped with the stamp of ``trace_key``.

        Arguments as for ``create_draft``. The reply carries ``In-Reply-To``
        (the original's Message-ID) and ``References`` (the original's
        References followed by its Message-ID).

        Returns:
            The sent message (see the class docstring for the shape).
        """
        reply = OutgoingReply(to, subject, body, thread_id, trace_key, in_reply_to, references)
        return self.write_reply(reply, send=True)

    @abstractmethod
    def write_reply(self, reply: OutgoingReply, *, send: bool) -> dict[str, Any]:
        """Save ``reply`` as a draft, or send it (``send``); what adapters implement.

        Returns:
            The message (see the class docstring for the shape), ``kind``
            ``sent`` or ``draft``.
        """

    @abstractmethod
    def mark_as_read(self, message_id: str) -> dict[str, Any]:
        """Mark a received message read.

        Args:
            message_id: its RFC 5322 Message-ID (contains ``@``) or the mailbox's own id.

        Returns:
            ``{"id": ..., "found": bool}``.
        """

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
        event = NewEvent(summary, start, end, tuple(attendees), trace_key, description)
        return self.write_event(event)

    @abstractmethod
    def write_event(self, event: NewEvent) -> dict[str, Any]:
        """Insert ``event`` under ``event.event_id``, or return the one already there."""

    @abstractmethod
    def find_by_trace_key(self, trace_key: str) -> dict[str, Any] | None:
        """The draft or sent message stamped with ``trace_key``, or None (effect reconciliation)."""


__all__ = [
    "DEFAULT_MESSAGE_ID_DOMAIN",
    "Interval",
    "NewEvent",
    "OutgoingReply",
    "Workspace",
    "merge_intervals",
    "reply_references",
    "trace_event_id",
]

"""The workspace's documents in the checkpoint store, its seed, and the adapter choice.

The ``Workspace`` port is in ``ports/workspace.py``; its adapters are
``StoreWorkspace`` (``adapters/store_workspace.py``) and ``GoogleWorkspace``
(``adapters/google_workspace.py``). Contacts come from the checkpoint store in
both (``contacts/{email}``, the CRM stand-in); ``inboxflow.services.workspace_from_env`` picks the
adapter; ``seed_workspace`` loads the bundled contacts, saved replies and
calendar.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from typing import Any

from .ports.documents import DocumentStore
from .ports.workspace import Interval
from .schema import CALENDAR_EVENTS, CONTACTS, SAVED_REPLIES

"""Canned answers the retrieve node matches against (a small knowledge base)."""


def contact_in_store(store: DocumentStore, email: str) -> dict[str, Any] | None:
    """The contact document for ``email`` in the store (the CRM stand-in), or None."""
    address = email.strip().lower()
    if not address or "/" in address:
        return None
    return store.get(CONTACTS.path(address))


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
    store: DocumentStore, now: float, seed: dict[str, Any] | None = None
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
        store.set(CONTACTS.path(address), {**contact, "email": address, "seeded": True})
    for reply in seed.get("saved_replies", []):
        store.set(SAVED_REPLIES.path(reply["id"]), {**reply, "seeded": True})
    for event in seed.get("calendar_events", []):
        start, end = seed_event_times(event, today)
        store.set(
            CALENDAR_EVENTS.path(event["id"]),
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
    "business_day",
    "contact_in_store",
    "load_seed",
    "seed_event_times",
    "seed_workspace",
]

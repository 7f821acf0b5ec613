"""The Calendar v3 subset of the Google API double: events.list/get/insert and freebusy.query.

Calendars are keyed by their id (a mailbox address; ``primary`` is refused so
that callers name the calendar they mean). Times are kept as aware UTC
datetimes and answered in RFC 3339 with ``Z``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from inboxflow.dev.doubles.errors import ApiError, owner_key

EVENT_ID = re.compile(r"[a-v0-9]{5,1024}")
"""Client-chosen event ids: base32hex characters, 5 to 1024 of them."""


def rfc3339(moment: datetime) -> str:
    """``2026-01-05T09:00:00Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any, what: str) -> datetime:
    """An RFC 3339 date-time (aware, in UTC); ``ApiError`` 400 if it is not one."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise ApiError(400, f"Invalid value for {what}: {value!r}", "invalid") from exc
    if moment.tzinfo is None:
        raise ApiError(400, f"Invalid value for {what}: {value!r} (no offset)", "invalid")
    return moment.astimezone(UTC)


def _event_time(value: Any, what: str) -> datetime:
    if not isinstance(value, Mapping):
        raise ApiError(400, f"Missing {what} time.", "required")
    if value.get("dateTime"):
        return parse_time(value["dateTime"], f"{what}.dateTime")
    if value.get("date"):
        try:
            day = date.fromisoformat(str(value["date"]))
        except ValueError as exc:
            raise ApiError(400, f"Invalid {what}.date", "invalid") from exc
        return datetime.combine(day, time(0), tzinfo=UTC)
    raise ApiError(400, f"Missing {what} time.", "required")


class CalendarState:
    """Every calendar of the double (callers hold the double's lock).

    Args:
        now: time source in seconds (``created``/``updated``).
    """

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._ids = itertools.count(1)
        self.calendars: dict[str, dict[str, dict[str, Any]]] = {}

    def calendar(self, calendar_id: str) -> dict[str, dict[str, Any]]:
        """The events of ``calendar_id`` by id (created on first use)."""
        refusal = "The double serves several calendars: name the calendar (the mailbox address)."
        key = owner_key(calendar_id, "primary", refusal, "invalid")
        return self.calendars.setdefault(key, {})

    def put(
        self, calendar_id: str, body: Mapping[str, Any], validate_id: bool = True
    ) -> dict[str, Any]:
        """Store an event (``ApiError`` 409 when its id exists)."""
        events = self.calendar(calendar_id)
        event_id = str(body.get("id") or f"{next(self._ids):08d}ifx")
        if validate_id and not EVENT_ID.fullmatch(event_id):
            raise ApiError(400, "Invalid resource id value.", "invalid")
        if event_id in events:
            raise ApiError(409, "The requested identifier already exists.", "duplicate")
        start = _event_time(body.get("start"), "start")
        end = _event_time(body.get("end"), "end")
        if end < start:
            raise ApiError(400, "The specified time range is empty.", "timeRangeEmpty")
        stamp = rfc3339(datetime.fromtimestamp(self._now(), UTC))
        event = {
            "kind": "calendar#event",
            "id": event_id,
            "status": "confirmed",
            "htmlLink": f"https://calendar.example/event?eid={event_id}",
            "created": stamp,
            "updated": stamp,
            "summary": str(body.get("summary") or ""),
            "description": str(body.get("description") or ""),
            "start": {"dateTime": rfc3339(start), "timeZone": "UTC"},
            "end": {"dateTime": rfc3339(end), "timeZone": "UTC"},
            "attendees": [
                {"email": str(a.get("email")), "responseStatus": "needsAction"}
                for a in body.get("attendees") or []
                if isinstance(a, Mapping) and a.get("email")
            ],
            "transparency": str(body.get("transparency") or "opaque"),
            "iCalUID": f"{event_id}@google.com",
            "_start": start,
            "_end": end,
        }
        if body.get("extendedProperties"):
            event["extendedProperties"] = body["extendedProperties"]
        events[event_id] = event
        return public(event)

    def insert(self, calendar_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``events.insert``."""
        return self.put(calendar_id, body)

    def get(self, calendar_id: str, event_id: str) -> dict[str, Any]:
        """``events.get``."""
        event = self.calendar(calendar_id).get(event_id)
        if event is None:
            raise ApiError(404, "Not Found", "notFound")
        return public(event)

    def list(self, calendar_id: str, args: Mapping[str, list[str]]) -> dict[str, Any]:
        """``events.list``: ``timeMin``/``timeMax`` overlap, ``privateExtendedProperty``, paging."""
        events = list(self.calendar(calendar_id).values())
        time_min = _arg(args, "timeMin")
        time_max = _arg(args, "timeMax")
        if time_min:
            low = parse_time(time_min, "timeMin")
            events = [e for e in events if e["_end"] > low]
        if time_max:
            high = parse_time(time_max, "timeMax")
            events = [e for e in events if e["_start"] < high]
        for prop in args.get("privateExtendedProperty", []):
            name, _, value = prop.partition("=")
            events = [
                e
                for e in events
                if (e.get("extendedProperties") or {}).get("private", {}).get(name) == value
            ]
        query = (_arg(args, "q") or "").lower()
        if query:
            events = [e for e in events if query in f"{e['summary']} {e['description']}".lower()]
        events.sort(key=lambda e: (e["_start"], e["id"]))
        size = int(_arg(args, "maxResults") or 250)
        offset = int(_arg(args, "pageToken") or 0)
        page = events[offset : offset + size]
        result: dict[str, Any] = {
            "kind": "calendar#events",
            "summary": calendar_id,
            "timeZone": "UTC",
            "items": [public(e) for e in page],
        }
        if offset + size < len(events):
            result["nextPageToken"] = str(offset + size)
        return result

    def free_busy(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``freebusy.query``: merged busy intervals per calendar, clipped to the window."""
        if not body.get("timeMin") or not body.get("timeMax"):
            raise ApiError(400, "Missing timeMin or timeMax.", "required")
        low = parse_time(body["timeMin"], "timeMin")
        high = parse_time(body["timeMax"], "timeMax")
        if high <= low:
            raise ApiError(400, "The specified time range is empty.", "timeRangeEmpty")
        if high - low > timedelta(days=90):
            raise ApiError(400, "The requested time range is too long.", "timeRangeTooLong")
        calendars: dict[str, Any] = {}
        for item in body.get("items") or []:
            calendar_id = str(item.get("id", ""))
            busy: list[list[datetime]] = []
            for event in sorted(self.calendar(calendar_id).values(), key=lambda e: e["_start"]):
                if event["transparency"] == "transparent" or event["status"] == "cancelled":
                    continue
                start, end = max(low, event["_start"]), min(high, event["_end"])
                if start >= end:
                    continue
                if busy and start <= busy[-1][1]:
                    busy[-1][1] = max(busy[-1][1], end)
                else:
                    busy.append([start, end])
            calendars[calendar_id] = {
                "busy": [{"start": rfc3339(s), "end": rfc3339(e)} for s, e in busy]
            }
        return {
            "kind": "calendar#freeBusy",
            "timeMin": rfc3339(low),
            "timeMax": rfc3339(high),
            "calendars": calendars,
        }


def public(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event without the double's own bookkeeping fields."""
    return {k: v for k, v in event.items() if not k.startswith("_")}


def _arg(args: Mapping[str, list[str]], name: str) -> str | None:
    values = args.get(name) or []
    return values[0] if values else None


__all__ = ["EVENT_ID", "CalendarState", "parse_time", "public", "rfc3339"]

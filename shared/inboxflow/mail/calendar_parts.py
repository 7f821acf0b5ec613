"""Calendar parts: the first event of a ``text/calendar`` part (RFC 5545 / iTIP RFC 5546)."""

from __future__ import annotations

import re

from .headers import one_line
from .model import CalendarInvite


def parse_calendar(ics: str, method: str = "") -> CalendarInvite | None:
    """The first VEVENT of an iCalendar text (RFC 5545) as invitation metadata.

    Args:
        ics: the ``text/calendar`` content.
        method: the Content-Type ``method`` parameter (used if the body has none).

    Returns:
        The invite, or None when there is no event.
    """
    lines = re.sub(r"\r?\n[ \t]", "", ics.replace("\r\n", "\n")).split("\n")
    props: dict[str, tuple[dict[str, str], str]] = {}
    calendar_method = method
    in_event = False
    for line in lines[:5000]:
        name_part, sep, value = line.partition(":")
        if not sep:
            continue
        name, *param_parts = name_part.split(";")
        name = name.strip().upper()
        if name == "BEGIN" and value.strip().upper() == "VEVENT":
            in_event = True
        elif name == "END" and value.strip().upper() == "VEVENT":
            if in_event:
                break
        elif name == "METHOD" and not in_event:
            calendar_method = value.strip()
        elif in_event and name not in props:
            params = {}
            for param in param_parts:
                key, _, val = param.partition("=")
                params[key.strip().upper()] = val.strip().strip('"')
            props[name] = (params, value)
    if not props:
        return None

    def text(name: str) -> str:
        raw_value = props.get(name, ({}, ""))[1]
        unescaped = re.sub(
            r"\\([nN,;\\])", lambda m: "\n" if m.group(1) in "nN" else m.group(1), raw_value
        )
        return one_line(unescaped)[:500]

    start_params, start_raw = props.get("DTSTART", ({}, ""))
    end_raw = props.get("DTEND", ({}, ""))[1]
    organizer_params, organizer_raw = props.get("ORGANIZER", ({}, ""))
    organizer_address = re.sub(r"^mailto:", "", organizer_raw.strip(), flags=re.IGNORECASE)
    organizer_name = organizer_params.get("CN", "")
    organizer = f"{organizer_name} <{organizer_address}>" if organizer_name else organizer_address
    timezone = start_params.get("TZID", "")
    if start_raw.strip().upper().endswith("Z"):
        timezone = "UTC"
    return CalendarInvite(
        method=calendar_method.strip().upper()[:40],
        uid=text("UID")[:300],
        summary=text("SUMMARY"),
        start=_ical_time(start_raw),
        end=_ical_time(end_raw),
        timezone=timezone[:100],
        organizer=one_line(organizer)[:500],
        location=text("LOCATION"),
    )


def _ical_time(value: str) -> str:
    value = value.strip()
    match = re.fullmatch(r"(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})?(Z?))?", value)
    if not match:
        return value[:40]
    year, month, day, hour, minute, second, zulu = match.groups()
    if hour is None:
        return f"{year}-{month}-{day}"
    return f"{year}-{month}-{day}T{hour}:{minute}:{second or '00'}{'+00:00' if zulu else ''}"


__all__ = ["parse_calendar"]

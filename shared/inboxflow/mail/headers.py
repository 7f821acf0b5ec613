"""Header values: decoded leniently, addresses, dates, ids, the mailbox and the thread.

Every helper here is the one copy the MIME parser and the JSON loader share.
Nothing raises on bad input except :func:`sender` (no sender at all is not an
email); what was repaired is added to a :class:`ParseWarnings`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.message import Message
from email.utils import getaddresses, parsedate_to_datetime

from .charsets import ESCAPED_BYTES, clean_text, decode_bytes
from .field_text import one_line
from .model import Address, EmailParseError

TRACE_HEADER = "X-Inboxflow-Trace"
"""Stamped on every message we write (draft or send) with its effect-journal key.

Mail carrying it is our own (ingest skips it, loop protection never answers
it), and a crashed dispatch finds its message again by it (docs/architecture.md
§5 and §8). ``Email.headers`` keys are lowercased: look it up with
``TRACE_HEADER.lower()`` or ``Email.header``.
"""

HEADER_VALUE_LIMIT = 16_000
"""Characters kept of one header value."""

HEADERS_LIMIT = 100_000
"""Characters of all header values together; later headers are dropped with a warning."""

MAX_RECIPIENTS = 300
MAX_WARNINGS = 30

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""The received time of a message without a readable date."""

MESSAGE_IDS = re.compile(r"<([^<>\s]{1,500})>")
_ENCODED_WORD = re.compile(r"=\?([^?\s]{1,80})\?([bBqQ])\?([^?\s]*)\?=")
_LOCAL_PART = re.compile(r"[^\s@<>()\[\],;:\\\"]{1,64}")
_DOMAIN = re.compile(
    r"(?=.{4,253}$)(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W_](?:[\w-]{0,61}[^\W_])?"
)
_BARE_LOCAL_PART = re.compile(
    r"(?P<name>[^<>]*?)\s*<(?P<bracketed>[\w.+-]{1,64})>|(?P<local>[\w.+-]{1,64})(?:\s*\((?P<comment>[^()]*)\))?"
)


class ParseWarnings:
    """What was repaired or dropped while reading a message: at most ``MAX_WARNINGS``, no repeats."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        """Record one warning (cleaned, capped at 300 characters)."""
        text = clean_text(text)
        if text in self.items:
            return
        if len(self.items) < MAX_WARNINGS:
            self.items.append(text[:300])
        elif len(self.items) == MAX_WARNINGS:
            self.items.append("more warnings not recorded")


def strip_angle(value: str) -> str:
    """A message id without its angle brackets."""
    return value.strip().strip("<>").strip()


def first_id(value: str) -> str | None:
    """The first ``<id>`` of a header value, without angle brackets."""
    found = MESSAGE_IDS.search(value)
    return found.group(1) if found else None


def synthetic_id(content: bytes) -> str:
    """A stable Message-ID for a message that has none, derived from its content."""
    return f"generated-{hashlib.sha256(content).hexdigest()[:24]}@inboxflow"


def header_map(msg: Message, warnings: ParseWarnings) -> tuple[dict[str, str], dict[str, str]]:
    """Every header, names lowercased, repeated ones joined by newlines.

    Returns:
        The decoded values (RFC 2047 words decoded), and the raw values (unfolded,
        8-bit text decoded, encoded words intact) that address parsing needs.
    """
    decoded: dict[str, list[str]] = {}
    raw: dict[str, list[str]] = {}
    total = 0
    dropped = 0
    for name, value in msg.raw_items():
        key = clean_text(str(name)).strip().lower()[:200]
        if not key:
            continue
        raw_value = raw_header_value(key, str(value), warnings)
        if len(raw_value) > HEADER_VALUE_LIMIT:
            warnings.add(f"header {key} of {len(raw_value)} characters cut")
            raw_value = raw_value[:HEADER_VALUE_LIMIT]
        if total + len(raw_value) > HEADERS_LIMIT:
            dropped += 1
            continue
        total += len(raw_value) + len(key)
        text, bad = decode_header_words(raw_value)
        if bad:
            warnings.add(f"header {key}: badly encoded words replaced")
        raw.setdefault(key, []).append(raw_value)
        decoded.setdefault(key, []).append(one_line(text).strip())
    if dropped:
        warnings.add(f"{dropped} headers dropped: headers over {HEADERS_LIMIT} characters")
    return (
        {key: "\n".join(values) for key, values in decoded.items()},
        {key: "\n".join(values) for key, values in raw.items()},
    )


def raw_header_value(name: str, value: str, warnings: ParseWarnings) -> str:
    """A header value unfolded, with raw 8-bit text decoded (UTF-8, else Windows-1252)."""
    if ESCAPED_BYTES.search(value):  # raw 8-bit bytes in the header (RFC 6532 or a legacy mailer)
        data = value.encode("utf-8", "surrogateescape")
        try:
            value = data.decode("utf-8")
        except UnicodeDecodeError:
            value = data.decode("cp1252", "replace")
            warnings.add(f"header {name}: undeclared 8-bit text read as Windows-1252")
    return one_line(clean_text(value)).strip()


def decode_header_words(value: str) -> tuple[str, bool]:
    """Decode RFC 2047 encoded words leniently (any charset label, broken base64 tolerated).

    Args:
        value: a header value with ``=?charset?B|Q?...?=`` words.

    Returns:
        The text, and whether some word was undecodable (replacement characters used).
    """
    if "=?" not in value:
        return value, False
    out: list[str] = []
    position = 0
    bad = False
    previous_was_word = False
    for match in _ENCODED_WORD.finditer(value):
        between = value[position : match.start()]
        if not (
            previous_was_word and not between.strip()
        ):  # RFC 2047 6.2: space between words goes
            out.append(between)
        charset, encoding, data = match.groups()
        charset = charset.split("*", 1)[0].lower()  # RFC 2231 language suffix
        if encoding in "bB":
            cleaned = re.sub(r"[^A-Za-z0-9+/]", "", data)
            bad = bad or cleaned != data.rstrip("=")
            if len(cleaned) % 4 == 1:  # a lone trailing sextet carries no whole byte
                cleaned = cleaned[:-1]
            payload = base64.b64decode(cleaned + "=" * (-len(cleaned) % 4))
        else:
            payload = binascii.a2b_qp(data.encode("ascii", "replace"), header=True)
        text, warning = decode_bytes(payload, charset)
        bad = bad or warning is not None or "\ufffd" in text
        out.append(text)
        position = match.end()
        previous_was_word = True
    out.append(value[position:])
    return clean_text("".join(out)), bad


def header_str(part: Message, name: str) -> str:
    """A nested part's header, decoded (8-bit text and encoded words); empty if unreadable."""
    try:
        value = part.get(name)
        if value is None:
            return ""
        text = raw_header_value(name, str(value), ParseWarnings())
        return decode_header_words(text)[0]
    except Exception:  # an undecodable header in a nested part
        return ""


def parse_addresses(value: str, what: str, warnings: ParseWarnings) -> list[Address]:
    """The addresses of an address-list header (``To``, ``Cc``...), at most ``MAX_RECIPIENTS``.

    Args:
        value: the raw header value (encoded words intact; repeated headers on their own lines).
        what: the header's name, for warnings.
        warnings: where unreadable lists and cut lists are reported.

    Returns:
        The usable addresses in order; entries without an ``@`` are skipped.
    """
    found: list[Address] = []
    if not value:
        return found
    try:
        pairs = getaddresses([value.replace("\n", ", ")])
    except Exception:  # getaddresses rejects some hostile inputs
        warnings.add(f"{what}: unreadable address list")
        return found
    for name, address in pairs:
        if len(found) >= MAX_RECIPIENTS:
            warnings.add(f"{what}: more than {MAX_RECIPIENTS} addresses: the rest not kept")
            break
        if address and "@" in address:
            display = decode_header_words(name)[0] if "=?" in name else name
            try:
                found.append(Address(address=address[:320], name=one_line(display)[:200]))
            except ValueError:
                continue
    return found


def single_from_address(raw_from: str) -> str | None:
    """The address of a From that is one header holding exactly one well-formed address, else None.

    Read with the standard library's RFC 5322 parser (``email.headerregistry``) on the raw
    value, encoded words intact: a display name may hold commas (``"Chen, Maya"``, or one
    inside an encoded word) that the decoded value no longer tells from an address list.
    Refused: several From headers, several addresses, a group, anything the parser
    repaired (a defect), a local part without a domain, a domain that is not a hostname.
    What authentication vouches for (``mail/authentication.py``) is this address only.

    Args:
        raw_from: the raw From value(s), repeated headers joined by newlines.

    Returns:
        ``local@domain`` with the domain lowercased, or None.
    """
    from email.headerregistry import HeaderRegistry

    value = raw_from.strip()
    if not value or "\n" in value or len(value) > 2000:
        return None
    try:
        parsed = HeaderRegistry()("from", value)
    except Exception:  # the parser raises on some hostile inputs: not one clean address
        return None
    groups = parsed.groups  # type: ignore[attr-defined]
    if parsed.defects or len(groups) != 1 or groups[0].display_name is not None:
        return None
    addresses = groups[0].addresses
    if len(addresses) != 1:
        return None
    local, domain = addresses[0].username, addresses[0].domain.lower()
    if not _LOCAL_PART.fullmatch(local) or not _DOMAIN.fullmatch(domain):
        return None
    return f"{local}@{domain}"


def parse_sender(headers: Mapping[str, str], message_id: str, warnings: ParseWarnings) -> Address:
    """The sender: ``From``, else ``Sender`` or ``Return-Path``, else a bare local part qualified.

    Raises:
        EmailParseError: no sender address can be found.
    """
    raw_from = headers.get("from", "")
    found = parse_addresses(raw_from.split("\n")[0], "From", warnings)
    if found:
        return found[0]
    for name in ("sender", "return-path"):
        fallback = parse_addresses(headers.get(name, "").split("\n")[0], name, warnings)
        if fallback:
            warnings.add(f"no usable From address: sender taken from {name.title()}")
            return fallback[0]
    bare = _BARE_LOCAL_PART.fullmatch(raw_from.strip())
    if bare:  # "MAILER-DAEMON (Mail Delivery System)": a local part without its domain
        local = bare.group("bracketed") or bare.group("local")
        name = (bare.group("name") or bare.group("comment") or "").strip().strip("\"'")
        domain = message_id.rpartition("@")[2] if "@" in message_id else ""
        domain = re.sub(r"[^A-Za-z0-9.-]", "", domain).strip(".") or "unknown.invalid"
        warnings.add(f"From has no domain ({raw_from.strip()[:80]!r}): qualified with {domain}")
        return Address(address=f"{local}@{domain}", name=name[:200])
    raise EmailParseError(
        f"no usable sender: From is {raw_from[:200]!r} and there is no Sender or Return-Path address"
    )


def received_time(
    headers: Mapping[str, str], internal_date_ms: int | None, warnings: ParseWarnings
) -> datetime:
    """When the message arrived: Gmail's ``internalDate``, else ``Date``, else ``Received``."""
    if internal_date_ms is not None:
        try:
            return datetime.fromtimestamp(int(internal_date_ms) / 1000, UTC)
        except (ValueError, OverflowError, OSError):
            warnings.add(f"internalDate {internal_date_ms!r} out of range")
    date = parse_date(headers.get("date", "").split("\n")[0])
    if date is not None:
        return date
    for received in headers.get("received", "").split("\n"):
        date = parse_date(received.rpartition(";")[2])
        if date is not None:
            warnings.add("no readable Date header: time taken from Received")
            return date
    warnings.add("no readable Date header")
    return EPOCH


def parse_date(value: str) -> datetime | None:
    """An RFC 5322 date in UTC (naive dates taken as UTC), or None if unreadable."""
    if not value.strip():
        return None
    try:
        parsed = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    try:
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def resolve_mailbox(explicit: str | None, headers: Mapping[str, str], to: list[Address]) -> str:
    """The receiving mailbox: ``explicit``, else ``Delivered-To``/``X-Original-To``, else the first ``To``."""
    if explicit:
        return explicit
    for name in ("delivered-to", "x-original-to"):
        for line in headers.get(name, "").split("\n"):
            pairs = getaddresses([line]) if line else []
            for _, address in pairs:
                if "@" in address:
                    try:
                        return Address(address=address).address
                    except ValueError:
                        continue
    return to[0].address if to else "unknown@localhost"


def derive_thread_id(references: list[str], in_reply_to: str | None, message_id: str) -> str:
    """The conversation's first message: References' first id, else In-Reply-To, else itself."""
    if references:
        return references[0]
    return in_reply_to or message_id


__all__ = [
    "EPOCH",
    "HEADERS_LIMIT",
    "HEADER_VALUE_LIMIT",
    "MESSAGE_IDS",
    "TRACE_HEADER",
    "ParseWarnings",
    "decode_header_words",
    "derive_thread_id",
    "first_id",
    "header_map",
    "header_str",
    "one_line",
    "parse_addresses",
    "parse_date",
    "parse_sender",
    "raw_header_value",
    "received_time",
    "resolve_mailbox",
    "single_from_address",
    "strip_angle",
    "synthetic_id",
]

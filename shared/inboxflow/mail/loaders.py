"""Emails from files, JSON objects and Gmail's raw messages; the bundled sample inbox.

``.eml`` bytes and Gmail's ``format=raw`` messages go through the MIME parser
(:func:`inboxflow.mail.mime.parse_message`, imported on first use: a node that
only reads an ``Email`` from state never pays for it); JSON objects are read
directly (:func:`email_from_json`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import formataddr, parseaddr
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .forwarded import writer_of
from .headers import (
    EPOCH,
    MESSAGE_IDS,
    ParseWarnings,
    derive_thread_id,
    first_id,
    parse_addresses,
    parse_date,
    resolve_mailbox,
    single_from_address,
    strip_angle,
    synthetic_id,
)
from .html_text import html_to_text
from .model import Address, Email, EmailParseError

if TYPE_CHECKING:
    from ..ports.gmail_reader import RawMessage


def parse_raw(message: RawMessage, mailbox: str) -> Email:
    """Parse a message fetched from Gmail (``format=raw``) into an ``Email`` addressed to ``mailbox``.

    Gmail's ids, labels and ``internalDate`` (the received time) come with it.

    Raises:
        EmailParseError: the bytes are not an email.
    """
    from .mime import parse_message

    return parse_message(
        message.raw,
        mailbox=mailbox,
        gmail_id=message.gmail_id,
        thread_id=message.thread_id,
        label_ids=tuple(message.label_ids),
        internal_date_ms=message.internal_date_ms,
    )


def email_from_eml(raw: bytes, mailbox: str | None = None) -> Email:
    """Parse an RFC 5322 message (an ``.eml`` file); :func:`~.mime.parse_message` without Gmail metadata.

    Args:
        raw: the message bytes.
        mailbox: the receiving mailbox; defaults to ``Delivered-To`` or the first recipient.

    Raises:
        EmailParseError: the bytes are not an email (no headers, no sender).
    """
    from .mime import parse_message

    return parse_message(raw, mailbox=mailbox or "")


def email_from_json(data: Mapping[str, Any], mailbox: str | None = None) -> Email:
    """Build an email from a JSON object.

    Accepts the ``Email`` shape itself, and a friendlier one: ``from`` as
    ``"Name <address>"`` (or ``{address, name}``), ``to``/``cc`` as such
    strings or a comma-separated string, ``body`` for ``body_text``, ``date``
    for ``received_at`` (ISO 8601, RFC 2822 or epoch seconds).

    Raises:
        EmailParseError: the object cannot be read as an email.
    """
    if not isinstance(data, Mapping):
        raise EmailParseError(f"expected a JSON object, got {type(data).__name__}")
    headers = {str(k).lower(): str(v) for k, v in (data.get("headers") or {}).items()}
    sender_raw = data.get("sender", data.get("from"))
    sender = _coerce_address(sender_raw)
    if sender is None:
        raise EmailParseError(f"no usable sender ('from') in {sender_raw!r}")
    to = _coerce_addresses(data.get("to"))
    cc = _coerce_addresses(data.get("cc"))
    body_text = data.get("body_text", data.get("body"))
    body_html = data.get("body_html", data.get("html"))
    if body_text is None and body_html:
        body_text = html_to_text(str(body_html))
    if body_text is None:
        raise EmailParseError("no body ('body_text', 'body' or 'body_html')")
    subject = str(data.get("subject", headers.get("subject", "")))
    message_id = strip_angle(str(data.get("message_id") or headers.get("message-id") or ""))
    if not message_id:
        message_id = synthetic_id(json.dumps(data, sort_keys=True, default=str).encode())
    headers.setdefault("from", sender.formatted())
    headers.setdefault("to", ", ".join(a.formatted() for a in to))
    headers.setdefault("subject", subject)
    headers.setdefault("message-id", f"<{message_id}>")
    if any(str(name).lower() == "from" for name in data.get("headers") or {}):
        raw_from = headers["from"]
    elif isinstance(sender_raw, str):
        raw_from = sender_raw
    else:
        raw_from = formataddr((sender.name, sender.address))
    from_address = single_from_address(str(raw_from))
    if from_address is not None and from_address.lower() != sender.address.lower():
        from_address = None
    received = data.get("received_at", data.get("date", headers.get("date")))
    fields = {
        "message_id": message_id,
        "thread_id": str(data.get("thread_id") or _json_thread_id(headers, message_id)),
        "mailbox": mailbox or data.get("mailbox") or resolve_mailbox(None, headers, to),
        "sender": sender,
        "to": to,
        "cc": cc,
        "subject": subject,
        "body_text": str(body_text),
        "body_html": str(body_html) if body_html else None,
        "headers": headers,
        "received_at": _coerce_datetime(received),
        "attachments": data.get("attachments") or [],
        "from_address": from_address,
    }
    try:
        email = Email.model_validate(fields)
    except ValidationError as exc:
        raise EmailParseError(f"invalid email JSON: {exc.errors()[0]['msg']}") from exc
    email.writer = writer_of(email)
    return email


def load_email_file(path: str | Path, mailbox: str | None = None) -> Email:
    """Load an ``.eml`` or ``.json`` email file.

    Raises:
        EmailParseError: unknown extension, unreadable JSON, or not an email.
    """
    path = Path(path)
    raw = path.read_bytes()
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            raise EmailParseError(f"{path.name}: not valid JSON: {exc}") from exc
        return email_from_json(data, mailbox)
    if suffix in (".eml", ".msg", ".txt", ""):
        try:
            return email_from_eml(raw, mailbox)
        except EmailParseError as exc:
            raise EmailParseError(f"{path.name}: {exc}") from exc
    raise EmailParseError(f"{path.name}: unsupported file type {suffix!r} (use .eml or .json)")


def sample_inbox_dir() -> Path:
    """The bundled sample inbox, the pipeline's (``inboxflow/graphs/pipeline/samples/inbox``)."""
    return Path(str(resources.files("inboxflow") / "graphs" / "pipeline" / "samples" / "inbox"))


def sample_inbox_paths() -> list[Path]:
    """The bundled sample emails, in file-name order."""
    return sorted(p for p in sample_inbox_dir().iterdir() if p.suffix in (".eml", ".json"))


# --- JSON coercion --------------------------------------------------------------------------


def _coerce_address(value: Any) -> Address | None:
    if isinstance(value, Mapping):
        try:
            return Address.model_validate(value)
        except ValidationError:
            return None
    if isinstance(value, str):
        name, addr = parseaddr(value)
        if addr and "@" in addr:
            try:
                return Address(address=addr, name=name)
            except ValidationError:
                return None
    return None


def _coerce_addresses(value: Any) -> list[Address]:
    if value is None:
        return []
    if isinstance(value, str):
        return parse_addresses(value, "address list", ParseWarnings())
    if isinstance(value, list):
        found = [_coerce_address(item) for item in value]
        return [a for a in found if a is not None]
    if isinstance(value, Mapping):
        single = _coerce_address(value)
        return [single] if single else []
    return []


def _coerce_datetime(value: Any) -> datetime:
    if value is None or value == "":
        return EPOCH
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return parse_date(text) or EPOCH
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _json_thread_id(headers: Mapping[str, str], message_id: str) -> str:
    references = MESSAGE_IDS.findall(headers.get("references", ""))
    return derive_thread_id(references, first_id(headers.get("in-reply-to", "")), message_id)


__all__ = [
    "email_from_eml",
    "email_from_json",
    "load_email_file",
    "parse_raw",
    "sample_inbox_dir",
    "sample_inbox_paths",
]

"""RFC 5322 / MIME bytes -> :class:`~inboxflow.mail.Email`, best effort, bounded in size.

The tree is walked by :class:`~.walk.MimeWalk` (what counts as body, attachment,
forward, invitation); headers, charsets and calendar parts have their own
modules. Decoding never raises: unknown or wrong charsets decode with
replacement characters, broken structure is recorded in
``Email.parse_warnings``. The only error is
:class:`~inboxflow.mail.EmailParseError`, for bytes that are not an email or
have no usable sender. Every text field is capped so the email fits in a trace
checkpoint (``runtime.MAX_STATE_BYTES``) whatever arrives.
"""

from __future__ import annotations

import email
import email.policy
import json
import re
from collections.abc import Sequence
from email.message import Message
from typing import Any

from .charsets import clean_text
from .forwarded import writer_of
from .headers import (
    MESSAGE_IDS,
    TRACE_HEADER,
    ParseWarnings,
    derive_thread_id,
    first_id,
    header_map,
    one_line,
    parse_addresses,
    parse_sender,
    received_time,
    resolve_mailbox,
    single_from_address,
    strip_angle,
    synthetic_id,
)
from .model import Email, EmailParseError
from .walk import MimeWalk, describe_defect

BODY_TEXT_LIMIT = 200_000
"""Bytes (as stored: UTF-8 JSON) of ``body_text`` kept in state; the rest is cut with a marker."""

BODY_HTML_LIMIT = 150_000
"""Bytes of ``body_html`` kept in state (the text is what the graphs read)."""

EMAIL_STATE_LIMIT = 600_000
"""Bytes of the whole serialised email; leaves room for the rest of a state under 900 KB."""

TRUNCATION_MARKER = (
    "\n\n[... message truncated for storage: {shown} of {total} characters kept; "
    "the full message stays in the mailbox ...]"
)


def parse_message(
    raw: bytes,
    *,
    mailbox: str,
    gmail_id: str | None = None,
    thread_id: str | None = None,
    label_ids: Sequence[str] = (),
    internal_date_ms: int | None = None,
) -> Email:
    """Parse an RFC 5322 message (Gmail ``format=raw`` bytes, an ``.eml`` file) into an Email.

    Args:
        raw: the message bytes.
        mailbox: the receiving mailbox; empty means ``Delivered-To``, ``X-Original-To``
            or the first recipient.
        gmail_id: Gmail's message id (where the full message and attachments stay).
        thread_id: Gmail's thread id; default: the first ``References`` id, else
            ``In-Reply-To``, else the message's own id.
        label_ids: Gmail label ids at ingestion.
        internal_date_ms: Gmail's ``internalDate`` (ms since the epoch); it is the
            received time when given, else the ``Date`` header is.

    Returns:
        The email; anything repaired or dropped on the way is listed in
        ``parse_warnings``.

    Raises:
        EmailParseError: the bytes are not an email (empty, binary, no header) or
            no sender address can be found (``From``, ``Sender``, ``Return-Path``).
    """
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise EmailParseError(f"expected bytes, got {type(raw).__name__}")
    raw = bytes(raw)
    if not raw.strip():
        raise EmailParseError("empty message")
    if b"\x00" in raw[:4096]:
        raise EmailParseError("binary data, not an RFC 5322 message")
    try:
        return _parse(raw, mailbox, gmail_id, thread_id, label_ids, internal_date_ms)
    except EmailParseError:
        raise
    except RecursionError as exc:
        raise EmailParseError("message nested too deeply to parse") from exc
    except Exception as exc:  # a parser bug must not crash ingestion; the reason is kept
        raise EmailParseError(f"unreadable message ({type(exc).__name__}: {exc})"[:500]) from exc


def _parse(
    raw: bytes,
    mailbox: str,
    gmail_id: str | None,
    thread_id: str | None,
    label_ids: Sequence[str],
    internal_date_ms: int | None,
) -> Email:
    # compat32: headers stay raw strings, decoded here once. The header-registry policy
    # (email.policy.default) re-parses Content-Type on every access: ~10x slower overall.
    msg: Message = email.message_from_bytes(raw, policy=email.policy.compat32)
    warnings = ParseWarnings()
    if msg.get_content_maintype() == "multipart" and not msg.is_multipart():
        msg = _repair_boundary(raw, msg, warnings)
    headers, raw_headers = header_map(msg, warnings)
    if not any(name in headers for name in ("from", "to", "subject", "message-id", "date")):
        raise EmailParseError("not an email: no From, To, Subject, Message-ID or Date header")
    for defect in msg.defects:
        warnings.add(f"MIME: {describe_defect(defect)}")

    message_id = first_id(headers.get("message-id", "")) or strip_angle(
        headers.get("message-id", "")
    )
    if not message_id:
        message_id = synthetic_id(raw)
        warnings.add("no Message-ID header: generated one from the content")
    sender = parse_sender(raw_headers, message_id, warnings)
    from_address = single_from_address(raw_headers.get("from", ""))
    if from_address is not None and from_address.lower() != sender.address.lower():
        from_address = None  # the two parsers disagree: vouch for neither
    to = parse_addresses(raw_headers.get("to", ""), "To", warnings)
    cc = parse_addresses(raw_headers.get("cc", ""), "Cc", warnings)

    walk = MimeWalk(warnings=warnings)
    if msg.get_content_maintype() in ("text", "multipart") and not msg.is_multipart():
        if msg.get_content_maintype() == "multipart":
            warnings.add("multipart message without a usable boundary: read as plain text")
        walk.visit_leaf(msg, path="", want_text=True, want_html=True, force_text=True)
    else:
        walk.visit(msg, path="", depth=0, want_text=True, want_html=True)
    body_text = "\n\n".join(t for t in (s.strip("\n") for s in walk.texts) if t.strip())
    body_text = clean_text(body_text).strip()
    body_html = "\n".join(walk.htmls) if walk.htmls else None

    body_chars = len(body_text)
    body_text, body_truncated = _cap(body_text, BODY_TEXT_LIMIT)
    body_truncated = body_truncated or walk.html_cut
    if body_truncated:
        warnings.add(f"body text of {body_chars} characters truncated for storage")
    if body_html is not None:
        html_chars = len(body_html)
        body_html, html_truncated = _cap(clean_text(body_html), BODY_HTML_LIMIT)
        if html_truncated:
            warnings.add(f"HTML body of {html_chars} characters truncated for storage")

    received_at = received_time(headers, internal_date_ms, warnings)
    in_reply_to = first_id(headers.get("in-reply-to", ""))
    references = MESSAGE_IDS.findall(headers.get("references", ""))[:100]
    resolved_mailbox = resolve_mailbox(mailbox, headers, to)
    fields: dict[str, Any] = {
        "message_id": message_id,
        "thread_id": thread_id or derive_thread_id(references, in_reply_to, message_id),
        "mailbox": resolved_mailbox,
        "sender": sender,
        "to": to,
        "cc": cc,
        "subject": one_line(headers.get("subject", ""))[:1000],
        "body_text": body_text,
        "body_html": body_html,
        "headers": headers,
        "received_at": received_at,
        "attachments": walk.attachments,
        "gmail_id": gmail_id,
        "label_ids": [str(label) for label in label_ids][:100],
        "in_reply_to": in_reply_to,
        "references": references,
        "body_chars": body_chars,
        "body_truncated": body_truncated,
        "calendar": walk.calendar,
        "forwarded": walk.forwarded,
        "parse_warnings": warnings.items,
        "from_address": from_address,
    }
    result = Email.model_validate(fields)
    result.writer = writer_of(result)
    return _fit(result)


def _repair_boundary(raw: bytes, msg: Message, warnings: ParseWarnings) -> Message:
    """A multipart without its boundary parameter: take the first ``--delimiter`` line of the body."""
    blank = re.search(rb"\r?\n\r?\n", raw)
    if blank is None:
        return msg
    head, body = raw[: blank.start()], raw[blank.start() :]
    found = re.search(rb"^--([!-~][ -~]{0,69}?)[ \t]*\r?$", body[:65536], re.MULTILINE)
    if found is None or found.group(1).endswith(b"--"):
        return msg
    boundary = found.group(1).decode("ascii").replace('"', "")
    header = f'Content-Type: multipart/{msg.get_content_subtype()}; boundary="{boundary}"'.encode()
    fixed_head, count = re.subn(
        rb"(?im)^content-type:[^\n]*(?:\n[ \t][^\n]*)*", lambda _: header, head, count=1
    )
    if not count:
        return msg
    repaired = email.message_from_bytes(fixed_head + body, policy=email.policy.compat32)
    if not repaired.is_multipart():
        return msg
    warnings.add(
        f"multipart without a boundary parameter: boundary {boundary!r} taken from the body"
    )
    return repaired


def _fit(result: Email) -> Email:
    """Last guard: the serialised email stays under EMAIL_STATE_LIMIT whatever its shape.

    The caps per field normally suffice; hostile combinations (huge CJK headers,
    hundreds of long recipients) lose, in this order, the HTML body and the
    non-essential headers, then list entries beyond the first 50, then body text.
    """
    if _json_size(result.model_dump(mode="json")) <= EMAIL_STATE_LIMIT:
        return result
    warnings = [*result.parse_warnings, "email too large for state: HTML body and headers dropped"]
    essential = {k: v[:2000] for k, v in result.headers.items() if k in ESSENTIAL_HEADERS}
    result = result.model_copy(
        update={"body_html": None, "headers": essential, "parse_warnings": warnings}
    )
    if _json_size(result.model_dump(mode="json")) <= EMAIL_STATE_LIMIT:
        return result
    result = result.model_copy(
        update={
            "to": result.to[:50],
            "cc": result.cc[:50],
            "attachments": result.attachments[:50],
            "forwarded": result.forwarded[:5],
            "parse_warnings": [*warnings, "recipients and attachments beyond 50 dropped"],
        }
    )
    size = _json_size(result.model_dump(mode="json"))
    if size <= EMAIL_STATE_LIMIT:
        return result
    text_budget = max(10_000, BODY_TEXT_LIMIT - (size - EMAIL_STATE_LIMIT))
    text = result.body_text
    if result.body_truncated:  # cut again from the text before the first marker
        text = text[: text.rfind("\n\n[... message truncated for storage:")]
    body_text, _ = _cap(text, text_budget, total=result.body_chars)
    return result.model_copy(update={"body_text": body_text, "body_truncated": True})


ESSENTIAL_HEADERS = frozenset(
    {
        "from",
        "to",
        "cc",
        "subject",
        "date",
        "message-id",
        "in-reply-to",
        "references",
        "reply-to",
        "sender",
        "return-path",
        "auto-submitted",
        "authentication-results",
        "precedence",
        "list-id",
        "list-unsubscribe",
        "content-type",
        TRACE_HEADER.lower(),
        "x-auto-response-suppress",
        "x-autoreply",
        "x-autorespond",
    }
)


def _json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def _cap(text: str, limit: int, total: int | None = None) -> tuple[str, bool]:
    """``text`` cut (with the truncation marker) so its stored JSON form is at most ``limit`` bytes.

    ``total`` is the length the marker reports (default: ``len(text)``).
    """
    if len(text) * 6 + 2 <= limit or _json_size(text) <= limit:
        return text, False
    total = len(text) if total is None else total
    budget = limit - 300  # room for the marker
    keep = min(total, budget)
    while keep > 0 and _json_size(text[:keep]) > budget:
        keep = int(keep * max(0.5, budget / _json_size(text[:keep])) * 0.98)
    kept = text[:keep]
    return kept + TRUNCATION_MARKER.format(shown=len(kept), total=total), True


__all__ = [
    "BODY_HTML_LIMIT",
    "BODY_TEXT_LIMIT",
    "EMAIL_STATE_LIMIT",
    "ESSENTIAL_HEADERS",
    "TRUNCATION_MARKER",
    "parse_message",
]

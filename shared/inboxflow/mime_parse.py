"""RFC 5322 / MIME bytes -> :class:`~inboxflow.mail.Email`, best effort, bounded in size.

The walk over the MIME tree follows what mail clients display:

- ``multipart/alternative``: the ``text/plain`` child gives ``body_text``
  (when it has text), the richest HTML child gives ``body_html`` (and the text
  when there is no plain part); ``text/calendar`` children become the
  invitation metadata.
- ``multipart/related``: the root part is the body, the rest are inline
  resources (attachment metadata with ``inline=True`` and their Content-ID).
- ``multipart/mixed`` (and unknown multiparts): inline text parts are body
  text in order, everything else is attachment metadata.
- ``multipart/signed``, ``multipart/report``: the first part(s) are the body;
  signatures and machine-readable reports are attachment metadata.
- ``message/rfc822``: a forwarded message; its text is added to the body
  between marker lines, its headers summarised in ``Email.forwarded``.

Decoding never raises: unknown or wrong charsets decode with replacement
characters, broken structure is recorded in ``Email.parse_warnings``. The
only error is :class:`~inboxflow.mail.EmailParseError`, for bytes that are not
an email or have no usable sender. Every text field is capped so the email
fits in a trace checkpoint (``runtime.MAX_STATE_BYTES``) whatever arrives.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import email
import email.policy
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import Message
from email.utils import getaddresses, parsedate_to_datetime
from typing import Any

from .mail import (
    Address,
    Attachment,
    CalendarInvite,
    Email,
    EmailParseError,
    ForwardedMessage,
)

BODY_TEXT_LIMIT = 200_000
"""Bytes (as stored: UTF-8 JSON) of ``body_text`` kept in state; the rest is cut with a marker."""

BODY_HTML_LIMIT = 150_000
"""Bytes of ``body_html`` kept in state (the text is what the graphs read)."""

HEADER_VALUE_LIMIT = 16_000
"""Characters kept of one header value."""

HEADERS_LIMIT = 100_000
"""Characters of all header values together; later headers are dropped with a warning."""

EMAIL_STATE_LIMIT = 600_000
"""Bytes of the whole serialised email; leaves room for the rest of a state under 900 KB."""

MAX_RECIPIENTS = 300
MAX_ATTACHMENTS = 200
MAX_PARTS = 1_000
MAX_DEPTH = 12
MAX_FORWARDED = 20
MAX_WARNINGS = 30

FORWARD_START = "---------- Forwarded message ----------"
FORWARD_END = "---------- End of forwarded message ----------"

HTML_CUT_MARKER = (
    "\n\n[... HTML body of {total} characters: text shown from the first {shown} only; "
    "the full message stays in the mailbox ...]"
)
TRUNCATION_MARKER = (
    "\n\n[... message truncated for storage: {shown} of {total} characters kept; "
    "the full message stays in the mailbox ...]"
)

_CHARSET_ALIASES = {
    # WHATWG: these labels mean windows-1252 in practice (0x80-0x9F are smart quotes, not C1).
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "ansi_x3.4-1968": "cp1252",
    # supersets actually used by the mailers that send these labels
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-cn": "gb18030",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "big5": "big5hkscs",
    "iso-2022-jp": "iso2022_jp_2",
    "windows-874": "cp874",
    "tis-620": "cp874",
}
_WESTERN_SINGLE_BYTE = frozenset({"cp1252", "iso8859-15", "cp1250"})
_REFUSED_CODECS = frozenset(
    {"unicode_escape", "raw_unicode_escape", "idna", "punycode", "undefined", "mbcs", "oem"}
)
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ESCAPED_BYTES = re.compile(r"[\udc80-\udcff]+")
_SURROGATES = re.compile(r"[\ud800-\udfff]")
_BARE_LOCAL_PART = re.compile(
    r"(?P<name>[^<>]*?)\s*<(?P<bracketed>[\w.+-]{1,64})>|(?P<local>[\w.+-]{1,64})(?:\s*\((?P<comment>[^()]*)\))?"
)
_ENCODED_WORD = re.compile(r"=\?([^?\s]{1,80})\?([bBqQ])\?([^?\s]*)\?=")
_MESSAGE_IDS = re.compile(r"<([^<>\s]{1,500})>")


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
    warnings = _Warnings()
    if msg.get_content_maintype() == "multipart" and not msg.is_multipart():
        msg = _repair_boundary(raw, msg, warnings)
    headers, raw_headers = _header_map(msg, warnings)
    if not any(name in headers for name in ("from", "to", "subject", "message-id", "date")):
        raise EmailParseError("not an email: no From, To, Subject, Message-ID or Date header")
    for defect in msg.defects:
        warnings.add(f"MIME: {_describe_defect(defect)}")

    message_id = _first_id(headers.get("message-id", "")) or _strip_angle(
        headers.get("message-id", "")
    )
    if not message_id:
        message_id = f"generated-{hashlib.sha256(raw).hexdigest()[:24]}@inboxflow"
        warnings.add("no Message-ID header: generated one from the content")
    sender = _sender(raw_headers, message_id, warnings)
    to = _addresses(raw_headers.get("to", ""), "To", warnings)
    cc = _addresses(raw_headers.get("cc", ""), "Cc", warnings)

    walk = _Walk(warnings=warnings)
    if msg.get_content_maintype() in ("text", "multipart") and not msg.is_multipart():
        if msg.get_content_maintype() == "multipart":
            warnings.add("multipart message without a usable boundary: read as plain text")
        walk.visit_leaf(msg, path="", want_text=True, want_html=True, force_text=True)
    else:
        walk.visit(msg, path="", depth=0, want_text=True, want_html=True)
    body_text = "\n\n".join(t for t in (s.strip("\n") for s in walk.texts) if t.strip())
    body_text = _clean_text(body_text).strip()
    body_html = "\n".join(walk.htmls) if walk.htmls else None

    body_chars = len(body_text)
    body_text, body_truncated = _cap(body_text, BODY_TEXT_LIMIT)
    body_truncated = body_truncated or walk.html_cut
    if body_truncated:
        warnings.add(f"body text of {body_chars} characters truncated for storage")
    if body_html is not None:
        html_chars = len(body_html)
        body_html, html_truncated = _cap(_clean_text(body_html), BODY_HTML_LIMIT)
        if html_truncated:
            warnings.add(f"HTML body of {html_chars} characters truncated for storage")

    received_at = _received_at(headers, internal_date_ms, warnings)
    in_reply_to = _first_id(headers.get("in-reply-to", ""))
    references = _MESSAGE_IDS.findall(headers.get("references", ""))[:100]
    resolved_mailbox = _mailbox(mailbox, headers, to)
    fields: dict[str, Any] = {
        "message_id": message_id,
        "thread_id": thread_id or _thread_id(references, in_reply_to, message_id),
        "mailbox": resolved_mailbox,
        "sender": sender,
        "to": to,
        "cc": cc,
        "subject": _one_line(headers.get("subject", ""))[:1000],
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
    }
    result = Email.model_validate(fields)
    return _fit(result)


def _repair_boundary(raw: bytes, msg: Message, warnings: _Warnings) -> Message:
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
    essential = {k: v[:2000] for k, v in result.headers.items() if k in _ESSENTIAL_HEADERS}
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


_ESSENTIAL_HEADERS = frozenset(
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
        "precedence",
        "list-id",
        "list-unsubscribe",
        "content-type",
        "x-inboxflow-trace",
        "x-auto-response-suppress",
        "x-autoreply",
        "x-autorespond",
    }
)


# --- the MIME walk -------------------------------------------------------------------------


class _Warnings:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        text = _clean_text(text)
        if text in self.items:
            return
        if len(self.items) < MAX_WARNINGS:
            self.items.append(text[:300])
        elif len(self.items) == MAX_WARNINGS:
            self.items.append("more warnings not recorded")


@dataclass
class _Walk:
    warnings: _Warnings
    texts: list[str] = field(default_factory=list)
    htmls: list[str] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    forwarded: list[ForwardedMessage] = field(default_factory=list)
    calendar: CalendarInvite | None = None
    parts_seen: int = 0
    html_cut: bool = False

    def visit(self, part: Message, path: str, depth: int, want_text: bool, want_html: bool) -> None:
        self.parts_seen += 1
        if self.parts_seen > MAX_PARTS:
            self.warnings.add(f"more than {MAX_PARTS} MIME parts: the rest ignored")
            return
        if depth > MAX_DEPTH:
            self.warnings.add(f"MIME parts nested deeper than {MAX_DEPTH}: ignored")
            return
        for defect in part.defects if depth else ():
            self.warnings.add(f"MIME part {path or 'root'}: {_describe_defect(defect)}")
        if part.get_content_type() == "message/rfc822":  # is_multipart() is true for it too
            self._forwarded(part, path, depth, want_text)
        elif part.is_multipart():
            self._multipart(part, path, depth, want_text, want_html)
        else:
            self.visit_leaf(part, path, want_text, want_html)

    def _multipart(
        self, part: Message, path: str, depth: int, want_text: bool, want_html: bool
    ) -> None:
        children = [c for c in part.get_payload() if isinstance(c, Message)]
        subtype = part.get_content_subtype()
        paths = [f"{path}.{i}" if path else str(i) for i in range(len(children))]
        if not children:
            self.warnings.add(f"empty multipart/{subtype} at part {path or 'root'}")
            preamble = part.preamble or ""
            if want_text and preamble.strip():
                self.texts.append(_clean_text(preamble))
            return
        if subtype == "alternative":
            self._alternative(children, paths, depth, want_text, want_html)
        elif subtype == "related":
            root = _related_root(part, children)
            for child, child_path in zip(children, paths, strict=True):
                if child is root:
                    self.visit(child, child_path, depth + 1, want_text, want_html)
                else:
                    self._attachment(child, child_path, inline=True)
        elif subtype in ("signed", "encrypted"):
            if subtype == "encrypted":
                self.warnings.add("encrypted message: its content cannot be read")
            first, rest = children[0], children[1:]
            if subtype == "signed":
                self.visit(first, paths[0], depth + 1, want_text, want_html)
            else:
                self._attachment(first, paths[0], inline=False)
            for child, child_path in zip(rest, paths[1:], strict=True):
                self._attachment(child, child_path, inline=False)
        elif subtype == "report":
            for index, (child, child_path) in enumerate(zip(children, paths, strict=True)):
                if index == 0 or child.get_content_type() == "text/plain":
                    self.visit(child, child_path, depth + 1, want_text, want_html)
                else:
                    self._attachment(child, child_path, inline=False)
        else:  # mixed, digest, parallel and unknown subtypes
            for child, child_path in zip(children, paths, strict=True):
                self.visit(child, child_path, depth + 1, want_text, want_html)

    def _alternative(
        self,
        children: list[Message],
        paths: list[str],
        depth: int,
        want_text: bool,
        want_html: bool,
    ) -> None:
        plain_index: int | None = None
        rich_index: int | None = None
        for index, child in enumerate(children):
            ctype = child.get_content_type()
            if ctype == "text/calendar":
                self._calendar(child, paths[index], want_text, as_attachment=False)
            elif ctype == "text/plain" and plain_index is None and _decode_text(child)[0].strip():
                plain_index = index
            elif ctype == "text/html" or child.is_multipart():
                rich_index = index  # the last rich alternative is the preferred one (RFC 2046)
        if plain_index is None and rich_index is None:
            for child, child_path in zip(children, paths, strict=True):
                if child.get_content_type() != "text/calendar":
                    self.visit(child, child_path, depth + 1, want_text, want_html)
                    return
            return
        if plain_index is not None:
            self.visit(children[plain_index], paths[plain_index], depth + 1, want_text, False)
        if rich_index is not None:
            text_from_rich = want_text and plain_index is None
            self.visit(
                children[rich_index], paths[rich_index], depth + 1, text_from_rich, want_html
            )

    def visit_leaf(
        self,
        part: Message,
        path: str,
        want_text: bool,
        want_html: bool,
        force_text: bool = False,
    ) -> None:
        ctype = part.get_content_type()
        if ctype == "text/calendar":
            self._calendar(part, path, want_text, as_attachment=_is_attachment(part))
            return
        if ctype in ("text/plain", "text/html") and (force_text or not _is_attachment(part)):
            text, warning = _decode_text(part)
            if warning:
                self.warnings.add(f"part {path or 'root'}: {warning}")
            if ctype == "text/html":
                if want_html:
                    self.htmls.append(text)
                if want_text:
                    from .html_text import HTML_INPUT_LIMIT, html_to_text

                    converted = html_to_text(text)
                    if len(text) > HTML_INPUT_LIMIT:
                        self.html_cut = True
                        self.warnings.add(
                            f"HTML body of {len(text)} characters: only the first "
                            f"{HTML_INPUT_LIMIT} converted to text"
                        )
                        converted += HTML_CUT_MARKER.format(total=len(text), shown=HTML_INPUT_LIMIT)
                    self.texts.append(converted)
            elif want_text:
                if _param(part, "format").lower() == "flowed":
                    text = unflow(text, delsp=_param(part, "delsp").lower() == "yes")
                self.texts.append(text)
            return
        if force_text:  # a broken multipart: whatever is there is the body
            text, _ = _decode_text(part)
            if want_text:
                self.texts.append(text)
            return
        self._attachment(part, path, inline=part.get_content_disposition() == "inline")

    def _attachment(self, part: Message, path: str, inline: bool) -> None:
        if len(self.attachments) >= MAX_ATTACHMENTS:
            self.warnings.add(f"more than {MAX_ATTACHMENTS} attachments: the rest not listed")
            return
        content_type = _clean_text(part.get_content_type())[:200]
        filename = _filename(part, self.warnings)
        if not filename and content_type == "message/rfc822":
            nested = _nested_message(part)
            subject = _one_line(str(nested.get("subject", ""))) if nested is not None else ""
            filename = f"{subject[:100] or 'message'}.eml"
        self.attachments.append(
            Attachment(
                filename=filename,
                content_type=content_type,
                size=_payload_size(part),
                content_id=_strip_angle(_header_str(part, "content-id")) or None,
                part_id=path or None,
                inline=inline,
            )
        )

    def _forwarded(self, part: Message, path: str, depth: int, want_text: bool) -> None:
        self._attachment(part, path, inline=False)
        nested = _nested_message(part)
        if nested is None:
            self.warnings.add(f"part {path}: forwarded message could not be read")
            return
        if len(self.forwarded) >= MAX_FORWARDED:
            self.warnings.add(f"more than {MAX_FORWARDED} forwarded messages: the rest skipped")
            return
        summary = {
            "sender": _one_line(_header_str(nested, "from"))[:500],
            "to": _one_line(_header_str(nested, "to"))[:500],
            "subject": _one_line(_header_str(nested, "subject"))[:500],
            "date": _one_line(_header_str(nested, "date"))[:100],
            "message_id": _strip_angle(_header_str(nested, "message-id"))[:500] or None,
            "part_id": path or None,
        }
        self.forwarded.append(ForwardedMessage.model_validate(summary))
        inner = _Walk(warnings=self.warnings, parts_seen=self.parts_seen)
        nested_path = f"{path}.0" if path else "0"
        if nested.is_multipart():
            inner.visit(nested, path, depth + 1, want_text=want_text, want_html=False)
        else:
            inner.visit_leaf(nested, nested_path, want_text=want_text, want_html=False)
        self.parts_seen = inner.parts_seen
        self.html_cut = self.html_cut or inner.html_cut
        self.attachments.extend(
            inner.attachments[: max(0, MAX_ATTACHMENTS - len(self.attachments))]
        )
        self.forwarded.extend(inner.forwarded)
        if self.calendar is None:
            self.calendar = inner.calendar
        if want_text:
            head = [
                f"{label}: {summary[key]}"
                for label, key in (("From", "sender"), ("Date", "date"), ("Subject", "subject"))
                if summary[key]
            ]
            if summary["to"]:
                head.append(f"To: {summary['to']}")
            inner_text = "\n\n".join(t.strip("\n") for t in inner.texts if t.strip())
            self.texts.append("\n".join([FORWARD_START, *head, "", inner_text, FORWARD_END]))

    def _calendar(self, part: Message, path: str, want_text: bool, as_attachment: bool) -> None:
        text, _ = _decode_text(part)
        invite = parse_calendar(text, method=_param(part, "method"))
        if invite is not None:
            if self.calendar is None:
                self.calendar = invite
                if want_text:
                    self.texts.append(invite.readable())
        else:
            self.warnings.add(f"part {path or 'root'}: calendar data without a readable event")
        if as_attachment:
            self._attachment(part, path, inline=False)


# --- parts ------------------------------------------------------------------------------


def _is_attachment(part: Message) -> bool:
    disposition = part.get_content_disposition()
    if disposition == "attachment":
        return True
    return disposition is None and bool(_safe_filename(part))


def _related_root(part: Message, children: list[Message]) -> Message:
    start = _strip_angle(_param(part, "start"))
    if start:
        for child in children:
            if _strip_angle(_header_str(child, "content-id")) == start:
                return child
    return children[0]


def _nested_message(part: Message) -> Message | None:
    payload = part.get_payload()
    if isinstance(payload, list) and payload and isinstance(payload[0], Message):
        return payload[0]
    if isinstance(payload, Message):
        return payload
    return None


def _payload_size(part: Message) -> int:
    try:
        if part.is_multipart() or part.get_content_type() == "message/rfc822":
            nested = _nested_message(part) if not part.is_multipart() else part
            return len(nested.as_bytes()) if nested is not None else 0
        payload = part.get_payload(decode=True)
    except Exception:  # sizes are informative; a broken part must not stop the parse
        return 0
    return len(payload) if isinstance(payload, bytes) else 0


def _safe_filename(part: Message) -> str:
    try:
        return part.get_filename() or ""
    except Exception:  # malformed RFC 2231 parameters
        return ""


def _filename(part: Message, warnings: _Warnings) -> str:
    try:
        name = part.get_filename() or ""
    except Exception as exc:
        warnings.add(f"unreadable attachment file name ({type(exc).__name__})")
        return ""
    name = _clean_text(str(name))
    if "\ufffd" in name:  # raw 8-bit in the parameter: read it from the undecoded header
        name = _filename_from_raw_headers(part) or name
    if "=?" in name:  # Outlook puts RFC 2047 words inside (RFC 2231-less) name= parameters
        name = decode_header_words(name)[0]
    return _one_line(name)[:255]


def _filename_from_raw_headers(part: Message) -> str:
    probe = Message()
    for key, value in part.raw_items():
        if key.lower() in ("content-type", "content-disposition"):
            probe[key] = _raw_header_value(key.lower(), str(value), _Warnings())
    try:
        return str(probe.get_filename() or "")
    except Exception:  # malformed parameters
        return ""


def _param(part: Message, name: str) -> str:
    try:
        value = part.get_param(name, header="content-type")
    except Exception:  # malformed parameters
        return ""
    if isinstance(value, tuple):
        value = email.utils.collapse_rfc2231_value(value)
    return str(value) if value else ""


def _decode_text(part: Message) -> tuple[str, str | None]:
    """The part's text and, if its charset was wrong or unknown, a warning."""
    try:
        payload = part.get_payload(decode=True)
    except Exception as exc:  # broken transfer encoding
        payload = None
        fallback = part.get_payload()
        if isinstance(fallback, str):
            return _clean_text(fallback), f"undecodable transfer encoding ({type(exc).__name__})"
    if not isinstance(payload, bytes):
        return "", None
    label = (part.get_content_charset() or "").strip().strip("\"'").lower()
    return decode_bytes(payload, label)


def decode_bytes(payload: bytes, label: str) -> tuple[str, str | None]:
    """Decode text bytes by a MIME charset label, repairing what real mail gets wrong.

    Args:
        payload: the bytes after the transfer encoding was undone.
        label: the declared charset (any case), or empty.

    Returns:
        The text (undecodable bytes as U+FFFD, line ends normalised, control
        characters removed) and a warning when the label was unknown or wrong.
    """
    warning: str | None = None
    codec = _codec(label) if label else None
    if label and codec is None:
        warning = f"unknown charset {label!r}: read as UTF-8"
    if codec is None or codec in _WESTERN_SINGLE_BYTE or codec.startswith("utf-8"):
        # undeclared, unknown, or a single-byte label on bytes that are really UTF-8
        try:
            return _clean_text(payload.decode("utf-8")), warning
        except UnicodeDecodeError:
            if codec is None and not label:
                codec = "cp1252"  # undeclared 8-bit text: the most common legacy charset
            elif codec is None or codec.startswith("utf-8"):
                return _clean_text(payload.decode("utf-8", "replace")), warning or (
                    f"text is not valid {label or 'UTF-8'}: undecodable bytes replaced"
                )
    try:
        text = payload.decode(codec, "strict")
    except UnicodeDecodeError:
        text = payload.decode(codec, "replace")
        warning = warning or f"text is not valid {label}: undecodable bytes replaced"
    except Exception:  # a codec that rejects its input outright
        text = payload.decode("utf-8", "replace")
        warning = warning or f"charset {label!r} could not decode the text: read as UTF-8"
    return _clean_text(text), warning


def _codec(label: str) -> str | None:
    name = _CHARSET_ALIASES.get(label, label)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    if (
        not getattr(info, "_is_text_encoding", True)
        or info.name.replace("-", "_") in _REFUSED_CODECS
    ):
        return None
    return _CHARSET_ALIASES.get(info.name, info.name)


def unflow(text: str, delsp: bool = False) -> str:
    """Undo RFC 3676 ``format=flowed``: soft-broken lines joined, space-stuffing removed.

    Args:
        text: the decoded ``text/plain`` body.
        delsp: the ``DelSp=yes`` parameter (the soft-break space is not content).

    Returns:
        The text with one line per paragraph (quote depth kept).
    """
    out: list[str] = []
    buffer: str | None = None
    buffer_depth = 0

    def flush() -> None:
        nonlocal buffer
        if buffer is not None:
            out.append((">" * buffer_depth + " " if buffer_depth else "") + buffer)
            buffer = None

    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]
        if content == "-- ":  # the signature separator is never a soft break
            flush()
            out.append((">" * depth + " " if depth else "") + content)
            continue
        flowed = content.endswith(" ")
        if flowed and delsp:
            content = content[:-1]
        if buffer is not None and depth == buffer_depth:
            buffer += content
        else:
            flush()
            buffer, buffer_depth = content, depth
        if not flowed:
            flush()
    flush()
    return "\n".join(out)


# --- calendar --------------------------------------------------------------------------


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
        return _one_line(unescaped)[:500]

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
        organizer=_one_line(organizer)[:500],
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


# --- headers ----------------------------------------------------------------------------


def _header_map(msg: Message, warnings: _Warnings) -> tuple[dict[str, str], dict[str, str]]:
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
        key = _clean_text(str(name)).strip().lower()[:200]
        if not key:
            continue
        raw_value = _raw_header_value(key, str(value), warnings)
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
        decoded.setdefault(key, []).append(_one_line(text).strip())
    if dropped:
        warnings.add(f"{dropped} headers dropped: headers over {HEADERS_LIMIT} characters")
    return (
        {key: "\n".join(values) for key, values in decoded.items()},
        {key: "\n".join(values) for key, values in raw.items()},
    )


def _raw_header_value(name: str, value: str, warnings: _Warnings) -> str:
    if _ESCAPED_BYTES.search(value):  # raw 8-bit bytes in the header (RFC 6532 or a legacy mailer)
        data = value.encode("utf-8", "surrogateescape")
        try:
            value = data.decode("utf-8")
        except UnicodeDecodeError:
            value = data.decode("cp1252", "replace")
            warnings.add(f"header {name}: undeclared 8-bit text read as Windows-1252")
    return _one_line(_clean_text(value)).strip()


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
    return _clean_text("".join(out)), bad


def _header_str(part: Message, name: str) -> str:
    """A nested part's header, decoded (8-bit text and encoded words)."""
    try:
        value = part.get(name)
        if value is None:
            return ""
        text = _raw_header_value(name, str(value), _Warnings())
        return decode_header_words(text)[0]
    except Exception:  # an undecodable header in a nested part
        return ""


def _addresses(value: str, what: str, warnings: _Warnings) -> list[Address]:
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
                found.append(Address(address=address[:320], name=_one_line(display)[:200]))
            except ValueError:
                continue
    return found


def _sender(headers: Mapping[str, str], message_id: str, warnings: _Warnings) -> Address:
    raw_from = headers.get("from", "")
    found = _addresses(raw_from.split("\n")[0], "From", warnings)
    if found:
        return found[0]
    for name in ("sender", "return-path"):
        fallback = _addresses(headers.get(name, "").split("\n")[0], name, warnings)
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


def _received_at(
    headers: Mapping[str, str], internal_date_ms: int | None, warnings: _Warnings
) -> datetime:
    if internal_date_ms is not None:
        try:
            return datetime.fromtimestamp(int(internal_date_ms) / 1000, UTC)
        except (ValueError, OverflowError, OSError):
            warnings.add(f"internalDate {internal_date_ms!r} out of range")
    date = _parse_date(headers.get("date", "").split("\n")[0])
    if date is not None:
        return date
    for received in headers.get("received", "").split("\n"):
        date = _parse_date(received.rpartition(";")[2])
        if date is not None:
            warnings.add("no readable Date header: time taken from Received")
            return date
    warnings.add("no readable Date header")
    return datetime(1970, 1, 1, tzinfo=UTC)


def _parse_date(value: str) -> datetime | None:
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


def _mailbox(explicit: str, headers: Mapping[str, str], to: list[Address]) -> str:
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


def _thread_id(references: list[str], in_reply_to: str | None, message_id: str) -> str:
    """The conversation's first message: References' first id, else In-Reply-To, else itself."""
    if references:
        return references[0]
    return in_reply_to or message_id


def _first_id(value: str) -> str | None:
    found = _MESSAGE_IDS.search(value)
    return found.group(1) if found else None


def _strip_angle(value: str) -> str:
    return value.strip().strip("<>").strip()


# --- text hygiene -----------------------------------------------------------------------


def _clean_text(text: str) -> str:
    """Valid Unicode only: escaped bytes re-decoded, lone surrogates and C0 controls removed."""
    if _SURROGATES.search(text):
        text = _ESCAPED_BYTES.sub(lambda m: _redecode(m.group()), text)
        text = _SURROGATES.sub("\ufffd", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL_CHARS.sub("", text)


def _redecode(escaped: str) -> str:
    """Bytes the parser kept as surrogate escapes: UTF-8 if they are, else Windows-1252."""
    data = bytes(ord(c) - 0xDC00 for c in escaped)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


def _one_line(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text).strip()


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


def _describe_defect(defect: Any) -> str:
    name = type(defect).__name__.removesuffix("Defect")
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
    detail = str(defect).strip()
    return f"{words}: {detail}" if detail and detail != name else words


__all__ = [
    "BODY_HTML_LIMIT",
    "BODY_TEXT_LIMIT",
    "EMAIL_STATE_LIMIT",
    "FORWARD_END",
    "FORWARD_START",
    "decode_bytes",
    "decode_header_words",
    "parse_calendar",
    "parse_message",
    "unflow",
]

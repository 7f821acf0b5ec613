"""The email as the graphs see it, and loaders from ``.eml`` (RFC 5322) and JSON.

An ``Email`` keeps every header (lowercased names), the full plain-text body,
the HTML body when there is one, and attachment metadata only: attachment
bytes are blobs stored beside the trace, never copied into its state.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import html
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import getaddresses, parseaddr, parsedate_to_datetime
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

MODEL_BODY_LIMIT = 20_000
"""Characters of body text shown to a model; the rest is cut with a visible marker."""

SIGNAL_HEADERS = (
    "reply-to",
    "in-reply-to",
    "references",
    "list-id",
    "list-unsubscribe",
    "precedence",
    "auto-submitted",
    "x-mailer",
    "x-inboxflow-trace",
)
"""Headers a model is shown as evidence (the full set stays on the email)."""


class EmailParseError(ValueError):
    """The input is not an email we can read; the message says why."""


class Address(BaseModel):
    """A mailbox: ``address`` plus an optional display name."""

    address: str
    name: str = ""

    @field_validator("address")
    @classmethod
    def _normalise(cls, value: str) -> str:
        value = value.strip().strip("<>").strip()
        if "@" not in value:
            raise ValueError(f"not an email address: {value!r}")
        local, _, domain = value.rpartition("@")
        return f"{local}@{domain.lower()}"

    def formatted(self) -> str:
        """``Name <address>`` (or just the address)."""
        return f"{self.name} <{self.address}>" if self.name else self.address

    @property
    def first_name(self) -> str:
        """The first word of the display name, or empty."""
        name = self.name.replace('"', "").strip()
        if "," in name:  # "Okafor, Daniel"
            last, _, given = name.partition(",")
            name = given.strip() or last
        words = name.split()
        return words[0] if words else ""


class Attachment(BaseModel):
    """Attachment metadata; the bytes live in the blob store, not in state."""

    filename: str = ""
    content_type: str = "application/octet-stream"
    size: int = 0
    content_id: str | None = None


class Email(BaseModel):
    """One received message."""

    message_id: str
    thread_id: str
    mailbox: str
    sender: Address
    to: list[Address] = Field(default_factory=list)
    cc: list[Address] = Field(default_factory=list)
    subject: str = ""
    body_text: str = ""
    body_html: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    """Every header, names lowercased; repeated headers joined by newlines."""
    received_at: datetime
    attachments: list[Attachment] = Field(default_factory=list)

    def body_for_model(self, limit: int = MODEL_BODY_LIMIT) -> str:
        """The body text capped at ``limit`` characters, with a visible truncation marker."""
        text = self.body_text
        if len(text) <= limit:
            return text
        return f"{text[:limit]}\n[... truncated: {len(text) - limit} more characters not shown ...]"

    def header(self, name: str, default: str = "") -> str:
        """A header's value by case-insensitive name."""
        return self.headers.get(name.lower(), default)

    @property
    def is_reply(self) -> bool:
        """True when the message answers an earlier one (headers or a ``Re:`` subject)."""
        return bool(self.header("in-reply-to")) or bool(_REPLY_PREFIX.match(self.subject))


# --- loaders -----------------------------------------------------------------------------


def email_from_eml(raw: bytes, mailbox: str | None = None) -> Email:
    """Parse an RFC 5322 message.

    Multipart messages give their ``text/plain`` body; HTML-only messages are
    converted to text (the HTML is kept in ``body_html``). Any declared
    charset Python knows is decoded; unknown ones fall back to UTF-8 with
    replacement characters.

    Args:
        raw: the message bytes.
        mailbox: the receiving mailbox; defaults to ``Delivered-To`` or the first recipient.

    Raises:
        EmailParseError: the bytes are not an email (no headers, no sender).
    """
    if not isinstance(raw, bytes | bytearray):
        raise EmailParseError(f"expected bytes, got {type(raw).__name__}")
    if not raw.strip():
        raise EmailParseError("empty message")
    if b"\x00" in raw[:4096]:
        raise EmailParseError("binary data, not an RFC 5322 message")
    msg = email.message_from_bytes(bytes(raw), policy=email.policy.default)
    if not isinstance(msg, EmailMessage):  # pragma: no cover - policy.default always gives one
        raise EmailParseError("could not parse message")
    headers = _header_map(msg)
    if not any(name in headers for name in ("from", "to", "subject", "message-id", "date")):
        raise EmailParseError("not an email: no From, To, Subject, Message-ID or Date header")
    sender = _first_address(headers.get("from", ""))
    if sender is None:
        raise EmailParseError(f"no usable From address in {headers.get('from', '')!r}")
    to = _addresses(headers.get("to", ""))
    cc = _addresses(headers.get("cc", ""))
    body_text, body_html, attachments = _bodies(msg)
    message_id = _strip_angle(headers.get("message-id", "")) or _synthetic_id(raw)
    return Email(
        message_id=message_id,
        thread_id=_thread_id(headers, message_id),
        mailbox=_mailbox(mailbox, headers, to),
        sender=sender,
        to=to,
        cc=cc,
        subject=headers.get("subject", ""),
        body_text=body_text,
        body_html=body_html,
        headers=headers,
        received_at=_received_at(headers.get("date", "")),
        attachments=attachments,
    )


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
    message_id = _strip_angle(str(data.get("message_id") or headers.get("message-id") or ""))
    if not message_id:
        message_id = _synthetic_id(json.dumps(data, sort_keys=True, default=str).encode())
    headers.setdefault("from", sender.formatted())
    headers.setdefault("to", ", ".join(a.formatted() for a in to))
    headers.setdefault("subject", subject)
    headers.setdefault("message-id", f"<{message_id}>")
    received = data.get("received_at", data.get("date", headers.get("date")))
    fields = {
        "message_id": message_id,
        "thread_id": str(data.get("thread_id") or _thread_id(headers, message_id)),
        "mailbox": mailbox or data.get("mailbox") or _mailbox(None, headers, to),
        "sender": sender,
        "to": to,
        "cc": cc,
        "subject": subject,
        "body_text": str(body_text),
        "body_html": str(body_html) if body_html else None,
        "headers": headers,
        "received_at": _coerce_datetime(received),
        "attachments": data.get("attachments") or [],
    }
    try:
        return Email.model_validate(fields)
    except ValidationError as exc:
        raise EmailParseError(f"invalid email JSON: {exc.errors()[0]['msg']}") from exc


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
    """The bundled sample inbox (``inboxflow/samples/inbox``)."""
    return Path(str(resources.files("inboxflow") / "samples" / "inbox"))


def sample_inbox_paths() -> list[Path]:
    """The bundled sample emails, in file-name order."""
    return sorted(p for p in sample_inbox_dir().iterdir() if p.suffix in (".eml", ".json"))


# --- text helpers the nodes share -------------------------------------------------------

_REPLY_PREFIX = re.compile(r"^\s*((re|aw|sv|antw|fwd?|tr)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_QUOTE_INTRO = re.compile(
    r"^(on .{3,200}wrote:|-{2,}\s*original message\s*-{2,}|from: .+@.+|_{10,})\s*$", re.IGNORECASE
)


def bare_subject(subject: str) -> str:
    """The subject without ``Re:``/``Fwd:`` prefixes."""
    return _REPLY_PREFIX.sub("", subject).strip()


def reply_subject(subject: str) -> str:
    """``Re: <subject>`` without stacking prefixes."""
    bare = bare_subject(subject)
    return f"Re: {bare}" if bare else "Re: your message"


def strip_quoted(text: str) -> str:
    """The new part of a reply: quoted lines, the quote intro and the signature removed."""
    kept: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if _QUOTE_INTRO.match(stripped) or stripped == "--":
            break
        if stripped.startswith(">"):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def neutralise_markers(text: str) -> str:
    """Untrusted text with prompt delimiters defused (it cannot close the data block)."""
    return text.replace("<<<", "\u2039\u2039\u2039").replace(">>>", "\u203a\u203a\u203a")


def prompt_fields(message: Email, limit: int = MODEL_BODY_LIMIT) -> dict[str, str]:
    """The email's fields as prompt inputs, every one defused for the data block."""
    signal = "\n".join(
        f"{name}: {message.headers[name][:300]}"
        for name in SIGNAL_HEADERS
        if name in message.headers
    )
    attachments = ", ".join(
        f"{a.filename or 'unnamed'} ({a.content_type}, {a.size} bytes)" for a in message.attachments
    )
    fields = {
        "mailbox": message.mailbox,
        "sender": message.sender.formatted(),
        "sender_address": message.sender.address,
        "sender_name": message.sender.name,
        "to": ", ".join(a.formatted() for a in message.to),
        "subject": message.subject,
        "received_at": message.received_at.isoformat(),
        "headers": signal or "(none)",
        "attachments": attachments or "(none)",
        "body": message.body_for_model(limit),
    }
    return {k: neutralise_markers(v) for k, v in fields.items()}


class _TextExtractor(HTMLParser):
    _BLOCK = frozenset(
        {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol"}
        | {"blockquote", "section", "article", "header", "footer", "hr"}
    )
    _SKIP = frozenset({"script", "style", "head", "title", "noscript", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0
        self.href: str | None = None
        self.link_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self.skip_depth += 1
        elif tag in self._BLOCK:
            self.parts.append("\n- " if tag == "li" else "\n")
        elif tag == "a":
            self.href = dict(attrs).get("href")
            self.link_text = []

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif tag in self._BLOCK and tag != "li":
            self.parts.append("\n")
        elif tag == "a" and self.href:
            text = "".join(self.link_text).strip()
            if self.href.startswith(("http://", "https://")) and self.href != text:
                self.parts.append(f" ({self.href})")
            self.href = None

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        self.parts.append(data)
        if self.href is not None:
            self.link_text.append(data)


def html_to_text(markup: str) -> str:
    """Readable text from HTML: scripts and styles dropped, blocks on their own lines.

    Crude on purpose (no CSS, no tables), but it never executes anything and
    never backtracks: the stdlib tokenizer does the work.
    """
    parser = _TextExtractor()
    try:
        parser.feed(markup)
        parser.close()
    except Exception:  # the stdlib parser is lenient; this is a last resort
        return html.unescape(re.sub(r"<[^>]{0,2000}>", " ", markup))
    text = "".join(parser.parts).replace("\xa0", " ")
    lines = [re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


# --- internals ---------------------------------------------------------------------------


def _header_map(msg: EmailMessage) -> dict[str, str]:
    headers: dict[str, str] = {}
    names = dict.fromkeys(k.lower() for k in msg.keys())  # noqa: SIM118 - a Message, not a dict
    for name in names:
        values: list[str] = []
        for value in msg.get_all(name) or []:
            try:
                values.append(str(value))
            except Exception:  # undecodable header: keep what we can read
                values.append(str(getattr(value, "_parse_tree", "") or ""))
        headers[name] = "\n".join(v.replace("\r", "").replace("\n", " ").strip() for v in values)
    return headers


def _addresses(value: str) -> list[Address]:
    out: list[Address] = []
    for name, addr in getaddresses([value]) if value else []:
        if addr and "@" in addr:
            try:
                out.append(Address(address=addr, name=name))
            except ValidationError:
                continue
    return out


def _first_address(value: str) -> Address | None:
    found = _addresses(value)
    return found[0] if found else None


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
        return _addresses(value)
    if isinstance(value, list):
        found = [_coerce_address(item) for item in value]
        return [a for a in found if a is not None]
    if isinstance(value, Mapping):
        single = _coerce_address(value)
        return [single] if single else []
    return []


def _coerce_datetime(value: Any) -> datetime:
    if value is None or value == "":
        return datetime(1970, 1, 1, tzinfo=UTC)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return _received_at(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _received_at(date_header: str) -> datetime:
    try:
        parsed = parsedate_to_datetime(date_header) if date_header else None
    except (TypeError, ValueError, IndexError):
        parsed = None
    if parsed is None:
        return datetime(1970, 1, 1, tzinfo=UTC)
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def _strip_angle(value: str) -> str:
    return value.strip().strip("<>").strip()


def _synthetic_id(raw: bytes) -> str:
    return f"generated-{hashlib.sha256(raw).hexdigest()[:24]}@inboxflow"


def _thread_id(headers: Mapping[str, str], message_id: str) -> str:
    """The conversation's first message: References' first id, else In-Reply-To, else itself."""
    for name in ("references", "in-reply-to"):
        ids = re.findall(r"<([^<>\s]+)>", headers.get(name, ""))
        if ids:
            return ids[0]
    return message_id


def _mailbox(explicit: str | None, headers: Mapping[str, str], to: list[Address]) -> str:
    if explicit:
        return explicit
    for name in ("delivered-to", "x-original-to"):
        found = _first_address(headers.get(name, "").split("\n")[0])
        if found:
            return found.address
    return to[0].address if to else "unknown@localhost"


def _decode_part(part: EmailMessage) -> str:
    try:
        content = part.get_content()
        if isinstance(content, str):
            return content
    except (LookupError, UnicodeError, KeyError, AssertionError):
        pass
    payload = part.get_payload(decode=True)
    if isinstance(payload, bytes):
        return payload.decode("utf-8", errors="replace")
    return str(part.get_payload())


def _bodies(msg: EmailMessage) -> tuple[str, str | None, list[Attachment]]:
    plain_part = msg.get_body(preferencelist=("plain",))
    html_part = msg.get_body(preferencelist=("html",))
    body_html = _decode_part(html_part) if isinstance(html_part, EmailMessage) else None
    if isinstance(plain_part, EmailMessage):
        body_text = _decode_part(plain_part)
    elif body_html is not None:
        body_text = html_to_text(body_html)
    elif not msg.is_multipart():
        body_text = _decode_part(msg)
    else:
        body_text = ""
    attachments: list[Attachment] = []
    if msg.is_multipart():
        for part in msg.iter_attachments():
            if not isinstance(part, EmailMessage):
                continue
            payload = part.get_payload(decode=True)
            attachments.append(
                Attachment(
                    filename=part.get_filename() or "",
                    content_type=part.get_content_type(),
                    size=len(payload) if isinstance(payload, bytes) else 0,
                    content_id=_strip_angle(part.get("content-id", "")) or None,
                )
            )
    return body_text.replace("\r\n", "\n").strip(), body_html, attachments


__all__ = [
    "MODEL_BODY_LIMIT",
    "Address",
    "Attachment",
    "Email",
    "EmailParseError",
    "bare_subject",
    "email_from_eml",
    "email_from_json",
    "html_to_text",
    "load_email_file",
    "neutralise_markers",
    "prompt_fields",
    "reply_subject",
    "sample_inbox_dir",
    "sample_inbox_paths",
    "strip_quoted",
]

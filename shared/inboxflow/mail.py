"""The email as the graphs see it, and loaders from ``.eml`` (RFC 5322) and JSON.

An ``Email`` keeps every header (lowercased names), the full plain-text body,
the HTML body when there is one, and attachment metadata only: attachment
bytes stay in the mailbox (``gmail_id`` + ``part_id``), never in trace state.
Bodies too large for a checkpoint are cut with a visible marker
(``body_truncated``, ``body_chars``). MIME parsing lives in
:mod:`inboxflow.mime_parse` (:func:`parse_message`); the model sees
:meth:`Email.body_for_model`: the new text of the message, quoted replies and
signature trimmed, capped.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from email.utils import getaddresses, parseaddr, parsedate_to_datetime
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from .html_text import html_to_text

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
    """Attachment metadata; the bytes stay in the mailbox, never in state.

    A tool fetches the bytes with Gmail ``messages.attachments.get`` using the
    ``attachmentId`` of the payload part whose ``partId`` equals ``part_id``
    (``messages.get(format="full")``), or ``attachment_id`` when ingestion had it.
    """

    filename: str = ""
    content_type: str = "application/octet-stream"
    size: int = 0
    """Decoded size in bytes."""
    content_id: str | None = None
    """Content-ID without angle brackets (``cid:`` references in the HTML)."""
    attachment_id: str | None = None
    """Gmail's attachment id, when known."""
    part_id: str | None = None
    """MIME part path in Gmail's ``partId`` numbering (``"1"``, ``"1.0"``...)."""
    inline: bool = False
    """An inline resource (image of a ``multipart/related`` body), not a file the sender attached."""


class CalendarInvite(BaseModel):
    """The first event of a ``text/calendar`` part (RFC 5545 / iTIP RFC 5546)."""

    method: str = ""
    """iTIP method: ``REQUEST``, ``CANCEL``, ``REPLY``..."""
    uid: str = ""
    summary: str = ""
    start: str = ""
    """ISO 8601 (``2027-01-15T15:00:00+00:00``, local time when ``timezone`` names a zone)."""
    end: str = ""
    timezone: str = ""
    organizer: str = ""
    location: str = ""

    def readable(self) -> str:
        """One line for the body text the model reads."""
        kind = {"CANCEL": "cancellation", "REPLY": "reply"}.get(self.method, "invitation")
        parts = [self.summary or "(no title)"]
        if self.start:
            when = f"{self.start} to {self.end}" if self.end else self.start
            parts.append(f"{when} {self.timezone}".strip())
        if self.location:
            parts.append(f"at {self.location}")
        if self.organizer:
            parts.append(f"organizer {self.organizer}")
        return f"[Calendar {kind}: {', '.join(parts)}]"


class ForwardedMessage(BaseModel):
    """Headers of a message forwarded as a ``message/rfc822`` part (its text is in the body)."""

    sender: str = ""
    to: str = ""
    subject: str = ""
    date: str = ""
    message_id: str | None = None
    part_id: str | None = None


class Email(BaseModel):
    """One received message.

    Fields added after the first release all have defaults: traces stored
    before them still load.
    """

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
    gmail_id: str | None = None
    """Gmail's message id: where the full message and attachment bytes stay."""
    label_ids: list[str] = Field(default_factory=list)
    in_reply_to: str | None = None
    """The first id of ``In-Reply-To``, without angle brackets."""
    references: list[str] = Field(default_factory=list)
    """The ids of ``References``, oldest first, without angle brackets."""
    body_chars: int = 0
    """Characters of the body text as received (more than ``len(body_text)`` when truncated)."""
    body_truncated: bool = False
    """``body_text`` was cut for storage; the end carries a visible marker."""
    calendar: CalendarInvite | None = None
    forwarded: list[ForwardedMessage] = Field(default_factory=list)
    parse_warnings: list[str] = Field(default_factory=list)
    """What was repaired or dropped while parsing (bad charset, broken MIME...)."""

    @model_validator(mode="after")
    def _count_body(self) -> Email:
        if not self.body_truncated and self.body_chars < len(self.body_text):
            self.body_chars = len(self.body_text)
        return self

    def body_for_model(self, limit: int = MODEL_BODY_LIMIT) -> str:
        """The text a model reads: quoted replies and signature trimmed, capped at ``limit``.

        Forwarded messages are kept whole (they are the content). When nothing
        new is left after trimming, the full text is used. Trimming and the cap
        are both announced in the text.
        """
        text = self.body_text
        trimmed = strip_quoted(text)
        if trimmed and len(trimmed) < len(text.strip()):
            text = f"{trimmed}\n{TRIMMED_MARKER}"
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


def parse_message(
    raw: bytes,
    *,
    mailbox: str,
    gmail_id: str | None = None,
    thread_id: str | None = None,
    label_ids: Sequence[str] = (),
    internal_date_ms: int | None = None,
) -> Email:
    """Parse RFC 5322 / MIME bytes into an Email (see :func:`inboxflow.mime_parse.parse_message`).

    Args:
        raw: the message bytes (Gmail ``format=raw``, decoded from base64url).
        mailbox: the receiving mailbox; empty means ``Delivered-To`` or the first recipient.
        gmail_id: Gmail's message id.
        thread_id: Gmail's thread id (default: derived from ``References``).
        label_ids: Gmail label ids.
        internal_date_ms: Gmail's ``internalDate``; the received time when given.

    Returns:
        The email, with ``parse_warnings`` for anything repaired.

    Raises:
        EmailParseError: not an email, or no usable sender address.
    """
    from .mime_parse import parse_message as parse

    return parse(
        raw,
        mailbox=mailbox,
        gmail_id=gmail_id,
        thread_id=thread_id,
        label_ids=label_ids,
        internal_date_ms=internal_date_ms,
    )


def email_from_eml(raw: bytes, mailbox: str | None = None) -> Email:
    """Parse an RFC 5322 message (an ``.eml`` file); :func:`parse_message` without Gmail metadata.

    Args:
        raw: the message bytes.
        mailbox: the receiving mailbox; defaults to ``Delivered-To`` or the first recipient.

    Raises:
        EmailParseError: the bytes are not an email (no headers, no sender).
    """
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

_REPLY_PREFIX = re.compile(
    r"^\s*((re|aw|sv|antw|wg|fwd?|tr|rif|r)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE
)
_REPLY_INTRO = re.compile(
    # Gmail, Apple Mail, Thunderbird and their translations: "On <date>, <who> wrote:"
    r"^(on\b.{3,300}\bwrote|am\b.{3,300}\bschrieb\b.{0,200}|le\b.{3,300}\ba [ée]crit\s?"
    r"|el\b.{3,300}\bescribi[óo]|op\b.{3,300}\bschreef\b.{0,200}|il giorno\b.{3,300}\bha scritto"
    r"|.{3,300} (?:wrote|schrieb|a écrit)\s?):$"
    # Outlook and friends
    r"|^-{2,}\s*(original message|ursprüngliche nachricht|message d'origine|mensaje original)"
    r"\s*-{2,}$",
    re.IGNORECASE,
)
_OUTLOOK_FROM = re.compile(r"^\*?(from|von|de)\s*:\*?\s*\S", re.IGNORECASE)
_OUTLOOK_FIELD = re.compile(
    r"^\*?(sent|date|to|subject|gesendet|an|betreff|envoyé|objet|à)\s*:", re.IGNORECASE
)
_FORWARD_MARKER = re.compile(
    r"^(-{3,}\s*(forwarded message|weitergeleitete nachricht|message transféré)\b.*-{3,}"
    r"|begin forwarded message:|anfang der weitergeleiteten nachricht:)$",
    re.IGNORECASE,
)
_SIGNATURE_LINE = re.compile(
    r"^(sent from my \w+( \w+)?|sent from (mail|outlook) for \w+|get outlook for (ios|android)"
    r"|sent from yahoo mail.*|envoyé de mon \w+|von meinem \w+ gesendet|enviado desde mi \w+)\.?$",
    re.IGNORECASE,
)
SIGNATURE_WINDOW = 15
"""A ``--`` separator this many non-blank lines from the end (or fewer) starts a signature."""

TRIMMED_MARKER = "[earlier quoted messages and signature not shown]"


def bare_subject(subject: str) -> str:
    """The subject without ``Re:``/``Fwd:`` prefixes."""
    return _REPLY_PREFIX.sub("", subject).strip()


def reply_subject(subject: str) -> str:
    """``Re: <subject>`` without stacking prefixes."""
    bare = bare_subject(subject)
    return f"Re: {bare}" if bare else "Re: your message"


def strip_quoted(text: str) -> str:
    """The new part of a message: quoted replies, their intro line and the signature removed.

    Handles ``>`` quoting (top-posted or interleaved answers), the intros of
    Gmail, Apple Mail, Thunderbird and Outlook (``On ... wrote:`` wrapped over
    two lines, ``-----Original Message-----``, an Outlook ``From:/Sent:``
    block) and signatures (``-- `` near the end, "Sent from my iPhone").
    Forwarded messages are content and are kept. When nothing new remains the
    full text is returned.

    Args:
        text: the full body text.

    Returns:
        The new text, stripped.
    """
    lines = text.split("\n")
    cut, interleaved = _reply_cut(lines)
    if cut == _FORWARDED:
        return text.strip()
    if cut is None:
        kept = [line for line in lines if not line.lstrip().startswith(">")]
    elif interleaved:
        kept = lines[:cut] + [
            line for line in lines[cut + 1 :] if not line.lstrip().startswith(">")
        ]
    else:
        kept = lines[:cut]
    kept = _without_signature(kept)
    result = "\n".join(kept).strip()
    return result or text.strip()


_FORWARDED = -1


def _reply_cut(lines: list[str]) -> tuple[int | None, bool]:
    """Index of the first reply intro (None if none, ``_FORWARDED`` if a forward comes first),
    and whether the answer is interleaved with the quote (new lines after ``>`` lines)."""
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if _FORWARD_MARKER.match(stripped):
            return _FORWARDED, False
        if stripped.startswith(">"):
            continue
        intro = _REPLY_INTRO.match(stripped)
        if (
            not intro
            and len(stripped) < 300
            and re.match(r"^(on|am|le|el|op|il)\b", stripped, re.I)
        ):
            for end in (2, 3):  # Gmail wraps a long intro: "On ... <\nname@example.com> wrote:"
                intro = _REPLY_INTRO.match(" ".join(p.strip() for p in lines[index : index + end]))
                if intro:
                    break
        if intro or _is_outlook_block(lines, index) or re.fullmatch(r"_{10,}", stripped):
            rest = [r.strip() for r in lines[index + 1 :] if r.strip()]
            quoted = [r.startswith(">") for r in rest[:200]]
            interleaved = bool(quoted) and quoted[0] and not all(quoted)
            if re.fullmatch(r"_{10,}", stripped) and not (rest and _OUTLOOK_FROM.match(rest[0])):
                continue
            return index, interleaved
    return None, False


def _is_outlook_block(lines: list[str], index: int) -> bool:
    if not _OUTLOOK_FROM.match(lines[index].strip()):
        return False
    following = [line.strip() for line in lines[index + 1 : index + 6] if line.strip()]
    return sum(1 for line in following[:4] if _OUTLOOK_FIELD.match(line)) >= 2


def _without_signature(lines: list[str]) -> list[str]:
    non_blank = [i for i, line in enumerate(lines) if line.strip()]
    window = non_blank[-SIGNATURE_WINDOW:]
    for i in window:
        if lines[i].rstrip() in ("--", "-- ") or lines[i] == "-- ":
            return lines[:i]
    for i in non_blank[-3:]:
        if _SIGNATURE_LINE.match(lines[i].strip()):
            return lines[:i]
    return lines


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


# --- internals ---------------------------------------------------------------------------


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


__all__ = [
    "MODEL_BODY_LIMIT",
    "Address",
    "Attachment",
    "CalendarInvite",
    "Email",
    "EmailParseError",
    "ForwardedMessage",
    "bare_subject",
    "email_from_eml",
    "email_from_json",
    "html_to_text",
    "load_email_file",
    "neutralise_markers",
    "parse_message",
    "prompt_fields",
    "reply_subject",
    "sample_inbox_dir",
    "sample_inbox_paths",
    "strip_quoted",
]

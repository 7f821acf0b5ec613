"""The email as the graphs see it.

An ``Email`` keeps every header (lowercased names), the full plain-text body,
the HTML body when there is one, and attachment metadata only: attachment
bytes stay in the mailbox (``gmail_id`` + ``part_id``), never in trace state.
Bodies too large for a checkpoint are cut with a visible marker
(``body_truncated``, ``body_chars``). The model sees
:meth:`Email.body_for_model`: the new text of the message, quoted replies and
signature trimmed (:mod:`.quoting`), capped.
"""

from __future__ import annotations

from datetime import datetime
from email.utils import getaddresses

from pydantic import Field, field_validator, model_validator

from ..deferred import DeferredModel
from ..field_defaults import empty_dict, empty_list
from .addresses import address_key_or_none, ascii_lower, same_address
from .quoting import REPLY_PREFIX, TRIMMED_MARKER, strip_quoted

MODEL_BODY_LIMIT = 20_000
"""Characters of body text shown to a model; the rest is cut with a visible marker."""


class EmailParseError(ValueError):
    """The input is not an email we can read; the message says why."""


class Address(DeferredModel):
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
        # ASCII only: Unicode lowercasing would turn a Kelvin sign into a k (mail.addresses)
        return f"{local}@{ascii_lower(domain)}"

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


class Attachment(DeferredModel):
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


class CalendarInvite(DeferredModel):
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


class ForwardedMessage(DeferredModel):
    """Headers of a message forwarded as a ``message/rfc822`` part (its text is in the body)."""

    sender: str = ""
    to: str = ""
    subject: str = ""
    date: str = ""
    message_id: str | None = None
    part_id: str | None = None


class Email(DeferredModel):
    """One received message.

    Fields added after the first release all have defaults: traces stored
    before them still load.
    """

    message_id: str
    thread_id: str
    mailbox: str
    sender: Address
    to: list[Address] = Field(default_factory=empty_list)
    cc: list[Address] = Field(default_factory=empty_list)
    subject: str = ""
    body_text: str = ""
    body_html: str | None = None
    headers: dict[str, str] = Field(default_factory=empty_dict)
    """Every header, names lowercased; repeated headers joined by newlines."""
    received_at: datetime
    attachments: list[Attachment] = Field(default_factory=empty_list)
    gmail_id: str | None = None
    """Gmail's message id: where the full message and attachment bytes stay."""
    label_ids: list[str] = Field(default_factory=empty_list)
    in_reply_to: str | None = None
    """The first id of ``In-Reply-To``, without angle brackets."""
    references: list[str] = Field(default_factory=empty_list)
    """The ids of ``References``, oldest first, without angle brackets."""
    body_chars: int = 0
    """Characters of the body text as received (more than ``len(body_text)`` when truncated)."""
    body_truncated: bool = False
    """``body_text`` was cut for storage; the end carries a visible marker."""
    calendar: CalendarInvite | None = None
    forwarded: list[ForwardedMessage] = Field(default_factory=empty_list)
    parse_warnings: list[str] = Field(default_factory=empty_list)
    """What was repaired or dropped while parsing (bad charset, broken MIME...)."""
    from_address: str | None = None
    """``From`` when it is one header holding exactly one well-formed address, else None.

    Decided when the message is parsed (:func:`~.headers.single_from_address`: the decoded
    ``headers["from"]`` cannot tell a comma in a display name from a list). ``sender`` may
    come from a fallback (``Sender``, ``Return-Path``, a bare local part) for display; only
    this address can be authenticated (:mod:`.authentication`).
    """
    writer: Address | None = None
    """Who wrote the message this email forwards (:func:`~.forwarded.writer_of`: an attached
    message's ``From``, else the ``From`` field of a forwarded block in the body), or None.

    Filled when the message is parsed. What the body says, never authenticated: it only
    chooses whom a reply is addressed to (:meth:`reply_address`), and anything that trusts
    a sender still asks :mod:`.authentication` about ``from_address``.
    """

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

    def reply_address(self) -> str:
        """Whom a reply goes to: the writer of a forwarded message (unless it is the mailbox
        itself), else the one address of ``Reply-To``, else the sender."""
        if self.writer is not None and not same_address(self.writer.address, self.mailbox):
            return self.writer.address
        named = [a for _, a in getaddresses([self.header("reply-to")]) if address_key_or_none(a)]
        return named[0] if len(named) == 1 else self.sender.address

    def header(self, name: str, default: str = "") -> str:
        """A header's value by case-insensitive name."""
        return self.headers.get(name.lower(), default)

    @property
    def is_reply(self) -> bool:
        """True when the message answers an earlier one (headers or a ``Re:`` subject)."""
        return bool(self.header("in-reply-to")) or bool(REPLY_PREFIX.match(self.subject))

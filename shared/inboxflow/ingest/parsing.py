"""From Gmail's raw bytes to the ``Email`` model, and whether we may answer it.

``inboxflow.mail.parse_message`` and ``inboxflow.loop_guard.auto_reply_block``
are the parser and the RFC 3834 rules; until a checkout has them this module
falls back to ``mail.email_from_eml`` and the header rules of ARCHITECTURE
section 5, so ingestion works either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..mail import Email
from ..ports.gmail_reader import RawMessage

TRACE_HEADER = "x-inboxflow-trace"
"""Stamped on every message we send: mail carrying it is our own."""

_BULK_PRECEDENCE = frozenset({"bulk", "list", "junk"})
_BOUNCE_SENDERS = ("mailer-daemon@", "postmaster@")


def parse_raw(message: RawMessage, mailbox: str) -> Email:
    """Parse a fetched message into an ``Email`` addressed to ``mailbox``.

    Raises:
        mail.EmailParseError: the bytes are not an email.
    """
    from .. import mail

    parse_message: Any = getattr(mail, "parse_message", None)
    if parse_message is not None:
        parsed: Email = parse_message(
            message.raw,
            mailbox=mailbox,
            gmail_id=message.gmail_id,
            thread_id=message.thread_id,
            label_ids=tuple(message.label_ids),
            internal_date_ms=message.internal_date_ms,
        )
        return parsed
    email = mail.email_from_eml(message.raw, mailbox)
    update: dict[str, Any] = {"thread_id": message.thread_id or email.thread_id}
    if message.internal_date_ms is not None and "date" not in email.headers:
        update["received_at"] = datetime.fromtimestamp(message.internal_date_ms / 1000, tz=UTC)
    return email.model_copy(update=update)


def is_own_message(email: Email) -> bool:
    """True when the message carries the header our sends stamp."""
    return bool(email.header(TRACE_HEADER))


def auto_reply_block(email: Email) -> str | None:
    """Why no auto-reply path may start for ``email`` (RFC 3834), or None.

    Delegates to ``inboxflow.loop_guard`` when it is installed.
    """
    try:
        from .. import loop_guard  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        return _header_rules(email)
    reason: str | None = loop_guard.auto_reply_block(email)
    return reason


def _header_rules(email: Email) -> str | None:
    auto_submitted = email.header("auto-submitted").strip().lower()
    if auto_submitted and auto_submitted.split(";")[0].strip() != "no":
        return f"Auto-Submitted: {auto_submitted}"
    precedence = email.header("precedence").strip().lower()
    if precedence in _BULK_PRECEDENCE:
        return f"Precedence: {precedence}"
    if email.header("list-id"):
        return "List-Id: mailing-list mail"
    if email.sender.address.lower().startswith(_BOUNCE_SENDERS):
        return f"bounce from {email.sender.address}"
    return None


def label_skip(label_ids: Sequence[str]) -> str | None:
    """Why a message with these labels is not ingested, or None."""
    from ..ports.gmail_reader import DRAFT, INBOX, SENT

    labels = set(label_ids)
    if DRAFT in labels:
        return "draft"
    if SENT in labels:
        return "sent by the mailbox"
    if INBOX not in labels:
        return "not in INBOX"
    return None

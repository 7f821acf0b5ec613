"""The email as prompt input: its fields, every one defused for the prompt's data block."""

from __future__ import annotations

from .headers import TRACE_HEADER
from .model import MODEL_BODY_LIMIT, Email

SIGNAL_HEADERS = (
    "reply-to",
    "in-reply-to",
    "references",
    "list-id",
    "list-unsubscribe",
    "precedence",
    "auto-submitted",
    "x-mailer",
    TRACE_HEADER.lower(),
)
"""Headers a model is shown as evidence (the full set stays on the email)."""


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


__all__ = ["SIGNAL_HEADERS", "neutralise_markers", "prompt_fields"]

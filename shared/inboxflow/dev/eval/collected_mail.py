"""The mail of a collected case, in the JSON email format ``inboxflow run`` takes, pseudonymised.

Kept: the parties (pseudonyms), the subject and (with ``--keep-text``) the body, each with
addresses, domains and name words replaced; the message ids (pseudonyms, so a reply still
names its thread); and the headers a graph or routing reads (``KEPT_HEADERS``). Everything
else (other headers, HTML, attachments) is left out.
"""

from __future__ import annotations

from typing import Any

from ...mail import Email
from .pseudonyms import Pseudonyms

WITHHELD = "[body withheld: collected without --keep-text]"

KEPT_HEADERS = (
    "reply-to",
    "authentication-results",
    "auto-submitted",
    "precedence",
    "list-id",
    "list-unsubscribe",
    "x-auto-response-suppress",
    "x-priority",
    "importance",
    "content-language",
    "x-forwarded-for",
    "x-forwarded-to",
    "resent-from",
)
"""Headers a graph or routing reads, kept (addresses in them pseudonymised); the rest go."""
MESSAGE_ID_HEADERS = ("in-reply-to", "references")


def parties(email: Email) -> list[Any]:
    """Everyone the email names: sender, recipients, copies, the writer of what it forwards."""
    return [email.sender, *email.to, *email.cc, *([email.writer] if email.writer else [])]


def mail_json(email: Email, pseudonyms: Pseudonyms, keep_text: bool) -> dict[str, Any]:
    """The email in the JSON format ``inboxflow run`` takes, pseudonymised."""

    def party(address: Any) -> dict[str, str]:
        return {
            "address": pseudonyms.address(address.address),
            "name": pseudonyms.name(address.name),
        }

    headers = {"message-id": f"<{pseudonyms.message_id(email.message_id)}>"}
    for name in MESSAGE_ID_HEADERS:
        ids = [
            *([email.in_reply_to] if name == "in-reply-to" and email.in_reply_to else []),
            *(email.references if name == "references" else []),
        ]
        if not ids and email.headers.get(name):
            ids = [part for part in email.headers[name].split() if part.strip("<>")]
        if ids:
            headers[name] = " ".join(f"<{pseudonyms.message_id(one)}>" for one in ids)
    for name in KEPT_HEADERS:
        if email.headers.get(name):
            headers[name] = pseudonyms.text(email.headers[name])
    body = pseudonyms.text(email.body_text) if keep_text else WITHHELD
    return {
        "message_id": pseudonyms.message_id(email.message_id),
        "mailbox": email.mailbox,
        "from": party(email.sender),
        "to": [party(a) for a in email.to],
        "cc": [party(a) for a in email.cc],
        "subject": pseudonyms.text(email.subject),
        "date": email.received_at.isoformat(),
        "headers": headers,
        "body": body,
    }

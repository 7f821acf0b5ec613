"""Notifier adapters: the embedded outbox and Gmail; the outbox's copies.

The outbox keeps a copy of each notification for ``inboxflow`` tooling, with
the review link's token redacted: a stored copy is no key to the review page.
Channels that cannot be searched afterwards (SES, webhooks) keep the same copy
as their receipt, marked ``delivered``: ``inboxflow outbox`` lists both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from ..mail_stamps import stamp_for
from ..ports.documents import DocumentStore, Filter
from ..ports.notifier import Notification, Notifier
from ..redaction import redact_tokens
from ..schema import OUTBOX


def outbox_id(trace_key: str) -> str:
    """The id of the outbox copy of the notification sent with ``trace_key``."""
    return hashlib.sha256(trace_key.encode()).hexdigest()[:32]


def outbox_message(
    note: Notification, sender: str | None, sent_at: float, channel: str
) -> dict[str, Any]:
    """The fields of ``note``'s outbox copy, as ``keep_copy`` takes them."""
    return {
        "to": note.to,
        "subject": note.subject,
        "text": note.text,
        "html": note.html,
        "trace_key": note.trace_key,
        "from": sender,
        "sent_at": sent_at,
        "channel": channel,
    }


def keep_copy(store: DocumentStore, message: dict[str, Any], **receipt: Any) -> dict[str, Any]:
    """Store ``message``'s copy (tokens redacted) with ``receipt`` fields; returns ``{"id": ...}``.

    Args:
        store: where ``outbox/`` lives.
        message: ``to, subject, text, html, trace_key, from, sent_at, channel``.
        **receipt: what the channel answered (``message_id``, ``delivered``...).
    """
    copy = {**message, **receipt}
    copy["text"] = redact_tokens(str(message.get("text", "")))
    copy["html"] = redact_tokens(str(message.get("html", "")))
    copy.pop("link", None)
    key = outbox_id(str(message["trace_key"]))
    store.set(OUTBOX.path(key), copy)
    return {"id": receipt.get("message_id") or key}


def find_copy(store: DocumentStore, trace_key: str) -> dict[str, Any] | None:
    """``{"id": ...}`` of the stored copy of the notification sent with ``trace_key``, or None."""
    key = outbox_id(trace_key)
    doc = store.get(OUTBOX.path(key))
    return None if doc is None else {"id": doc.get("message_id") or key}


def outbox_messages(
    store: DocumentStore, channel: str | None = None, to: str | None = None
) -> list[dict[str, Any]]:
    """Stored copies (links redacted), oldest first, optionally of one channel / to one reviewer.

    Copies written before channels existed count as ``gmail``.
    """
    where: list[Filter] = [("to", "==", to)] if to else []
    docs = [doc for _, doc in store.list(OUTBOX.name, where=where, order_by="sent_at")]
    return [d for d in docs if channel is None or d.get("channel", "gmail") == channel]


class OutboxNotifier(Notifier):
    """The embedded default: notifications are documents in ``outbox/``, links redacted.

    Args:
        store: where the copies are kept.
        clock: stamps ``sent_at`` (0 without one).
        deliver: called with each message as sent, token included: the
            reviewer's inbox (tests, a local mail relay). None: nobody receives it,
            and reviewers take fresh links from ``inboxflow approvals``.
        channel: the channel the copies stand for (``gmail``, ``ses``, ``webhook``).
    """

    def __init__(
        self,
        store: DocumentStore,
        clock: Any = None,
        deliver: Callable[[dict[str, Any]], None] | None = None,
        channel: str = "gmail",
    ) -> None:
        self.store = store
        self.clock = clock
        self.deliver = deliver
        self.channel = channel

    def send(self, note: Notification) -> dict[str, Any]:
        now = float(self.clock.now()) if self.clock is not None else 0.0
        message = {
            **outbox_message(note, note.sender, now, self.channel),
            # What its Message-ID would carry (``mail_stamps.py``): a reply to it finds it.
            "stamp": stamp_for(self.store, note.trace_key, now or None),
        }
        receipt = keep_copy(self.store, message, delivered=False)
        if self.deliver is not None:
            self.deliver({**message, "link": note.link})
        return receipt

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        return find_copy(self.store, trace_key)

    def messages(self, to: str | None = None) -> list[dict[str, Any]]:
        """Stored copies (links redacted), oldest first (optionally only those to ``to``)."""
        return outbox_messages(self.store, to=to)


class GmailNotifier(Notifier):
    """Reviewer emails sent through Gmail (``GoogleWorkspace.send_message``).

    The sent message stays in the sending mailbox's Sent folder, link
    included: send from a dedicated address (``INBOXFLOW_NOTIFY_FROM``) to keep
    links out of the mailbox under review.
    """

    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace

    def _mailbox(self, sender: str | None) -> Any:
        return self.workspace.for_mailbox(sender) if sender else self.workspace

    def send(self, note: Notification) -> dict[str, Any]:
        mailbox = self._mailbox(note.sender)
        sent = mailbox.send_message(note.to, note.subject, note.text, note.html, note.trace_key)
        return {
            "id": sent.get("id"),
            "thread_id": sent.get("thread_id"),
            "mailbox": mailbox.mailbox,
        }

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        mailbox = self._mailbox(sender)
        found = mailbox.find_by_trace_key(trace_key)
        if found is None:
            return None
        return {
            "id": found.get("id"),
            "thread_id": found.get("thread_id"),
            "mailbox": mailbox.mailbox,
        }

"""Notifier adapters: the embedded outbox and Gmail.

The outbox keeps a copy of each notification for ``inboxflow`` tooling, with
the review link's token redacted: a stored copy is no key to the review page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from ..approvals.records import redact_tokens
from ..ports.checkpoint import CheckpointStore, Filter
from ..ports.notifier import Notifier

OUTBOX = "outbox"


class OutboxNotifier(Notifier):
    """The embedded default: emails are documents in ``outbox/``, links redacted.

    Args:
        store: where the copies are kept.
        clock: stamps ``sent_at`` (0 without one).
        deliver: called with each message as sent, token included: the
            reviewer's inbox (tests, a local mail relay). None: nobody receives it,
            and reviewers take fresh links from ``inboxflow approvals``.
    """

    def __init__(
        self,
        store: CheckpointStore,
        clock: Any = None,
        deliver: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.deliver = deliver

    @staticmethod
    def _path(trace_key: str) -> str:
        return f"{OUTBOX}/{hashlib.sha256(trace_key.encode()).hexdigest()[:32]}"

    def send(
        self,
        to: str,
        subject: str,
        text: str,
        html: str,
        trace_key: str,
        sender: str | None = None,
    ) -> dict[str, Any]:
        path = self._path(trace_key)
        now = float(self.clock.now()) if self.clock is not None else 0.0
        message = {
            "to": to,
            "subject": subject,
            "text": text,
            "html": html,
            "trace_key": trace_key,
            "from": sender,
            "sent_at": now,
        }
        self.store.set(path, {**message, "text": redact_tokens(text), "html": redact_tokens(html)})
        if self.deliver is not None:
            self.deliver(message)
        return {"id": path.removeprefix(f"{OUTBOX}/")}

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        doc = self.store.get(self._path(trace_key))
        return None if doc is None else {"id": self._path(trace_key).removeprefix(f"{OUTBOX}/")}

    def messages(self, to: str | None = None) -> list[dict[str, Any]]:
        """Stored copies (links redacted), oldest first (optionally only those to ``to``)."""
        where: list[Filter] = [("to", "==", to)] if to else []
        return [doc for _, doc in self.store.list(OUTBOX, where=where, order_by="sent_at")]


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

    def send(
        self,
        to: str,
        subject: str,
        text: str,
        html: str,
        trace_key: str,
        sender: str | None = None,
    ) -> dict[str, Any]:
        sent = self._mailbox(sender).send_message(to, subject, text, html, trace_key)
        return {"id": sent.get("id")}

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        found = self._mailbox(sender).find_by_trace_key(trace_key)
        return None if found is None else {"id": found.get("id")}

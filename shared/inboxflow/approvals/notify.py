"""How reviewers are told: the notifier port and its embedded outbox.

A notification is an effect (run through the effect journal), so every
notifier can find a message it already sent by the effect key it was
stamped with; a re-run after a crash then sends nothing twice.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from typing import Any

from ..ports.checkpoint import CheckpointStore, Filter

OUTBOX = "outbox"


class Notifier(ABC):
    """Sends reviewer emails."""

    @abstractmethod
    def send(
        self,
        to: str,
        subject: str,
        text: str,
        html: str,
        trace_key: str,
        sender: str | None = None,
    ) -> dict[str, Any]:
        """Send one email (plain text + HTML alternative) stamped with ``trace_key``.

        ``sender`` is the mailbox the agent works for (default: the notifier's own).
        Returns ``{"id": ...}``.
        """

    @abstractmethod
    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        """The email already sent with ``trace_key`` (from ``sender``), or None."""


class OutboxNotifier(Notifier):
    """The embedded default: emails are documents in ``outbox/`` (``inboxflow approvals`` shows them)."""

    def __init__(self, store: CheckpointStore, clock: Any = None) -> None:
        self.store = store
        self.clock = clock

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
        doc = {
            "to": to,
            "subject": subject,
            "text": text,
            "html": html,
            "trace_key": trace_key,
            "from": sender,
            "sent_at": now,
        }
        self.store.set(path, doc)
        return {"id": path.removeprefix(f"{OUTBOX}/")}

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        doc = self.store.get(self._path(trace_key))
        return None if doc is None else {"id": self._path(trace_key).removeprefix(f"{OUTBOX}/")}

    def messages(self, to: str | None = None) -> list[dict[str, Any]]:
        """Sent notifications, oldest first (optionally only those to ``to``)."""
        where: list[Filter] = [("to", "==", to)] if to else []
        return [doc for _, doc in self.store.list(OUTBOX, where=where, order_by="sent_at")]


class GmailNotifier(Notifier):
    """Reviewer emails sent from the agent's Gmail mailbox (``GoogleWorkspace.send_message``)."""

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

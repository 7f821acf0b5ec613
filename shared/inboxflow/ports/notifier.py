"""The notifier port: how reviewers are told that a decision waits for them.

A notification is an effect (run through the effect journal), so every
notifier can find a message it already sent by the effect key it was
stamped with; a re-run after a crash then sends nothing twice. Adapters:
``adapters.notifiers.OutboxNotifier`` (the embedded default) and
``adapters.notifiers.GmailNotifier``; ``tests/contract/test_notifier.py``
runs against both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


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

        Args:
            to: the reviewer.
            subject: one header line; carries no link or token.
            text: the plain-text body (with the review link).
            html: the HTML alternative.
            trace_key: the effect key the message is found by afterwards.
            sender: the mailbox to send from (default: the notifier's own).

        Returns:
            ``{"id": ...}``.
        """

    @abstractmethod
    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        """The email already sent with ``trace_key`` (from ``sender``): ``{"id": ...}``, or None."""

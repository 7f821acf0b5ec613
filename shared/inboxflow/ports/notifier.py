"""The notifier port: how reviewers are told that a decision waits for them.

A notification is an effect (run through the effect journal), so every
notifier can find a message it already sent by the effect key it was
stamped with; a re-run after a crash then sends nothing twice. Adapters
(``tests/contract/test_notifier.py`` runs against each):

- ``adapters.notifiers.OutboxNotifier``: the embedded default, a redacted copy
  in the store's ``outbox/`` (per channel, for ``inboxflow outbox``);
- ``adapters.notifiers.GmailNotifier``: Gmail, found again by its trace header;
- ``adapters.ses_notifier.SesNotifier``: Amazon SES v2 through boto3;
- ``adapters.webhook_notifier.WebhookNotifier``: Google Chat / Slack incoming webhooks;
- ``adapters.channels.ChannelNotifier``: each reviewer through the channel
  ``inboxflow.yaml`` gives them (``reviewers:``).

SES and webhooks cannot be searched afterwards: those adapters keep a receipt
(the redacted copy in ``outbox/``) the moment the service accepts a message.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any


class NotificationRefused(Exception):
    """The channel refuses this message for good (unverified recipient, 4xx): retrying cannot help.

    The approval records the message for that reviewer; the other reviewers are
    still notified.

    Attributes:
        channel: ``ses``, ``webhook``, ...
        reason: what the channel said, one line.
    """

    def __init__(self, channel: str, reason: str) -> None:
        super().__init__(f"{channel}: {reason}")
        self.channel = channel
        self.reason = reason


@dataclass(frozen=True)
class Notification:
    """One reviewer notification.

    Attributes:
        to: the reviewer.
        subject: one header line; carries no link or token.
        text: the plain-text body (with the review link).
        html: the HTML alternative (every value in it escaped).
        trace_key: the effect key the message is found by afterwards.
        sender: the mailbox to send from (default: the notifier's own).
        link: the review link on its own (a chat card's button), when there is one.
    """

    to: str
    subject: str
    text: str
    html: str
    trace_key: str
    sender: str | None = None
    link: str | None = None


class Notifier(ABC):
    """Sends reviewer notifications."""

    @abstractmethod
    def send(self, note: Notification) -> dict[str, Any]:
        """Send one notification (plain text + HTML alternative) stamped with ``note.trace_key``.

        Returns:
            ``{"id": ...}``; a mail channel adds ``thread_id`` (the sent message's thread
            in the sending mailbox) and ``mailbox`` (that mailbox), so that a reply
            found in that thread leads back to the notification.

        Raises:
            NotificationRefused: the channel refuses it for good.
            RetryableError: the channel is unavailable (its own retries are spent).
        """

    @abstractmethod
    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        """The message already sent with ``trace_key`` (from ``sender``), shaped as ``send``
        returns it, or None."""

"""The Gmail reader port: the few Gmail v1 calls ingestion makes.

``users.history.list``, ``users.messages.list``, ``users.messages.get``
(``format=raw``) and ``users.watch``, each for one mailbox (``userId`` is the
mailbox address). Adapters translate the API's failures into the errors below
so that ingestion decides retries in one place: ``GoogleApiGmailReader``
(``adapters/google_gmail_reader.py``) and ``InMemoryGmailReader``
(``dev/adapters/memory_gmail_reader.py``, local runs and tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import RetryableError

INBOX = "INBOX"
SENT = "SENT"
DRAFT = "DRAFT"


class GmailError(Exception):
    """A Gmail call failed.

    Attributes:
        status: the HTTP status (0 when there was no answer).
    """

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class HistoryExpired(GmailError):
    """``history.list`` answered 404: the start history id is too old (or unknown)."""


class MessageGone(GmailError):
    """``messages.get`` answered 404: the message was deleted before we fetched it."""


class MailboxDisconnected(GmailError):
    """The mailbox's authorization was revoked or has expired (``invalid_grant``): no retry
    can succeed until a person reconnects it (``inboxflow mailbox connect ADDRESS``)."""


class GmailRateLimited(GmailError, RetryableError):
    """429, or 403 with a rate-limit reason: slow down and try again."""


class GmailUnavailable(GmailError, RetryableError):
    """5xx or no answer: transient."""


@dataclass(frozen=True)
class AddedMessage:
    """A message from a ``messageAdded`` history record (or a ``messages.list`` row)."""

    gmail_id: str
    thread_id: str = ""
    label_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class HistoryPage:
    """One page of ``users.history.list``.

    Attributes:
        added: ``messagesAdded`` of every history record on the page, in order.
        history_id: the mailbox's current history id (the response's ``historyId``).
        next_page_token: absent on the last page.
    """

    added: Sequence[AddedMessage]
    history_id: int
    next_page_token: str | None = None


@dataclass(frozen=True)
class MessagePage:
    """One page of ``users.messages.list``."""

    messages: Sequence[AddedMessage]
    next_page_token: str | None = None


@dataclass(frozen=True)
class RawMessage:
    """``users.messages.get(format=raw)``: the RFC 5322 bytes and Gmail's metadata."""

    gmail_id: str
    thread_id: str
    raw: bytes
    label_ids: tuple[str, ...] = ()
    internal_date_ms: int | None = None
    history_id: int | None = None


@dataclass(frozen=True)
class WatchResult:
    """``users.watch``: the mailbox's history id now and when the watch expires."""

    history_id: int
    expiration_ms: int


class GmailReader(Protocol):
    """What ingestion needs from Gmail, per mailbox address.

    Every method raises ``GmailRateLimited`` or ``GmailUnavailable`` for
    transient failures and ``GmailError`` for the rest.
    """

    def list_history(
        self, mailbox: str, start_history_id: int, page_token: str | None = None
    ) -> HistoryPage:
        """One page of ``messageAdded`` history after ``start_history_id``.

        Raises:
            HistoryExpired: the start history id is too old.
        """
        ...

    def list_messages(
        self, mailbox: str, label_ids: Sequence[str], query: str, page_token: str | None = None
    ) -> MessagePage:
        """One page of ``messages.list`` (ids only)."""
        ...

    def get_raw(self, mailbox: str, gmail_id: str) -> RawMessage:
        """The message in ``format=raw``.

        Raises:
            MessageGone: it no longer exists.
        """
        ...

    def watch(self, mailbox: str, topic: str, label_ids: Sequence[str]) -> WatchResult:
        """Start or renew the mailbox's push notifications to ``topic``."""
        ...

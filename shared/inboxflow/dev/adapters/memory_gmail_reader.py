"""The ``GmailReader`` port in memory: a fake for unit tests and benches.

It keeps Gmail's semantics that ingestion relies on: every change bumps the
mailbox's history id, ``list_history`` pages through ``messageAdded`` records
after a start id, a start id older than the retained history answers
``HistoryExpired``, and ``fail_next`` injects rate limits or outages.
``list_messages`` filters by labels only; its search query is ignored.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ...ports.gmail_reader import (
    INBOX,
    AddedMessage,
    GmailError,
    GmailRateLimited,
    GmailUnavailable,
    HistoryExpired,
    HistoryPage,
    MessageGone,
    MessagePage,
    RawMessage,
    WatchResult,
)

Notify = Callable[[str, int], None]


@dataclass
class _Mailbox:
    history_id: int = 1000
    messages: dict[str, RawMessage] = field(default_factory=dict)
    history: list[tuple[int, AddedMessage]] = field(default_factory=list)
    oldest_history_id: int = 0


class InMemoryGmailReader:
    """Mailboxes in memory behind the ``GmailReader`` interface.

    Args:
        page_size: history records (and list rows) per page.
    """

    def __init__(self, page_size: int = 100) -> None:
        self.page_size = page_size
        self.calls: dict[str, int] = {}
        self.watches: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._mailboxes: dict[str, _Mailbox] = {}
        self._failures: list[tuple[str, GmailError, int]] = []
        self._listeners: list[Notify] = []
        self._lock = threading.RLock()

    # --- test hooks ------------------------------------------------------------------

    def deliver(
        self,
        mailbox: str,
        raw: bytes,
        labels: Sequence[str] = (INBOX,),
        thread_id: str | None = None,
        notify: bool = True,
    ) -> str:
        """Add a message to a mailbox (a new history record); returns its Gmail id."""
        with self._lock:
            box = self._mailboxes.setdefault(mailbox, _Mailbox())
            box.history_id += 1
            gmail_id = hashlib.sha1(f"{mailbox}:{box.history_id}".encode()).hexdigest()[:16]
            message = RawMessage(
                gmail_id=gmail_id,
                thread_id=thread_id or gmail_id,
                raw=raw,
                label_ids=tuple(labels),
                internal_date_ms=box.history_id * 1000,
                history_id=box.history_id,
            )
            box.messages[gmail_id] = message
            box.history.append(
                (box.history_id, AddedMessage(gmail_id, message.thread_id, message.label_ids))
            )
            history_id = box.history_id
            listeners = list(self._listeners)
        if notify:
            for listener in listeners:
                listener(mailbox, history_id)
        return gmail_id

    def change_labels(
        self, mailbox: str, gmail_id: str, add: Sequence[str] = (), remove: Sequence[str] = ()
    ) -> None:
        """Relabel a message: a new history record, but not a ``messageAdded`` one."""
        with self._lock:
            box = self._mailboxes[mailbox]
            message = box.messages[gmail_id]
            labels = tuple(label for label in message.label_ids if label not in remove)
            labels += tuple(label for label in add if label not in labels)
            box.history_id += 1
            box.messages[gmail_id] = replace(message, label_ids=labels, history_id=box.history_id)

    def delete(self, mailbox: str, gmail_id: str) -> None:
        """Remove a message (``get_raw`` then answers ``MessageGone``)."""
        with self._lock:
            self._mailboxes[mailbox].messages.pop(gmail_id, None)

    def expire_history(self, mailbox: str) -> None:
        """Forget all history so far: older start ids answer ``HistoryExpired``."""
        with self._lock:
            box = self._mailboxes.setdefault(mailbox, _Mailbox())
            box.oldest_history_id = box.history_id
            box.history.clear()

    def history_id(self, mailbox: str) -> int:
        """The mailbox's current history id."""
        with self._lock:
            return self._mailboxes.setdefault(mailbox, _Mailbox()).history_id

    def fail_next(self, method: str, error: GmailError, times: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` raise ``error``."""
        with self._lock:
            self._failures.append((method, error, times))

    def on_notify(self, listener: Notify) -> None:
        """Call ``listener(mailbox, history_id)`` after every delivery."""
        self._listeners.append(listener)

    @staticmethod
    def rate_limited() -> GmailRateLimited:
        """The error a 429 answer becomes."""
        return GmailRateLimited("429 Too Many Requests", 429)

    @staticmethod
    def unavailable() -> GmailUnavailable:
        """The error a 503 answer becomes."""
        return GmailUnavailable("503 Service Unavailable", 503)

    # --- the port ----------------------------------------------------------------------

    def _enter(self, method: str) -> None:
        self.calls[method] = self.calls.get(method, 0) + 1
        for index, (name, error, times) in enumerate(self._failures):
            if name == method:
                if times <= 1:
                    del self._failures[index]
                else:
                    self._failures[index] = (name, error, times - 1)
                raise error

    def list_history(
        self, mailbox: str, start_history_id: int, page_token: str | None = None
    ) -> HistoryPage:
        with self._lock:
            self._enter("history.list")
            box = self._mailboxes.setdefault(mailbox, _Mailbox())
            if start_history_id < box.oldest_history_id:
                raise HistoryExpired(f"startHistoryId {start_history_id} is too old", 404)
            records = [m for hid, m in box.history if hid > start_history_id]
            offset = int(page_token or 0)
            page = records[offset : offset + self.page_size]
            more = offset + self.page_size < len(records)
            return HistoryPage(
                added=page,
                history_id=box.history_id,
                next_page_token=str(offset + self.page_size) if more else None,
            )

    def list_messages(
        self, mailbox: str, label_ids: Sequence[str], query: str, page_token: str | None = None
    ) -> MessagePage:
        with self._lock:
            self._enter("messages.list")
            box = self._mailboxes.setdefault(mailbox, _Mailbox())
            rows = [
                AddedMessage(m.gmail_id, m.thread_id)
                for m in sorted(box.messages.values(), key=lambda m: -(m.history_id or 0))
                if set(label_ids) <= set(m.label_ids)
            ]
            offset = int(page_token or 0)
            more = offset + self.page_size < len(rows)
            return MessagePage(
                messages=rows[offset : offset + self.page_size],
                next_page_token=str(offset + self.page_size) if more else None,
            )

    def get_raw(self, mailbox: str, gmail_id: str) -> RawMessage:
        with self._lock:
            self._enter("messages.get")
            message = self._mailboxes.setdefault(mailbox, _Mailbox()).messages.get(gmail_id)
            if message is None:
                raise MessageGone(f"message {gmail_id} not found", 404)
            return message

    def watch(self, mailbox: str, topic: str, label_ids: Sequence[str]) -> WatchResult:
        with self._lock:
            self._enter("watch")
            self.watches[mailbox] = (topic, tuple(label_ids))
            box = self._mailboxes.setdefault(mailbox, _Mailbox())
            return WatchResult(
                history_id=box.history_id,
                expiration_ms=int(time.time() * 1000) + 7 * 86_400_000,
            )

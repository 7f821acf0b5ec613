"""The mailbox registry: ``mailboxes/{address}``.

One document per watched mailbox: the graph its mail starts, its settings
(reviewers, auto-send, ...), the history cursor ingestion has processed up
to, and the state of its Gmail watch. The cursor only moves forward, in a
transaction, whatever order notifications arrive in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field, field_validator

from ..field_defaults import empty_dict
from ..mail.addresses import address_key_or_none
from ..ports.documents import DocumentStore, Transaction
from ..schema import MAILBOXES

DEFAULT_GRAPH = "pipeline"
CONNECTED = "connected"
DISCONNECTED = "disconnected"


class UnknownMailbox(LookupError):
    """No ``mailboxes/{address}`` document."""


class Mailbox(BaseModel):
    """A watched mailbox.

    Attributes:
        address: the Gmail address (``userId`` of every API call).
        graph: the graph a new message starts.
        settings: per-mailbox settings the graphs read (reviewers, auto_send, ...).
        history_id: the cursor: every ``messageAdded`` up to it has been claimed.
        watch_history_id: ``historyId`` of the last ``users.watch`` answer.
        watch_expiration_ms: when that watch stops (epoch milliseconds).
        watch_error: why the last renewal failed, if it did.
        last_full_sync: ``{at, messages, reason, truncated}`` of the last bounded full sync.
        sync_owner: the ingest run listing the mailbox's history now (``mailbox_sync.py``).
        sync_lease_until: until when that run holds the listing (renewed while it lives).
        sync_history_id: the history id of the notification that run is handling.
        sync_wanted: the highest history id of the notifications acknowledged while it
            listed: it lists again before letting go while the cursor is behind this.
        health: ``connected``, or ``disconnected`` once Gmail refused its authorization
            (``invalid_grant``): ingestion then acknowledges its notifications without
            calling Gmail until ``inboxflow mailbox connect`` stores a new token.
        disconnected_at: when it was marked disconnected.
        disconnected_reason: why.
        credential: how the mailbox is authorized, as ``connect`` recorded it
            (``{type, scopes, where, connected_at}``; never the token).
        last_notification_at: when its last Gmail notification arrived.
        last_message_ms: ``internalDate`` of the newest message ingested: a catch-up
            listing (``messages.list``) starts there.
    """

    address: str
    graph: str = DEFAULT_GRAPH
    settings: dict[str, Any] = Field(default_factory=empty_dict)
    history_id: int | None = None
    watch_history_id: int | None = None
    watch_expiration_ms: int | None = None
    watch_renewed_at: float | None = None
    watch_error: str | None = None
    last_full_sync: dict[str, Any] | None = None
    sync_owner: str | None = None
    sync_lease_until: float = 0.0
    sync_history_id: int | None = None
    sync_wanted: int | None = None
    health: str = "connected"
    disconnected_at: float | None = None
    disconnected_reason: str | None = None
    credential: dict[str, Any] | None = None
    last_notification_at: float | None = None
    last_message_ms: int | None = None
    created_at: float = 0.0
    updated_at: float = 0.0

    @field_validator("address")
    @classmethod
    def _normalise(cls, value: str) -> str:
        return normalise_address(value)


def normalise_address(address: str) -> str:
    """The registry key of an address: its ``address_key`` (ASCII case only, IDNA domain).

    Raises:
        ValueError: not an address, or one that cannot be a document id.
    """
    value = address_key_or_none(address)
    if value is None or "/" in value:
        raise ValueError(f"not a mailbox address: {address!r}")
    return value


def mailbox_path(address: str) -> str:
    """Document path of a mailbox."""
    return MAILBOXES.path(normalise_address(address))


def registered_doc(tx: Transaction, address: str) -> dict[str, Any]:
    """The mailbox's stored document as read in the transaction ``tx``.

    Raises:
        UnknownMailbox: it is not registered.
    """
    doc = tx.get(mailbox_path(address))
    if doc is None:
        raise UnknownMailbox(f"mailbox {address!r} is not registered")
    return doc


class MailboxRegistry:
    """Reads and updates ``mailboxes/{address}`` through the checkpoint store port."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store

    def add(
        self,
        address: str,
        now: float,
        graph: str = DEFAULT_GRAPH,
        settings: Mapping[str, Any] | None = None,
    ) -> Mailbox:
        """Register a mailbox, or update the graph and settings of a registered one.

        The cursor and watch state of an existing mailbox are kept.
        """
        path = mailbox_path(address)

        def upsert(tx: Transaction) -> Mailbox:
            doc = tx.get(path)
            if doc is None:
                mailbox = Mailbox(address=address, graph=graph, created_at=now)
            else:
                mailbox = Mailbox.model_validate(doc).model_copy(update={"graph": graph})
            if settings is not None:
                mailbox.settings = {**mailbox.settings, **settings}
            mailbox.updated_at = now
            tx.set(path, mailbox.model_dump())
            return mailbox

        return self.store.run_transaction(upsert)

    def get(self, address: str) -> Mailbox | None:
        """The mailbox, or None if it is not registered."""
        doc = self.store.get(mailbox_path(address))
        return Mailbox.model_validate(doc) if doc is not None else None

    def mailboxes(self) -> list[Mailbox]:
        """Every registered mailbox, by address."""
        return [Mailbox.model_validate(doc) for _, doc in self.store.list(MAILBOXES.name)]

    def advance_cursor(
        self, address: str, history_id: int, now: float, **updates: Any
    ) -> tuple[int | None, int]:
        """Move the cursor to ``history_id`` unless it is already there or beyond.

        Args:
            address: the mailbox.
            history_id: the history id processed up to.
            now: the time of the update.
            **updates: other mailbox fields to set in the same write (``last_full_sync``).

        Returns:
            ``(before, after)``: the cursor as found and as left (never smaller).

        Raises:
            UnknownMailbox: it is not registered.
        """
        path = mailbox_path(address)

        def advance(tx: Transaction) -> tuple[int | None, int]:
            doc = registered_doc(tx, address)
            before = doc.get("history_id")
            after = history_id if before is None else max(int(before), history_id)
            if after != before or updates:
                doc.update(updates, history_id=after, updated_at=now)
                tx.set(path, doc)
            return before, after

        return self.store.run_transaction(advance)

    def record_watch(
        self,
        address: str,
        now: float,
        history_id: int | None = None,
        expiration_ms: int | None = None,
        error: str | None = None,
    ) -> Mailbox:
        """Store the outcome of a ``users.watch`` call.

        A successful watch sets the cursor when the mailbox has none yet (mail
        after that history id is ingested); an existing cursor is never moved.
        """
        path = mailbox_path(address)

        def record(tx: Transaction) -> Mailbox:
            mailbox = Mailbox.model_validate(registered_doc(tx, address))
            mailbox.watch_error = error
            mailbox.updated_at = now
            if error is None:
                mailbox.watch_history_id = history_id
                mailbox.watch_expiration_ms = expiration_ms
                mailbox.watch_renewed_at = now
                if mailbox.history_id is None and history_id is not None:
                    mailbox.history_id = history_id
            tx.set(path, mailbox.model_dump())
            return mailbox

        return self.store.run_transaction(record)

    def mark_disconnected(self, address: str, reason: str, now: float) -> bool:
        """Mark the mailbox ``disconnected``; True only for the call that changed it (its one notice).

        Raises:
            UnknownMailbox: it is not registered.
        """
        path = mailbox_path(address)

        def mark(tx: Transaction) -> bool:
            doc = registered_doc(tx, address)
            if doc.get("health") == DISCONNECTED:
                return False
            doc.update(
                health=DISCONNECTED,
                disconnected_at=now,
                disconnected_reason=reason,
                updated_at=now,
            )
            tx.set(path, doc)
            return True

        return self.store.run_transaction(mark)

    def record_connection(self, address: str, credential: Mapping[str, Any], now: float) -> Mailbox:
        """A new authorization is stored: the mailbox is ``connected`` with ``credential``
        (type, scopes, where: never the token).

        Raises:
            UnknownMailbox: it is not registered.
        """
        path = mailbox_path(address)

        def connect(tx: Transaction) -> Mailbox:
            mailbox = Mailbox.model_validate(registered_doc(tx, address))
            mailbox.health = CONNECTED
            mailbox.disconnected_at = mailbox.disconnected_reason = None
            mailbox.credential = {**dict(credential), "connected_at": now}
            mailbox.updated_at = now
            tx.set(path, mailbox.model_dump())
            return mailbox

        return self.store.run_transaction(connect)

"""One run lists a mailbox's history at a time: the sync lease on ``mailboxes/{address}``.

Every new message makes Gmail publish a notification, so a burst of N messages
brings N notifications at once. If each listed the history from the cursor,
Gmail calls would grow with the square of the burst. Instead, in one
transaction on the mailbox document, a notification:

- at or behind the cursor is **stale**: nothing to do;
- finding another run listing under a live lease is **deferred**: its history id
  is recorded as ``sync_wanted`` and it is acknowledged at once, no list. The
  listing run does not let go of the mailbox while the cursor is behind
  ``sync_wanted`` (it lists again from the new cursor), in the same transaction
  that moves the cursor, so a deferred notification is always covered;
- that is the listing run's own notification delivered again (the same history
  id) is **busy**: retryable, never deferred nor stale (the run may have moved
  the cursor past it and still owe a listing to deferred ones). The listing
  run's notification is the one not acknowledged yet, so if that run dies, its
  redelivery is what lists after it: the lease is short (``SYNC_LEASE_S``,
  renewed by the run's heartbeat), so the redelivery takes it well within
  Pub/Sub's retry budget;
- else it takes the lease and **lists**, also when it is behind the cursor but
  deferred notifications are ahead of it with nobody listing (the run they were
  deferred to failed or died after moving the cursor).

A run that fails gives the lease back (``release``) and raises, so its
notification is redelivered and lists again at once. A notification for a
mailbox marked ``disconnected`` (its authorization refused) is acknowledged
without a listing: Gmail is not called until the mailbox is connected again.
Every notification but a busy one records ``last_notification_at``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..ports.documents import DocumentStore, Transaction
from .claims import CLAIM_LEASE_S
from .mailboxes import DISCONNECTED, Mailbox, mailbox_path, registered_doc

SYNC_LEASE_S = CLAIM_LEASE_S
"""How long a listing run's hold on a mailbox outlives its last renewal (as a claim's)."""

Turn = Literal["stale", "deferred", "busy", "listing", "disconnected"]


@dataclass(frozen=True)
class SyncTurn:
    """What a notification does, decided in one transaction on the mailbox.

    Attributes:
        turn: ``stale``, ``deferred``, ``busy`` or ``listing`` (see the module), or
            ``disconnected``: the mailbox's authorization is gone, Gmail is not called.
        mailbox: the mailbox as read in that transaction (its cursor).
    """

    turn: Turn
    mailbox: Mailbox


@dataclass(frozen=True)
class SyncEnd:
    """The cursor after a listing round.

    Attributes:
        before: the cursor as found.
        after: the cursor as left (never smaller).
        again: notifications were deferred past ``after`` while the round listed:
            the run still holds the mailbox and lists again from ``after``.
    """

    before: int | None
    after: int
    again: bool


class MailboxSync:
    """The sync lease and cursor of ``mailboxes/{address}``, in transactions.

    Args:
        store: the documents port.
        lease_s: how long a hold outlives its last renewal.
    """

    def __init__(self, store: DocumentStore, lease_s: float = SYNC_LEASE_S) -> None:
        self.store = store
        self.lease_s = lease_s

    def begin(self, address: str, history_id: int, owner: str, now: float) -> SyncTurn:
        """Decide what the notification ``history_id`` does (taking the lease to list).

        Raises:
            UnknownMailbox: the mailbox is not registered.
            ValueError: ``address`` is not an address.
        """
        path = mailbox_path(address)

        def decide(tx: Transaction) -> SyncTurn:
            doc = registered_doc(tx, address)
            mailbox = Mailbox.model_validate(doc)
            held = _held_by_another(mailbox, owner, now)
            if held and history_id == mailbox.sync_history_id:
                return SyncTurn("busy", mailbox)
            doc["last_notification_at"] = now
            cursor = mailbox.history_id
            if mailbox.health == DISCONNECTED:
                tx.set(path, doc)
                return SyncTurn("disconnected", mailbox)
            if cursor is not None and history_id <= cursor and (held or not _owed(mailbox)):
                tx.set(path, doc)
                return SyncTurn("stale", mailbox)
            if held:
                if history_id > (mailbox.sync_wanted or 0):
                    doc["sync_wanted"] = history_id
                tx.set(path, {**doc, "updated_at": now})
                return SyncTurn("deferred", mailbox)
            tx.set(
                path,
                {
                    **doc,
                    "sync_owner": owner,
                    "sync_lease_until": now + self.lease_s,
                    "sync_history_id": history_id,
                    "updated_at": now,
                },
            )
            return SyncTurn("listing", mailbox)

        return self.store.run_transaction(decide)

    def renew(self, address: str, owner: str, now: float) -> bool:
        """Extend ``owner``'s hold; False once it is not ``owner``'s any more."""
        path = mailbox_path(address)

        def extend(tx: Transaction) -> bool:
            doc = tx.get(path)
            if doc is None or doc.get("sync_owner") != owner:
                return False
            tx.set(path, {**doc, "sync_lease_until": now + self.lease_s})
            return True

        return self.store.run_transaction(extend)

    def finish(
        self, address: str, owner: str, history_id: int, now: float, **updates: Any
    ) -> SyncEnd:
        """Move the cursor to ``history_id`` (a max) and let go, unless more was deferred.

        Args:
            address: the mailbox.
            owner: the listing run.
            history_id: every message up to it is claimed and carried out.
            now: the time of the update.
            **updates: other mailbox fields to set in the same write (``last_full_sync``).

        Raises:
            UnknownMailbox: the mailbox is not registered.
        """
        path = mailbox_path(address)

        def advance(tx: Transaction) -> SyncEnd:
            doc = registered_doc(tx, address)
            before = doc.get("history_id")
            after = history_id if before is None else max(int(before), history_id)
            wanted = doc.get("sync_wanted")
            again = False
            changed: dict[str, Any] = {**updates, "history_id": after, "updated_at": now}
            if updates.get("last_message_ms") is not None and doc.get("last_message_ms"):
                changed["last_message_ms"] = max(
                    int(updates["last_message_ms"]), int(doc["last_message_ms"])
                )
            if doc.get("sync_owner") == owner:
                again = wanted is not None and int(wanted) > after
                if again:
                    changed["sync_lease_until"] = now + self.lease_s
                else:
                    changed.update(_released())
            tx.set(path, {**doc, **changed})
            return SyncEnd(before, after, again)

        return self.store.run_transaction(advance)

    def release(self, address: str, owner: str, now: float) -> None:
        """Give the hold back (the run failed): its redelivery, or any other, lists at once.

        ``sync_wanted`` is kept: whoever lists next covers what was deferred.
        """
        path = mailbox_path(address)

        def give_back(tx: Transaction) -> None:
            doc = tx.get(path)
            if doc is not None and doc.get("sync_owner") == owner:
                tx.set(
                    path, {**doc, "sync_owner": None, "sync_lease_until": 0.0, "updated_at": now}
                )

        self.store.run_transaction(give_back)


def _held_by_another(mailbox: Mailbox, owner: str, now: float) -> bool:
    return (
        bool(mailbox.sync_owner) and mailbox.sync_owner != owner and mailbox.sync_lease_until > now
    )


def _owed(mailbox: Mailbox) -> bool:
    """Deferred notifications are ahead of the cursor: the run that took them let go first."""
    wanted = mailbox.sync_wanted
    return wanted is not None and (mailbox.history_id is None or wanted > mailbox.history_id)


def _released() -> dict[str, Any]:
    return {
        "sync_owner": None,
        "sync_lease_until": 0.0,
        "sync_history_id": None,
        "sync_wanted": None,
    }

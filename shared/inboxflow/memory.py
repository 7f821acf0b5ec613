"""Per-mailbox preference memory (``PreferenceMemory``): versioned documents over the
documents port.

Each namespace of a mailbox is one document, ``memory/{mailbox}:{namespace}``:
``{mailbox, namespace, profile, version, updated_at, why, sources}`` (``sources``:
the last ``SOURCES_KEEP`` changes' ``{source, version}``). Every change is an
optimistic read and one conditional write (``DocumentStore.get_versioned``,
``update_if_unchanged``; on Firestore an update-time precondition, no
transaction): the new profile is computed from the version read, and if another
writer got there first the write fails and the change is read and computed again
from theirs (at most ``MAX_ATTEMPTS`` rounds, jittered backoff), so no concurrent
write is lost and no read holds a lock while the change is computed. The same
write keeps the change in ``memory/{mailbox}:{namespace}/history/{version:06d}``;
the entries older than the last ``HISTORY_KEEP`` are deleted after it. A change
names its ``source`` (trace and step): the same source applied twice (a re-run
step) changes nothing the second time. The first change of a namespace creates
its document empty at version 0 (create-only: the first writer's create wins),
which reads as the defaults, and then writes version 1 like any other.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .clock import Clock
from .errors import Contention, RetryableError
from .ports.documents import DocumentStore, Transaction, Versioned
from .schema import MEMORY, MEMORY_HISTORY

log = logging.getLogger(__name__)

HISTORY_KEEP = 50
SOURCES_KEEP = 50
MAX_ATTEMPTS = 20
BACKOFF_S = 0.02
"""The first retry waits up to this; each later one up to twice the last (jittered)."""
BACKOFF_MAX_S = 1.0

DEFAULTS: dict[str, dict[str, Any]] = {
    "triage_preferences": {
        "ignore_senders": [],
        "ignore_domains": [],
        "notify_senders": [],
        "respond_senders": [],
        "notify_ignored_once": [],
        "notes": [],
    },
    "response_preferences": {
        "greeting": "Hi {first_name},",
        "sign_off": "Best regards",
        "tone": "friendly and brief",
        "notes": [],
    },
    "cal_preferences": {
        "default_duration_minutes": 30,
        "preferred_start_time": "10:00",
        "notes": [],
    },
}
"""The namespaces and their profiles on first use."""

NAMESPACES: tuple[str, ...] = tuple(DEFAULTS)


@dataclass(frozen=True)
class Memory:
    """One namespace of a mailbox as read.

    Attributes:
        mailbox: the mailbox it belongs to.
        namespace: ``triage_preferences``, ``response_preferences`` or ``cal_preferences``.
        profile: the preferences.
        version: 0 for the defaults never written, then 1, 2, ...
        updated_at: when it last changed (None: defaults).
        why: what the last change said about itself.
    """

    mailbox: str
    namespace: str
    profile: dict[str, Any]
    version: int = 0
    updated_at: float | None = None
    why: str = ""


Change = Callable[[Memory], "tuple[dict[str, Any], str] | None"]
"""Computes ``(new profile, why)`` from the current memory, or None for no change."""


def memory_path(mailbox: str, namespace: str) -> str:
    """``memory/{mailbox}:{namespace}``.

    Raises:
        ValueError: unknown namespace, or a mailbox that cannot be a document id.
    """
    if namespace not in DEFAULTS:
        raise ValueError(f"unknown memory namespace {namespace!r} (known: {', '.join(NAMESPACES)})")
    box = mailbox.strip().lower()
    if not box or "/" in box:
        raise ValueError(f"mailbox {mailbox!r} cannot name a memory document")
    return MEMORY.path(f"{box}:{namespace}")


def _memory(mailbox: str, namespace: str, doc: Mapping[str, Any] | None) -> Memory:
    if doc is None:
        return Memory(mailbox.strip().lower(), namespace, _default(namespace))
    return Memory(
        str(doc["mailbox"]),
        namespace,
        {**_default(namespace), **dict(doc.get("profile") or {})},
        int(doc.get("version", 0)),
        doc.get("updated_at"),
        str(doc.get("why", "")),
    )


def _default(namespace: str) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, list) else v for k, v in DEFAULTS[namespace].items()}


class PreferenceMemory:
    """The preference memory of every mailbox, over the documents port.

    Args:
        store: where the memory documents live.
        clock: for ``updated_at`` and a reset's source.
    """

    def __init__(self, store: DocumentStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def read(self, mailbox: str, namespace: str) -> Memory:
        """The namespace's current profile (the defaults if never written).

        Raises:
            ValueError: unknown namespace, or a mailbox that cannot be a document id.
        """
        return _memory(mailbox, namespace, self.store.get(memory_path(mailbox, namespace)))

    def update(self, mailbox: str, namespace: str, change: Change, source: str) -> Memory:
        """Apply ``change`` to the current version: one write conditioned on that version.

        ``change`` runs outside any transaction (it may ask a model); when the
        version moved meanwhile the write fails, and ``change`` runs again on the
        newer memory.

        Args:
            mailbox: the mailbox.
            namespace: the namespace.
            change: computes the new profile and why, or None (nothing to change).
            source: what caused it (``{trace_id}:{step}``); applied at most once.

        Returns:
            The memory after the change (unchanged when ``change`` says none or
            ``source`` was applied before).

        Raises:
            Contention: other writers won each of ``MAX_ATTEMPTS`` rounds.
            ValueError: unknown namespace, or a mailbox that cannot be a document id.
        """
        path = memory_path(mailbox, namespace)
        seen: list[int] = []
        for attempt in range(MAX_ATTEMPTS):
            if attempt:  # another writer won the last round: let the crowd spread out
                time.sleep(random.uniform(0, min(BACKOFF_MAX_S, BACKOFF_S * 2 ** (attempt - 1))))
            found = self._versioned(path, mailbox, namespace)
            if found is None:
                continue
            current = _memory(mailbox, namespace, found.doc)
            if _applied(found.doc, source) is not None:
                return current
            proposed = change(current)
            if proposed is None:
                return current
            profile, why = proposed
            seen.append(current.version)
            try:
                now = self.clock.now()
                written = _commit(self.store, path, found, current, profile, why, source, now)
            except Contention:  # the embedded store's own transaction gave up: another round
                written = None
            if written is not None:
                _prune(self.store, path, written.version)
                return written
        raise Contention(
            f"{path}: {source!r} lost to other writers {MAX_ATTEMPTS} times "
            f"(versions read: {', '.join(map(str, seen)) or 'none'}); nothing written"
        )

    def _versioned(self, path: str, mailbox: str, namespace: str) -> Versioned | None:
        """The document and its version; an absent one is created empty at version 0 first
        (create-only: one writer's wins, the others read it), so that a change is always a
        conditional update. None: it was erased again before the read (another round)."""
        found = self.store.get_versioned(path)
        if found is not None:
            return found
        self.store.create(
            path,
            {
                "mailbox": mailbox.strip().lower(),
                "namespace": namespace,
                "profile": {},
                "version": 0,
                "updated_at": None,
                "why": "",
                "sources": [],
            },
        )
        return self.store.get_versioned(path)

    def source_version(self, mailbox: str, namespace: str, source: str) -> int | None:
        """The version a change from ``source`` made (None: it made none, or it is too old to tell)."""
        return _applied(self.store.get(memory_path(mailbox, namespace)), source)

    def history(self, mailbox: str, namespace: str) -> list[dict[str, Any]]:
        """The kept changes of a namespace, newest first: ``{version, at, why, source, before,
        after}`` each."""
        path = memory_path(mailbox, namespace)
        return [
            doc
            for _, doc in self.store.list(
                f"{path}/{MEMORY_HISTORY.name}",
                order_by="version",
                descending=True,
                limit=HISTORY_KEEP,
            )
        ]

    def reset(self, mailbox: str, namespace: str) -> Memory:
        """Back to the defaults, as a new version (the history says so)."""
        return self.update(
            mailbox,
            namespace,
            lambda memory: (_default(namespace), "reset to the defaults"),
            source=f"reset:{self.clock.now()}",
        )


def _applied(doc: Mapping[str, Any] | None, source: str) -> int | None:
    """The version ``source`` made, if it is among the document's recent sources."""
    for entry in (doc or {}).get("sources") or []:
        if entry.get("source") == source:
            return int(entry["version"])
    return None


def _commit(
    store: DocumentStore,
    path: str,
    found: Versioned,
    current: Memory,
    profile: dict[str, Any],
    why: str,
    source: str,
    now: float,
) -> Memory | None:
    """Write version ``current.version + 1`` and its history entry in one write, if the
    document is still at ``found``'s version; else None."""
    version = current.version + 1
    sources = [*(found.doc.get("sources") or []), {"source": source, "version": version}]
    fields = {
        "mailbox": current.mailbox,
        "namespace": current.namespace,
        "profile": profile,
        "version": version,
        "updated_at": now,
        "why": why,
        "sources": sources[-SOURCES_KEEP:],
    }
    entry = {
        "version": version,
        "at": now,
        "why": why,
        "source": source,
        "before": current.profile,
        "after": profile,
    }
    also = {f"{path}/{MEMORY_HISTORY.name}/{version:06d}": entry}
    if not store.update_if_unchanged(path, found.version, fields, also):
        return None
    return Memory(current.mailbox, current.namespace, profile, version, now, why)


def _prune(store: DocumentStore, path: str, version: int) -> None:
    """Delete the history entries older than the last ``HISTORY_KEEP`` at ``version``.

    Separate from the change's write (a conditional update only writes): each change
    deletes every older entry there is, so one left by a crash in between goes with the
    next change, and ``history`` shows the last ``HISTORY_KEEP`` meanwhile. The
    transaction only writes: it reads nothing and locks no document another writer reads.
    """
    if version <= HISTORY_KEEP:
        return
    collection = f"{path}/{MEMORY_HISTORY.name}"
    try:
        old = store.list(collection, where=[("version", "<=", version - HISTORY_KEEP)])
    except RetryableError as exc:
        log.warning("%s: old history entries not listed: %s", collection, exc)
        return
    if not old:
        return

    def delete(tx: Transaction) -> None:
        for doc_id, _ in old:
            tx.delete(f"{collection}/{doc_id}")

    try:
        store.run_transaction(delete)
    except RetryableError as exc:  # the change is written; the next one deletes these
        log.warning("%s: old history entries not deleted yet: %s", collection, exc)

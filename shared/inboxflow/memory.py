"""Per-mailbox preference memory (``PreferenceMemory``): versioned documents over the
documents port.

Each namespace of a mailbox is one document, ``memory/{mailbox}:{namespace}``:
``{mailbox, namespace, profile, version, updated_at, why, sources}`` (``sources``:
the last ``SOURCES_KEEP`` changes' ``{source, version}``). Every
change is one transaction on the version: the new profile is computed from
the version read, and if another writer got there first the change is
computed again from theirs, so no concurrent write is lost. Each change is
also kept in ``memory/{mailbox}:{namespace}/history/{version:06d}`` (the last
``HISTORY_KEEP``), and a change names its ``source`` (trace and step): the
same source applied twice (a re-run step) changes nothing the second time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .clock import Clock
from .errors import Contention
from .ports.documents import DocumentStore, Transaction
from .schema import MEMORY, MEMORY_HISTORY

HISTORY_KEEP = 50
SOURCES_KEEP = 50
MAX_ATTEMPTS = 20
BACKOFF_S = 0.02

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
        """Apply ``change`` to the current version, in a transaction on that version.

        ``change`` runs outside the transaction (it may ask a model); when the
        version moved meanwhile it runs again on the newer memory.

        Args:
            mailbox: the mailbox.
            namespace: the namespace.
            change: computes the new profile and why, or None (nothing to change).
            source: what caused it (``{trace_id}:{step}``); applied at most once.

        Returns:
            The memory after the change (unchanged when ``change`` says none or
            ``source`` was applied before).

        Raises:
            Contention: the version kept moving for ``MAX_ATTEMPTS`` attempts.
            ValueError: unknown namespace, or a mailbox that cannot be a document id.
        """
        path = memory_path(mailbox, namespace)
        for attempt in range(MAX_ATTEMPTS):
            if attempt:  # another writer won the last round: let the crowd spread out
                time.sleep(random.uniform(0, BACKOFF_S * attempt))
            doc = self.store.get(path)
            current = _memory(mailbox, namespace, doc)
            if _applied(doc, source) is not None:
                return current
            proposed = change(current)
            if proposed is None:
                return current
            profile, why = proposed
            try:
                written = _commit(self.store, path, current, profile, why, source, self.clock.now())
            except Contention:  # the store's own transaction retries lost too: another round
                written = None
            if written is not None:
                return written
        raise Contention(f"{path}: the version kept changing over {MAX_ATTEMPTS} attempts")

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
                f"{path}/{MEMORY_HISTORY.name}", order_by="version", descending=True
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
    current: Memory,
    profile: dict[str, Any],
    why: str,
    source: str,
    now: float,
) -> Memory | None:
    """Write version ``current.version + 1`` if ``current`` is still the latest; else None."""

    def write(tx: Transaction) -> Memory | None:
        fresh = tx.get(path)
        if int((fresh or {}).get("version", 0)) != current.version:
            return None
        version = current.version + 1
        applied = {"source": source, "version": version}
        sources = [*((fresh or {}).get("sources") or []), applied][-SOURCES_KEEP:]
        tx.set(
            path,
            {
                "mailbox": current.mailbox,
                "namespace": current.namespace,
                "profile": profile,
                "version": version,
                "updated_at": now,
                "why": why,
                "sources": sources,
            },
        )
        tx.set(
            f"{path}/{MEMORY_HISTORY.name}/{version:06d}",
            {
                "version": version,
                "at": now,
                "why": why,
                "source": source,
                "before": current.profile,
                "after": profile,
            },
        )
        if version > HISTORY_KEEP:
            tx.delete(f"{path}/{MEMORY_HISTORY.name}/{version - HISTORY_KEEP:06d}")
        return Memory(current.mailbox, current.namespace, profile, version, now, why)

    return store.run_transaction(write)

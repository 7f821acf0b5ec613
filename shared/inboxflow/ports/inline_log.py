"""A trace's step log inside its checkpoint document while it fits (docs/architecture.md §5).

A store that pays per document written (Firestore) keeps each step's log entry
in the checkpoint document's ``log`` map, keyed ``{step:06d}``, written by the
same update that commits the checkpoint: a hop writes one document less, a
start one instead of two. The entry goes there only while

- no entry of the trace has gone to its own document yet (``log_spilled``): once
  one spilled, every later one does, so the newest entry of a step is the spilled one;
- the inline entries stay within ``log_bytes`` (each charged at least
  ``min_charge``, which also bounds how many there are);
- the whole checkpoint (its state included) stays within ``document_bytes``,
  far under Firestore's 1 MiB, so a state up to ``runtime.MAX_STATE_BYTES`` still
  commits: a state that grows past it moves the inline entries out (*eviction*);
- the trace is younger than ``window_s``: an inline entry lives as long as the
  checkpoint, whose ``expire_at`` every commit pushes on, where a step document
  expires ``retention_days`` after its own step. A commit later than the window
  moves the inline entries out to step documents with their own ``expire_at``,
  so no entry is kept more than ``window_s`` longer than before (under Firestore
  TTL's own delay of up to a day).

Otherwise the entry is written to ``traces/{id}/steps/{step:06d}`` as before.
Eviction writes the inline entries to their step documents and drops the map
in the commit's transaction. ``entries`` reads a checkpoint document's inline
entries; ``merge`` joins them with the spilled ones, in step order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pydantic_core

LOG_FIELD = "log"
"""The checkpoint document's map of inline step-log entries, keyed ``{step:06d}``."""
LOG_BYTES = "log_bytes"
"""The bytes charged to the inline entries so far."""
LOG_SPILLED = "log_spilled"
"""True once an entry of the trace went to its own step document."""
FIELDS = (LOG_FIELD, LOG_BYTES, LOG_SPILLED)
"""The checkpoint document's fields that are the inline log's (no ``Checkpoint`` field)."""


def entry_key(step: int) -> str:
    """The key of step ``step``'s entry in the ``log`` map."""
    return f"{step:06d}"


def encoded_size(doc: Any) -> int:
    """Bytes of ``doc`` as JSON: the measure the budgets are in (as ``MAX_STATE_BYTES``)."""
    return len(pydantic_core.to_json(doc, inf_nan_mode="constants"))


@dataclass(frozen=True)
class Held:
    """What a checkpoint document says of its inline log (its ``log_bytes``, ``log_spilled``)."""

    log_bytes: int = 0
    spilled: bool = False

    @classmethod
    def of(cls, doc: dict[str, Any] | None) -> Held:
        """The inline log's counters of a checkpoint document (a trace before this: spilled)."""
        if doc is None:
            return cls()
        if LOG_BYTES not in doc:
            return cls(0, True)  # written before inline logs: all its entries are documents
        return cls(int(doc.get(LOG_BYTES) or 0), bool(doc.get(LOG_SPILLED)))


@dataclass(frozen=True)
class Placement:
    """Where one commit puts its entry, and what it writes of the counters."""

    inline: bool
    evict: bool
    """Move the inline entries out to step documents in this commit."""
    held: Held
    """The counters after the commit."""

    def fields(self) -> dict[str, Any]:
        """The counters as checkpoint fields."""
        return {LOG_BYTES: self.held.log_bytes, LOG_SPILLED: self.held.spilled}


@dataclass(frozen=True)
class InlineLog:
    """The policy: when an entry goes in the checkpoint (see the module docstring)."""

    log_bytes: int = 256 * 1024
    document_bytes: int = 512 * 1024
    min_charge: int = 1024
    window_s: float = 3600.0

    def place(
        self, held: Held, checkpoint: dict[str, Any], entry: dict[str, Any], now: float
    ) -> Placement:
        """Where the entry ``entry`` of the commit of ``checkpoint`` (a dump) goes.

        ``held``: the counters the stored checkpoint had before the commit.
        """
        charge = max(self.min_charge, encoded_size(entry))
        young = now - float(checkpoint.get("created_at", now)) <= self.window_s
        document = encoded_size(checkpoint) + held.log_bytes
        evict = held.log_bytes > 0 and (not young or document > self.document_bytes)
        fits = (
            young
            and held.log_bytes + charge <= self.log_bytes
            and document + charge <= self.document_bytes
        )
        if not held.spilled and fits:
            return Placement(True, False, Held(held.log_bytes + charge, False))
        return Placement(False, evict, Held(0 if evict else held.log_bytes, True))

    def start(self, checkpoint: dict[str, Any], entry: dict[str, Any]) -> Placement:
        """Where a trace's entry 0 goes (nothing held yet)."""
        return self.place(Held(), checkpoint, entry, float(checkpoint.get("created_at", 0.0)))


def entries(doc: dict[str, Any] | None) -> dict[int, dict[str, Any]]:
    """The inline entries of a checkpoint document, by step."""
    inline = (doc or {}).get(LOG_FIELD) or {}
    return {int(key): entry for key, entry in inline.items()}


def merge(
    inline: dict[int, dict[str, Any]], spilled: Iterable[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The log in step order from the inline entries and the spilled ``(doc_id, entry)``:
    a step's spilled entry wins over its inline one (it is the newer)."""
    by_step = dict(inline)
    for doc_id, entry in spilled:
        by_step[int(doc_id)] = entry
    return [by_step[step] for step in sorted(by_step)]

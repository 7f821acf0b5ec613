"""Erasing a person: every document found deleted or redacted, one transaction each, resumably.

Order (each step idempotent, so a run that dies anywhere is finished by the next):

1. the erasure record ``erasures/{sha256(address)}`` is opened (``erasing``);
2. the person's live traces are ended (``rejected``, ``end_reason: erased``,
   no pause, nothing to publish), so no node, decision or deadline moves them
   while their approvals, tokens and tasks go;
3. each document is erased in a transaction of its own: one about the
   person deleted, one that only mentions them (another person's record)
   redacted in place (as it is now, if it changed meanwhile). Redactions
   first, then deletions, documents that give identifiers (traces, quotes)
   last, a sub-collection's before its parent's. So whatever a crash leaves,
   what leads to it is still there: the next run finds the trace by the
   address, through it what only its id names, and the text of their mail
   that others' records repeat;
4. the record is closed (``done``): when, by whom, counts per collection. It keeps a hash of the address, never the address,
   so a later email from the address can be told from a replay of erased mail
   (``ErasureRecords.replayed``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..clock import Clock
from ..mail.addresses import address_key
from ..ports.checkpoint import TERMINAL
from ..ports.documents import DocumentStore, Transaction
from ..ports.vectors import VectorIndex
from ..schema import ERASURES, TRACES
from .finder import Held, Holdings, PersonFinder
from .matching import Identifiers, redact

END_REASON = "erased"
"""``end_reason`` of a trace ended because its person was erased."""


def address_hash(address: str) -> str:
    """The SHA-256 of the address's key (``address_key``): the erasure record's id.

    Raises:
        ValueError: not an email address.
    """
    return hashlib.sha256(address_key(address).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ErasureRecord:
    """The ``erasures/{address_sha256}`` document.

    Attributes:
        address_sha256: the hash of the erased address.
        status: ``erasing`` until a run finished, then ``done``.
        started_at: when the first run of the latest request started.
        finished_at: when it finished (None while erasing).
        by: who asked.
        counts: per collection, ``{"deleted": n, "redacted": n}`` over every run.
        runs: how many runs have finished an erasure of the address.
    """

    address_sha256: str
    status: str
    started_at: float
    by: str
    finished_at: float | None = None
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    runs: int = 0

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> ErasureRecord:
        """The record from its stored document."""
        return cls(**{name: doc[name] for name in cls.__dataclass_fields__ if name in doc})

    def as_doc(self) -> dict[str, Any]:
        """The stored document."""
        return dict(self.__dict__)


class ErasureRecords:
    """The erasure records, over the documents port."""

    def __init__(self, documents: DocumentStore) -> None:
        self.documents = documents

    def get(self, address: str) -> ErasureRecord | None:
        """The record of ``address``, or None if it was never erased."""
        doc = self.documents.get(ERASURES.path(address_hash(address)))
        return None if doc is None else ErasureRecord.from_doc(doc)

    def replayed(self, address: str, received_at: float) -> bool:
        """Whether mail from ``address`` received at ``received_at`` predates its erasure
        (a replay of erased mail, not a new email)."""
        try:
            record = self.get(address)
        except ValueError:  # no address: nobody was erased under it
            return False
        return record is not None and received_at <= record.started_at


@dataclass(frozen=True)
class ErasureReport:
    """What one ``Eraser.erase`` run did."""

    record: ErasureRecord
    ended: list[str]
    """The traces this run ended."""
    counts: dict[str, dict[str, int]]
    """This run's counts per collection."""


class Eraser:
    """Erases a person everywhere (see the module docstring).

    Args:
        documents: the documents port.
        vectors: the vector index beside it.
        clock: for the record's times.
        on_erased: called after each document is erased (progress; a test's crash).
    """

    def __init__(
        self,
        documents: DocumentStore,
        vectors: VectorIndex,
        clock: Clock,
        on_erased: Callable[[Held], None] | None = None,
    ) -> None:
        self.documents = documents
        self.vectors = vectors
        self.clock = clock
        self.finder = PersonFinder(documents, vectors)
        self.on_erased = on_erased

    def erase(self, address: str, by: str) -> ErasureReport:
        """Erase everything held about ``address``; finish an unfinished erasure first.

        Raises:
            ValueError: ``address`` is not an email address.
        """
        path = ERASURES.path(address_hash(address))
        self._open(path, address, by)
        holdings = self.finder.find(address)
        ended = [h.doc_id for h in holdings.of(TRACES) if self._end_trace(h.path)]
        counts: dict[str, dict[str, int]] = {}
        for held in sorted(holdings.everything(), key=_erase_order):
            outcome = self._erase(held, holdings.person)
            if outcome:
                tally = counts.setdefault(held.collection.name, {"deleted": 0, "redacted": 0})
                tally[outcome] += 1
            if self.on_erased is not None:
                self.on_erased(held)
        return ErasureReport(self._close(path, counts), ended, counts)

    def _open(self, path: str, address: str, by: str) -> ErasureRecord:
        now = self.clock.now()

        def open_record(tx: Transaction) -> ErasureRecord:
            doc = tx.get(path)
            if doc is not None and doc.get("status") == "erasing":
                return ErasureRecord.from_doc(doc)
            earlier = ErasureRecord.from_doc(doc) if doc is not None else None
            record = ErasureRecord(
                address_sha256=address_hash(address),
                status="erasing",
                started_at=now,
                by=by,
                counts=earlier.counts if earlier else {},
                runs=earlier.runs if earlier else 0,
            )
            tx.set(path, record.as_doc())
            return record

        return self.documents.run_transaction(open_record)

    def _end_trace(self, path: str) -> bool:
        now = self.clock.now()

        def end(tx: Transaction) -> bool:
            doc = tx.get(path)
            if doc is None or doc.get("status") in TERMINAL:
                return False
            doc.update(
                status="rejected",
                end_reason=END_REASON,
                error=f"ended: {END_REASON}",
                pause=None,
                next=[],
                lease=None,
                updated_at=now,
            )
            tx.set(path, doc)
            return True

        return self.documents.run_transaction(end)

    def _erase(self, held: Held, person: Identifiers) -> str | None:
        """``deleted``, ``redacted`` or None (gone already, or nothing of them left)."""
        if held.is_vector:
            if not held.mentioned:
                self.vectors.delete(held.collection.name, held.doc_id)
                return "deleted"
            cleaned = redact(held.doc, person)
            if cleaned == held.doc:
                return None
            replaced = self.vectors.replace_fields(held.collection.name, held.doc_id, cleaned)
            return "redacted" if replaced else None
        if not held.mentioned:

            def delete(tx: Transaction) -> str | None:
                if tx.get(held.path) is None:
                    return None
                tx.delete(held.path)
                return "deleted"

            return self.documents.run_transaction(delete)

        def redact_one(tx: Transaction) -> str | None:
            doc = tx.get(held.path)
            if doc is None:
                return None
            cleaned = redact(doc, person)
            if cleaned == doc:
                return None
            tx.set(held.path, cleaned)
            return "redacted"

        return self.documents.run_transaction(redact_one)

    def _close(self, path: str, counts: dict[str, dict[str, int]]) -> ErasureRecord:
        now = self.clock.now()

        def close(tx: Transaction) -> ErasureRecord:
            record = ErasureRecord.from_doc(tx.get(path) or {})
            merged = {name: dict(tally) for name, tally in record.counts.items()}
            for name, tally in counts.items():
                into = merged.setdefault(name, {"deleted": 0, "redacted": 0})
                for outcome, n in tally.items():
                    into[outcome] = into.get(outcome, 0) + n
            closed = ErasureRecord(
                address_sha256=record.address_sha256,
                status="done",
                started_at=record.started_at,
                by=record.by,
                finished_at=now,
                counts=merged,
                runs=record.runs + 1,
            )
            tx.set(path, closed.as_doc())
            return closed

        return self.documents.run_transaction(close)


def _erase_order(held: Held) -> tuple[int, int, str]:
    """Redactions first, documents that lead to others last; a sub-collection's documents
    before their parent."""
    assert held.collection.personal is not None
    rank = 0 if held.mentioned else 2 if held.collection.personal.leads_to else 1
    return (rank, -held.path.count("/"), held.path)


__all__ = [
    "END_REASON",
    "Eraser",
    "ErasureRecord",
    "ErasureRecords",
    "ErasureReport",
    "Holdings",
    "address_hash",
]

"""The documents port: a generic document store addressed by slash paths, with transactions.

Documents are JSON-compatible dicts. Paths alternate collection and document
ids, Firestore style: ``tickets/{ticket_id}``, ``traces/{trace_id}/steps/{n}``.
Adapters implement five primitives (``get``, ``create``, ``set``, ``select``
(what ``list`` asks, as a ``Listing``), ``run_transaction``); a conditional
update (``get_versioned``, ``update_if_unchanged``) has a default on the
transaction that an adapter with write preconditions overrides. The features keep
their records here through typed repositories (``TicketStore``,
``PreferenceMemory``, ``Claims``...); the step protocol has its own, narrower
port (``ports/checkpoint.py``), which the SQLite and Firestore adapters
implement on the same database.
"""

from __future__ import annotations

import builtins
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

T = TypeVar("T")

Operator = Literal["==", "!=", "<", "<=", ">", ">=", "in", "array_contains"]
Filter = tuple[str, Operator, Any]


@dataclass(frozen=True)
class Listing:
    """One ``DocumentStore.list`` call as the adapters answer it.

    ``collection`` is without its outer slashes and ``where`` a tuple (so that an
    adapter can go over it twice).
    """

    collection: str
    where: tuple[Filter, ...] = ()
    order_by: str | None = None
    descending: bool = False
    limit: int | None = None


Fields = dict[str, Any]
"""A document's top-level fields, or a whole document."""
Writes = Mapping[str, dict[str, Any]] | None
"""Whole documents by path, written beside a conditional update."""


@dataclass(frozen=True)
class Versioned:
    """A document as read, and the version ``update_if_unchanged`` checks it against
    (opaque: Firestore's update time; by default the document's own JSON)."""

    doc: dict[str, Any]
    version: Any


def content_version(doc: dict[str, Any]) -> str:
    """The default version of a document: its JSON, keys sorted (equal content, equal version)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


class DocumentExists(Exception):
    """A create-only write found the document already there."""


class Transaction(Protocol):
    """Reads first, then writes; all writes apply atomically at the end."""

    def get(self, path: str) -> dict[str, Any] | None:
        """Read a document inside the transaction."""
        ...

    def set(self, path: str, doc: dict[str, Any]) -> None:
        """Replace (or create) a document."""
        ...

    def create(self, path: str, doc: dict[str, Any]) -> None:
        """Create a document; the transaction fails with ``DocumentExists`` if it exists."""
        ...

    def delete(self, path: str) -> None:
        """Delete a document (no error if absent)."""
        ...


class DocumentStore(ABC):
    """Documents with transactions: what features keep their records in."""

    @abstractmethod
    def get(self, path: str) -> dict[str, Any] | None:
        """Read one document, or None."""

    @abstractmethod
    def create(self, path: str, doc: dict[str, Any]) -> bool:
        """Create-only write. Returns False (and writes nothing) if the document exists."""

    @abstractmethod
    def set(self, path: str, doc: dict[str, Any]) -> None:
        """Blind write of a whole document."""

    def list(
        self,
        collection: str,
        where: Iterable[Filter] = (),
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
    ) -> list[tuple[str, dict[str, Any]]]:
        """Documents directly in ``collection`` as ``(document_id, doc)`` pairs."""
        return self.select(
            Listing(collection.strip("/"), tuple(where), order_by, descending, limit)
        )

    @abstractmethod
    def select(self, listing: Listing) -> builtins.list[tuple[str, dict[str, Any]]]:
        """What ``list`` returns for ``listing``: the adapter's query."""

    def count(self, collection: str, where: Iterable[Filter] = ()) -> int:
        """How many documents ``list(collection, where)`` would return.

        Adapters that can count without reading the documents (Firestore's
        aggregation query) override it.
        """
        return len(self.list(collection, where))

    @abstractmethod
    def run_transaction(self, fn: Callable[[Transaction], T]) -> T:
        """Run ``fn`` in a serializable transaction and return its result.

        The adapter retries ``fn`` on contention; when it gives up it raises
        ``Contention``. ``DocumentExists`` from a ``create`` propagates.
        """

    def get_versioned(self, path: str) -> Versioned | None:
        """Read one document with its version (for ``update_if_unchanged``), or None."""
        doc = self.get(path)
        return None if doc is None else Versioned(doc, content_version(doc))

    def update_if_unchanged(
        self, path: str, version: Any, fields: Fields, also: Writes = None
    ) -> bool:
        """Set the top-level ``fields`` of the document at ``path`` (its other fields stay)
        and write each document of ``also`` whole, all at once, only if that document is
        still at ``version`` (``get_versioned``); otherwise, or if it is gone, write nothing
        and return False.

        Where writes take a precondition (Firestore) this is one commit that reads
        nothing and holds no lock while the caller decides: first writer wins, the others
        learn it by the False. This default runs it as a transaction.
        """

        def write(tx: Transaction) -> bool:
            current = tx.get(path)
            if current is None or content_version(current) != version:
                return False
            tx.set(path, {**current, **fields})
            for other, doc in (also or {}).items():
                tx.set(other, doc)
            return True

        return self.run_transaction(write)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

"""The vector index port: documents with an embedding, searched by cosine distance.

A vector index holds, per collection, documents made of an id, one vector
and a few JSON-compatible fields (title, excerpt, category...). ``nearest``
returns the documents whose vectors are closest to a query vector by
**cosine distance** (``1 - cosine similarity``: 0 for the same direction, 1
for orthogonal, 2 for opposite), closest first.

Adapters: ``SqliteVectorIndex`` (the embedded default, exact search in the
SQLite file beside the checkpoints) and ``FirestoreVectorIndex`` (Firestore
``find_nearest``). Only documents whose vector has the query's length are
candidates, as in Firestore. ``nearest`` can return only some of the
stored fields (``fields``); Firestore then reads only those (a projection),
not the whole document with its vector.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..schema import EMBEDDING_FIELD
from .documents import Filter

DISTANCE_FIELD = "vector_distance"
"""Name under which Firestore reports the distance; ``fields`` may not use it."""
RESERVED_FIELDS = frozenset({EMBEDDING_FIELD, DISTANCE_FIELD})
MAX_LIMIT = 1000
"""Firestore's ``find_nearest`` returns at most this many documents."""


@dataclass(frozen=True)
class Neighbor:
    """One search result.

    Attributes:
        doc_id: the document's id in its collection.
        distance: cosine distance to the query vector (smaller is nearer).
        fields: the document's stored fields (without the vector), or those
            ``nearest`` was asked for.
    """

    doc_id: str
    distance: float
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class VectorDocument:
    """A document to upsert: id, vector and fields."""

    doc_id: str
    vector: Sequence[float]
    fields: dict[str, Any] = field(default_factory=dict)


def check_document(doc_id: str, vector: Sequence[float], fields: dict[str, Any]) -> None:
    """Refuse what no adapter can store.

    Raises:
        ValueError: empty id, empty or non-finite vector, or a reserved field name.
    """
    if not doc_id:
        raise ValueError("a vector document needs a non-empty id")
    if not vector:
        raise ValueError(f"document {doc_id!r}: empty vector")
    # A NaN or an infinity makes the sum one (so does an overflow, then each is looked at).
    if not math.isfinite(sum(vector)) and not all(math.isfinite(x) for x in vector):
        raise ValueError(f"document {doc_id!r}: the vector holds NaN or infinity")
    check_field_names(doc_id, fields)


def check_field_names(doc_id: str, fields: dict[str, Any]) -> None:
    """Refuse reserved field names (``ValueError``)."""
    clash = RESERVED_FIELDS.intersection(fields)
    if clash:
        raise ValueError(f"document {doc_id!r}: reserved field names {sorted(clash)}")


def check_fields(fields: Sequence[str] | None) -> list[str] | None:
    """The field names ``nearest`` was asked for, once each, in order (None stays None).

    Raises:
        TypeError: ``fields`` is one string rather than a sequence of names.
        ValueError: a reserved field name (the vector, the distance).
    """
    if fields is None:
        return None
    if isinstance(fields, str):
        raise TypeError(f"fields is a sequence of names, not the string {fields!r}")
    names = list(dict.fromkeys(fields))
    clash = RESERVED_FIELDS.intersection(names)
    if clash:
        raise ValueError(f"reserved field names {sorted(clash)} cannot be asked for")
    return names


def check_limit(limit: int) -> None:
    """Refuse a ``nearest`` limit outside ``1..MAX_LIMIT``.

    Raises:
        ValueError: the limit is out of range.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")


@dataclass(frozen=True)
class NearestQuery:
    """A checked ``nearest`` call, as an adapter's search (``VectorIndex._nearest``) sees it."""

    vector: Sequence[float]
    limit: int
    where: list[Filter]
    fields: list[str] | None
    """The stored fields to return (once each, in order); None: all of them."""


class VectorIndex(ABC):
    """Documents with a vector each, in named collections, searched by cosine distance."""

    def upsert(
        self, collection: str, doc_id: str, vector: Sequence[float], fields: dict[str, Any]
    ) -> None:
        """Create or replace one document (idempotent).

        Raises:
            ValueError: see ``check_document``.
        """
        document = VectorDocument(doc_id, vector, fields)
        check_document(doc_id, vector, fields)
        self._upsert(collection, document)

    def _upsert(self, collection: str, document: VectorDocument) -> None:
        """``upsert`` of a checked document: by default a batch of one."""
        self._upsert_many(collection, [document])

    def nearest(
        self,
        collection: str,
        vector: Sequence[float],
        limit: int,
        where: Iterable[Filter] | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[Neighbor]:
        """The ``limit`` documents nearest to ``vector``, nearest first.

        Args:
            collection: where to search.
            vector: the query vector (any length; only documents of that length match).
            limit: at most this many results, 1 to ``MAX_LIMIT``.
            where: filters on fields applied before ranking, ``(field, op, value)``
                as in ``CheckpointStore.list``. On Firestore each filtered field
                needs a composite vector index.
            fields: the stored fields each ``Neighbor.fields`` holds (a document
                without one simply lacks it); None: all of them. Filters may use
                fields not asked for. On Firestore the rest of each document, the
                vector included, is not transferred.

        Returns:
            Neighbors by increasing distance; ties in any order.

        Raises:
            ValueError: see ``check_limit`` and ``check_fields``.
            TypeError: see ``check_fields``.
        """
        check_limit(limit)
        return self._nearest(
            collection, NearestQuery(vector, limit, [*(where or ())], check_fields(fields))
        )

    @abstractmethod
    def _nearest(self, collection: str, query: NearestQuery) -> list[Neighbor]:
        """``nearest`` with its arguments checked."""

    @abstractmethod
    def delete(self, collection: str, doc_id: str) -> None:
        """Remove a document (no error if absent)."""

    def replace_fields(self, collection: str, doc_id: str, fields: dict[str, Any]) -> bool:
        """Replace a document's fields, keeping its vector (a redaction); False if absent.

        Raises:
            ValueError: a reserved field name (``check_field_names``).
        """
        check_field_names(doc_id, fields)
        return self._replace_fields(collection, doc_id, fields)

    @abstractmethod
    def _replace_fields(self, collection: str, doc_id: str, fields: dict[str, Any]) -> bool:
        """``replace_fields`` with the field names checked."""

    @abstractmethod
    def documents(
        self, collection: str, where: Iterable[Filter] | None = None
    ) -> list[tuple[str, dict[str, Any]]]:
        """Every document of a collection as ``(doc_id, fields)``, by id (for listings)."""

    def upsert_many(self, collection: str, documents: Iterable[VectorDocument]) -> int:
        """Upsert several documents, all checked before any is written. Returns how many.

        Raises:
            ValueError: see ``check_document``.
        """
        checked = list(documents)
        for doc in checked:
            check_document(doc.doc_id, doc.vector, doc.fields)
        return self._upsert_many(collection, checked)

    @abstractmethod
    def _upsert_many(self, collection: str, documents: list[VectorDocument]) -> int:
        """``upsert_many`` of checked documents: write them (adapters batch the writes)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


__all__ = [
    "DISTANCE_FIELD",
    "EMBEDDING_FIELD",
    "MAX_LIMIT",
    "Neighbor",
    "VectorDocument",
    "VectorIndex",
    "check_document",
    "check_field_names",
    "check_fields",
    "check_limit",
]

"""Embedded vector index: vectors as float32 blobs in SQLite, exact cosine search in Python.

Vectors are L2-normalised when stored, so a query costs one dot product per
document of the query's length. Each collection is loaded into memory once
and kept current: every write bumps the collection's version in the same
transaction, writes from this instance update the loaded copy in place, and a
version moved by another process (or connection) reloads it.

Exact search in pure Python (numpy is not a dependency) costs about 15 ms per
1,000 vectors of 768 dimensions (150 ms for 10,000) on one core (``bench/vector_search.py``);
``math.sumprod`` (Python 3.12+, a single C loop) is used when present (not measured here: 3.11).
"""

from __future__ import annotations

import heapq
import json
import math
import operator
import sys
import threading
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ports.checkpoint import Filter
from ..ports.vectors import (
    Neighbor,
    VectorDocument,
    VectorIndex,
    check_document,
    check_limit,
)
from .sqlite_store import connect, matches

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    collection TEXT NOT NULL,
    doc_id     TEXT NOT NULL,
    vector     BLOB NOT NULL,
    fields     TEXT NOT NULL,
    PRIMARY KEY (collection, doc_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vector_collections (
    collection TEXT PRIMARY KEY,
    version    INTEGER NOT NULL
) WITHOUT ROWID;
"""
# vectors.vector: float32 little-endian, L2-normalised; vectors.fields: JSON object.


_sumprod: Callable[[Sequence[float], Sequence[float]], float] | None = getattr(
    math, "sumprod", None
)


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """The dot product of two equally long vectors."""
    if _sumprod is not None:
        return _sumprod(a, b)
    return sum(map(operator.mul, a, b))


def normalised(vector: Sequence[float]) -> array[float]:
    """``vector`` scaled to unit length as float32 (a zero vector stays zero)."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    scale = 1.0 / norm if norm > 0 else 0.0
    return array("f", [x * scale for x in vector])


def _to_blob(vector: array[float]) -> bytes:
    if sys.byteorder == "big":
        vector = array("f", vector)
        vector.byteswap()
    return vector.tobytes()


def _from_blob(blob: bytes) -> array[float]:
    vector = array("f")
    vector.frombytes(blob)
    if sys.byteorder == "big":
        vector.byteswap()
    return vector


@dataclass
class _Loaded:
    """A collection held in memory, as of ``version``."""

    version: int
    ids: list[str] = field(default_factory=list)
    vectors: list[array[float]] = field(default_factory=list)
    fields: list[dict[str, Any]] = field(default_factory=list)
    position: dict[str, int] = field(default_factory=dict)

    def put(self, doc_id: str, vector: array[float], fields: dict[str, Any]) -> None:
        at = self.position.get(doc_id)
        if at is None:
            self.position[doc_id] = len(self.ids)
            self.ids.append(doc_id)
            self.vectors.append(vector)
            self.fields.append(fields)
        else:
            self.vectors[at] = vector
            self.fields[at] = fields

    def remove(self, doc_id: str) -> None:
        at = self.position.pop(doc_id, None)
        if at is None:
            return
        last = len(self.ids) - 1
        if at != last:  # move the last document into the hole
            self.ids[at], self.vectors[at], self.fields[at] = (
                self.ids[last],
                self.vectors[last],
                self.fields[last],
            )
            self.position[self.ids[at]] = at
        del self.ids[last], self.vectors[last], self.fields[last]


class SqliteVectorIndex(VectorIndex):
    """Vector documents in a SQLite file (tables ``vectors`` and ``vector_collections``).

    Args:
        path: the SQLite file, usually the checkpoint store's own
            (``.inboxflow/inboxflow.db``), or ``":memory:"``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn = connect(path, _SCHEMA)
        self._loaded: dict[str, _Loaded] = {}

    # --- writes ----------------------------------------------------------------------

    def upsert(
        self, collection: str, doc_id: str, vector: Sequence[float], fields: dict[str, Any]
    ) -> None:
        self.upsert_many(collection, [VectorDocument(doc_id, vector, fields)])

    def upsert_many(self, collection: str, documents: Iterable[VectorDocument]) -> int:
        rows: list[tuple[str, array[float], dict[str, Any], str]] = []
        for doc in documents:
            check_document(doc.doc_id, doc.vector, doc.fields)
            encoded = json.dumps(doc.fields, separators=(",", ":"), ensure_ascii=False)
            # Stored fields read back as JSON would: tuples become lists, and so on.
            rows.append((doc.doc_id, normalised(doc.vector), json.loads(encoded), encoded))
        if not rows:
            return 0

        def write(loaded: _Loaded | None) -> None:
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors(collection, doc_id, vector, fields) "
                "VALUES (?,?,?,?)",
                [(collection, doc_id, _to_blob(vec), text) for doc_id, vec, _, text in rows],
            )
            if loaded is not None:
                for doc_id, vec, fields, _ in rows:
                    loaded.put(doc_id, vec, fields)

        self._write(collection, write)
        return len(rows)

    def delete(self, collection: str, doc_id: str) -> None:
        def write(loaded: _Loaded | None) -> None:
            self._conn.execute(
                "DELETE FROM vectors WHERE collection=? AND doc_id=?", (collection, doc_id)
            )
            if loaded is not None:
                loaded.remove(doc_id)

        self._write(collection, write)

    def _write(self, collection: str, apply: Callable[[_Loaded | None], None]) -> None:
        """Run ``apply`` in a transaction that bumps the collection's version.

        ``apply`` gets the loaded copy when it was current before the write
        (then it must update it), else None (the copy is dropped).
        """
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                version = self._version(collection)
                loaded = self._loaded.get(collection)
                current = loaded if loaded is not None and loaded.version == version else None
                apply(current)
                self._conn.execute(
                    "INSERT OR REPLACE INTO vector_collections(collection, version) VALUES (?,?)",
                    (collection, version + 1),
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                self._loaded.pop(collection, None)
                raise
            self._conn.execute("COMMIT")
            if current is not None:
                current.version = version + 1
            else:
                self._loaded.pop(collection, None)

    # --- reads -----------------------------------------------------------------------

    def nearest(
        self,
        collection: str,
        vector: Sequence[float],
        limit: int,
        where: Iterable[Filter] | None = None,
    ) -> list[Neighbor]:
        check_limit(limit)
        filters = list(where or ())
        query = normalised(vector).tolist()  # Python floats: faster to multiply than an array's
        size = len(query)
        with self._lock:
            loaded = self._load(collection)
            fields = loaded.fields
            scores = (
                (dot(query, stored), i)
                for i, stored in enumerate(loaded.vectors)
                if len(stored) == size and (not filters or matches(fields[i], filters))
            )
            best = heapq.nlargest(limit, scores)
            return [
                Neighbor(
                    doc_id=loaded.ids[i],
                    distance=min(2.0, max(0.0, 1.0 - similarity)),
                    fields=dict(loaded.fields[i]),
                )
                for similarity, i in best
            ]

    def documents(
        self, collection: str, where: Iterable[Filter] | None = None
    ) -> list[tuple[str, dict[str, Any]]]:
        filters = list(where or ())
        with self._lock:
            rows = self._conn.execute(
                "SELECT doc_id, fields FROM vectors WHERE collection=? ORDER BY doc_id",
                (collection,),
            ).fetchall()
        docs = [(doc_id, json.loads(text)) for doc_id, text in rows]
        return [(doc_id, fields) for doc_id, fields in docs if matches(fields, filters)]

    def count(self, collection: str) -> int:
        """How many documents ``collection`` holds."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*) FROM vectors WHERE collection=?", (collection,)
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._loaded.clear()
            self._conn.close()

    def _version(self, collection: str) -> int:
        row = self._conn.execute(
            "SELECT version FROM vector_collections WHERE collection=?", (collection,)
        ).fetchone()
        return int(row[0]) if row else 0

    def _load(self, collection: str) -> _Loaded:
        """The collection in memory, reloaded if anyone wrote to it since it was loaded."""
        version = self._version(collection)
        loaded = self._loaded.get(collection)
        if loaded is not None and loaded.version == version:
            return loaded
        self._conn.execute("BEGIN")  # one snapshot for the version and the rows
        try:
            version = self._version(collection)
            rows = self._conn.execute(
                "SELECT doc_id, vector, fields FROM vectors WHERE collection=?", (collection,)
            ).fetchall()
        finally:
            self._conn.execute("COMMIT")
        loaded = _Loaded(version=version)
        for doc_id, blob, text in rows:
            loaded.put(doc_id, _from_blob(blob), json.loads(text))
        self._loaded[collection] = loaded
        return loaded


__all__ = ["SqliteVectorIndex", "dot", "normalised"]

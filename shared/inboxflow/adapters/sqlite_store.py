"""Embedded checkpoint store: one SQLite file under ``.inboxflow/``."""

from __future__ import annotations

import json
import operator
import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..ports.checkpoint import CheckpointStore, DocumentExists, Filter

if TYPE_CHECKING:
    from .sqlite_vectors import SqliteVectorIndex

T = TypeVar("T")

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "in": lambda value, options: value in options,
    "array_contains": lambda value, item: isinstance(value, list) and item in value,
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    parent TEXT NOT NULL,
    id     TEXT NOT NULL,
    body   TEXT NOT NULL,
    PRIMARY KEY (parent, id)
) WITHOUT ROWID;
"""


def _split(path: str) -> tuple[str, str]:
    parts = path.strip("/").split("/")
    if len(parts) < 2 or len(parts) % 2:
        raise ValueError(f"not a document path: {path!r}")
    return "/".join(parts[:-1]), parts[-1]


def _encode(doc: dict[str, Any]) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def connect(path: str | Path, schema: str) -> sqlite3.Connection:
    """A connection shared by the threads of one process (callers hold a lock), in WAL mode,
    with ``schema`` applied; creates the file's folder."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(schema)
    return conn


def matches(doc: dict[str, Any], where: Iterable[Filter]) -> bool:
    """Whether ``doc`` passes every filter (a missing field or incomparable value fails)."""
    for field, op, expected in where:
        if field not in doc:
            return False
        try:
            if not _OPS[op](doc[field], expected):
                return False
        except TypeError:
            return False
    return True


class _SqliteTransaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._writes: list[tuple[str, str, str, dict[str, Any] | None]] = []

    def get(self, path: str) -> dict[str, Any] | None:
        if self._writes:
            raise RuntimeError("reads must come before writes in a transaction")
        parent, doc_id = _split(path)
        row = self._conn.execute(
            "SELECT body FROM docs WHERE parent=? AND id=?", (parent, doc_id)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def set(self, path: str, doc: dict[str, Any]) -> None:
        self._writes.append(("set", *_split(path), doc))

    def create(self, path: str, doc: dict[str, Any]) -> None:
        self._writes.append(("create", *_split(path), doc))

    def delete(self, path: str) -> None:
        self._writes.append(("delete", *_split(path), None))

    def apply(self) -> None:
        for kind, parent, doc_id, doc in self._writes:
            if kind == "delete":
                self._conn.execute("DELETE FROM docs WHERE parent=? AND id=?", (parent, doc_id))
            elif kind == "create":
                try:
                    self._conn.execute(
                        "INSERT INTO docs(parent, id, body) VALUES (?,?,?)",
                        (parent, doc_id, _encode(doc or {})),
                    )
                except sqlite3.IntegrityError:
                    raise DocumentExists(f"{parent}/{doc_id}") from None
            else:
                self._conn.execute(
                    "INSERT OR REPLACE INTO docs(parent, id, body) VALUES (?,?,?)",
                    (parent, doc_id, _encode(doc or {})),
                )


class SqliteCheckpointStore(CheckpointStore):
    """Documents in one SQLite table, transactions as ``BEGIN IMMEDIATE``.

    Safe across threads of one process (a lock serialises them) and across
    processes (SQLite's file lock; WAL mode keeps readers unblocked).
    """

    def vector_index(self) -> SqliteVectorIndex:
        """The vector index in the same SQLite file (its own connection and tables)."""
        from .sqlite_vectors import SqliteVectorIndex

        return SqliteVectorIndex(self.path)

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn = connect(path, _SCHEMA)

    def get(self, path: str) -> dict[str, Any] | None:
        parent, doc_id = _split(path)
        with self._lock:
            row = self._conn.execute(
                "SELECT body FROM docs WHERE parent=? AND id=?", (parent, doc_id)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def create(self, path: str, doc: dict[str, Any]) -> bool:
        parent, doc_id = _split(path)
        with self._lock:
            cursor = self._conn.execute(
                "INSERT OR IGNORE INTO docs(parent, id, body) VALUES (?,?,?)",
                (parent, doc_id, _encode(doc)),
            )
        return cursor.rowcount == 1

    def set(self, path: str, doc: dict[str, Any]) -> None:
        parent, doc_id = _split(path)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO docs(parent, id, body) VALUES (?,?,?)",
                (parent, doc_id, _encode(doc)),
            )

    def list(
        self,
        collection: str,
        where: Iterable[Filter] = (),
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
    ) -> list[tuple[str, dict[str, Any]]]:
        where = list(where)
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, body FROM docs WHERE parent=? ORDER BY id", (collection.strip("/"),)
            ).fetchall()
        docs = [(doc_id, json.loads(body)) for doc_id, body in rows]
        docs = [(doc_id, doc) for doc_id, doc in docs if matches(doc, where)]
        if order_by is not None:
            docs = [(doc_id, doc) for doc_id, doc in docs if order_by in doc]
            docs.sort(key=lambda item: item[1][order_by], reverse=descending)
        elif descending:
            docs.reverse()
        return docs[:limit] if limit is not None else docs

    def run_transaction(self, fn: Callable[[Any], T]) -> T:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                tx = _SqliteTransaction(self._conn)
                result = fn(tx)
                tx.apply()
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return result

    def stored_bytes(self, prefix: str = "") -> int:
        """Bytes of document bodies (and keys) under a path prefix: what a trace costs to keep."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COALESCE(SUM(LENGTH(CAST(body AS BLOB)) + LENGTH(parent) + LENGTH(id)), 0) "
                "FROM docs WHERE parent LIKE ? ESCAPE '\\'",
                (prefix.replace("%", "\\%").replace("_", "\\_") + "%",),
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

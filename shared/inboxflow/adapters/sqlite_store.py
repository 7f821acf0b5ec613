"""Embedded checkpoint store: one SQLite file under ``.inboxflow/``.

Durability: WAL mode with ``synchronous=NORMAL``. A committed transaction is in
the WAL file when ``COMMIT`` returns, so it survives the process crashing (what
the step protocol promises); only a power cut or OS crash before the next WAL
checkpoint can lose the last transactions. ``synchronous=FULL`` (an fsync per
commit) would cover that too, at several times the cost of a hop.

The step protocol's writes per hop (lease, commit) are one short
``BEGIN IMMEDIATE`` transaction each (or just the commit, when the previous
commit handed the lease over: ``Runtime._handoff``), written here in SQL instead of the port's
generic read-modify-write, the way the Firestore adapter uses ``update_time``:
the commit is an ``UPDATE`` preconditioned on the checkpoint still being the
body the lease wrote, and falls back to the port's check of step and owner when
it is not. Documents the store built or read itself are encoded and decoded with
pydantic-core's JSON (a few times faster than ``json``); documents handed in by
callers are still checked by ``json`` (a datetime is refused, not stringified).

A commit (or a new trace) that hands the next step's lease over keeps what it wrote,
the checkpoint's body and its model (``_Written``): the lease of that step reads the
row as always and, when the row is still that very body, admits the delivery on the
kept model instead of decoding and validating the same JSON again.
"""

from __future__ import annotations

import json
import operator
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pydantic_core
from pydantic import BaseModel

from ..errors import StepMoved
from ..naming import step_path, trace_path
from ..ports.checkpoint import Checkpoint, DocumentCheckpointStore, Lease, LeaseRequest, StepLog
from ..ports.documents import DocumentExists, Filter, Listing
from ..schema import COLLECTIONS, Collection
from . import sqlite_wal

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

_TABLE = """
CREATE TABLE IF NOT EXISTS docs (
    parent TEXT NOT NULL,
    id     TEXT NOT NULL,
    body   TEXT NOT NULL,
    PRIMARY KEY (parent, id)
) WITHOUT ROWID;
"""

# --- queries in SQL, served by expression indexes ------------------------------------
#
# ``list`` runs in SQL what SQL answers exactly (equality and ranges on strings and
# numbers, array-contains of a string or number, the order and the limit) and checks
# every row it returns with ``matches`` as before. Each composite index that
# ``schema.py`` declares for Firestore is built here too, as a partial expression index
# over its ordered fields, so the same query is an index range here as it is there
# (array-contains fields are checked per row with ``json_each``). The ``json_valid``
# guard keeps a body SQLite's JSON cannot read (``Infinity``) writable and unindexed.

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SQL_OPS = {"==": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _field_sql(field: str) -> str:
    return f"(CASE WHEN json_valid(body) THEN json_extract(body, '$.{field}') END)"


def _index_ddl(declared: Collection) -> list[str]:
    statements = []
    for number, index in enumerate(declared.composite_indexes):
        ordered = [f.field_path for f in index.fields if f.order is not None]
        if declared.parent is not None or not ordered or not all(map(_NAME.match, ordered)):
            continue
        columns = ", ".join(_field_sql(name) for name in ordered)
        statements.append(
            f"CREATE INDEX IF NOT EXISTS docs_{declared.name}_{number} "
            f"ON docs({columns}) WHERE parent = '{declared.name}';"
        )
    return statements


_SCHEMA = _TABLE + "\n".join(ddl for declared in COLLECTIONS for ddl in _index_ddl(declared))


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _query_sql(listing: Listing) -> tuple[str, list[Any], bool] | None:
    """``(sql, parameters, exact)`` for ``listing``, or None when SQL cannot narrow it
    (``exact``: every filter is in the SQL, and so is the LIMIT)."""
    collection, where, order_by = listing.collection, listing.where, listing.order_by
    descending, limit = listing.descending, listing.limit
    if not _NAME.match(collection) or (order_by is not None and not _NAME.match(order_by)):
        return None
    # the collection is a literal (a name, checked above) so that partial indexes apply
    clauses, parameters, exact = [f"parent = '{collection}'"], [], True
    for _field, op, value in where:
        encoded = json.dumps(value)
        if op == "array_contains" and isinstance(value, str) and encoded[1:-1] == value:
            # a plain string appears in the body as itself in quotes: a substring test
            # skips most rows before any JSON is parsed
            clauses.append("instr(body, ?) > 0")
            parameters.append(encoded)
    for field, op, value in where:
        if not _NAME.match(field) or not _scalar(value) or op not in (*_SQL_OPS, "array_contains"):
            exact = False
            continue
        if op == "array_contains":
            path = f"'$.{field}'"
            clauses.append(
                f"json_type(body, {path}) = 'array' AND "
                f"EXISTS (SELECT 1 FROM json_each(body, {path}) WHERE value = ?)"
            )
        else:
            # the value's type (Python's bool is a number): SQL orders text after numbers,
            # Python refuses to compare them
            kinds = "'text'" if isinstance(value, str) else "'integer', 'real', 'true', 'false'"
            clauses.append(
                f"json_type(body, '$.{field}') IN ({kinds}) AND {_field_sql(field)} {_SQL_OPS[op]} ?"
            )
        parameters.append(value)
    sql = "SELECT id, body FROM docs WHERE " + " AND ".join(clauses)
    if order_by is not None:
        direction = "DESC" if descending else "ASC"
        sql += f" AND {_field_sql(order_by)} IS NOT NULL ORDER BY {_field_sql(order_by)} {direction}, id"
    else:
        sql += " ORDER BY id DESC" if descending else " ORDER BY id"
    if limit is not None and exact:
        sql += f" LIMIT {int(limit)}"
    return sql, parameters, exact


def _split(path: str) -> tuple[str, str]:
    parts = path.strip("/").split("/")
    if len(parts) < 2 or len(parts) % 2:
        raise ValueError(f"not a document path: {path!r}")
    return "/".join(parts[:-1]), parts[-1]


def _encode(doc: dict[str, Any]) -> str:
    """A document as JSON; anything that is not JSON (a datetime, a set) is refused."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def _encode_known(value: dict[str, Any] | BaseModel) -> str:
    """JSON of a document known to be JSON already (decoded from a row, or a model of the port),
    written as ``_encode`` would write it (``Infinity``, ``NaN``), only faster."""
    if isinstance(value, BaseModel):  # the port's records serialise infinities as constants
        return value.model_dump_json()
    return pydantic_core.to_json(value, inf_nan_mode="constants").decode()


def _decode(body: str) -> dict[str, Any]:
    decoded: dict[str, Any] = pydantic_core.from_json(body)
    return decoded


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
        return _decode(row[0]) if row else None

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


class _Written:
    """The checkpoints this store wrote with a lease handed over, by trace: ``(body, model)``.

    Each is read at most once (by the lease of the step it hands over); at most ``LIMIT``
    are kept, the oldest forgotten first (a forgotten one is decoded from its row as before).
    """

    LIMIT = 4096

    def __init__(self) -> None:
        self._kept: dict[str, tuple[str, Checkpoint]] = {}

    def keep(self, checkpoint: Checkpoint, body: str) -> None:
        """Keep ``checkpoint``, written as ``body``, when it hands a lease over."""
        if checkpoint.lease is None:
            return
        kept = self._kept
        kept.pop(checkpoint.trace_id, None)
        if len(kept) >= self.LIMIT:
            del kept[next(iter(kept))]
        kept[checkpoint.trace_id] = (body, checkpoint)

    def take(self, trace_id: str, body: str) -> Checkpoint | None:
        """The kept checkpoint of ``trace_id`` if the stored ``body`` is still the one it was
        written as (a copy: the caller may change it), else None; forgotten either way."""
        kept = self._kept.pop(trace_id, None)
        if kept is None or kept[0] != body:
            return None
        return kept[1].model_copy()


def _grant_handed(request: LeaseRequest, checkpoint: Checkpoint) -> Checkpoint:
    """``request.grant`` on a checkpoint whose stored lease is already the request's (handed
    over for long enough): admission, then the same lease in memory; nothing to write."""
    if request.admit is not None:
        request.admit(checkpoint)
    if checkpoint.step != request.step:
        raise StepMoved(
            f"trace {request.trace_id} is at step {checkpoint.step}, not {request.step}", checkpoint
        )
    checkpoint.lease = Lease(
        step=request.step, owner=request.owner, expires_at=request.now + request.ttl_s
    )
    return checkpoint


def _covers(held: Lease | dict[str, Any] | None, request: LeaseRequest) -> bool:
    """Whether the stored lease ``held`` is the request's for at least as long as it asks."""
    if held is None:
        return False
    if isinstance(held, Lease):
        held = held.model_dump()
    return bool(
        held.get("step") == request.step
        and held.get("owner") == request.owner
        and held.get("expires_at", 0) >= request.now + request.ttl_s
    )


class SqliteCheckpointStore(DocumentCheckpointStore):
    """Documents in one SQLite table, transactions as ``BEGIN IMMEDIATE``.

    Safe across threads of one process (a lock serialises them) and across
    processes (SQLite's file lock; WAL mode keeps readers unblocked).
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn = connect(path, _SCHEMA)
        self._release_wal = sqlite_wal.attach(self._conn, path, self)
        self._written = _Written()

    def get(self, path: str) -> dict[str, Any] | None:
        parent, doc_id = _split(path)
        with self._lock:
            row = self._conn.execute(
                "SELECT body FROM docs WHERE parent=? AND id=?", (parent, doc_id)
            ).fetchone()
        return _decode(row[0]) if row else None

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

    def select(self, listing: Listing) -> list[tuple[str, dict[str, Any]]]:
        where, order_by, limit = listing.where, listing.order_by, listing.limit
        query = _query_sql(listing)
        if query is not None:
            sql, parameters, _ = query
            try:
                with self._lock:
                    rows = self._conn.execute(sql, parameters).fetchall()
            except sqlite3.OperationalError:
                query = None  # a body SQLite's JSON cannot read: filter in Python
            else:
                docs = [(doc_id, _decode(body)) for doc_id, body in rows]
                return [(doc_id, doc) for doc_id, doc in docs if matches(doc, where)][:limit]
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, body FROM docs WHERE parent=? ORDER BY id", (listing.collection,)
            ).fetchall()
        docs = [(doc_id, _decode(body)) for doc_id, body in rows]
        docs = [(doc_id, doc) for doc_id, doc in docs if matches(doc, where)]
        if order_by is not None:
            docs = [(doc_id, doc) for doc_id, doc in docs if order_by in doc]
            docs.sort(key=lambda item: item[1][order_by], reverse=listing.descending)
        elif listing.descending:
            docs.reverse()
        return docs[:limit] if limit is not None else docs

    def count(self, collection: str, where: Iterable[Filter] = ()) -> int:
        listing = Listing(collection.strip("/"), tuple(where))
        query = _query_sql(listing)
        if query is not None and query[2]:
            sql, parameters, _ = query
            counting = "SELECT count(*)" + sql.removeprefix("SELECT id, body").removesuffix(
                " ORDER BY id"
            )
            try:
                with self._lock:
                    row = self._conn.execute(counting, parameters).fetchone()
                return int(row[0])
            except sqlite3.OperationalError:
                pass  # a body SQLite's JSON cannot read: count in Python
        return super().count(collection, listing.where)

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

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the connection in one ``BEGIN IMMEDIATE`` transaction."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return result

    # --- the step protocol in SQL (same rules as the port's generic versions) -------

    def create_trace(self, checkpoint: Checkpoint, start: StepLog) -> bool:
        trace_id = checkpoint.trace_id
        body = _encode_known(checkpoint)

        def create(conn: sqlite3.Connection) -> bool:
            inserted = conn.execute(
                "INSERT OR IGNORE INTO docs(parent, id, body) VALUES (?,?,?)",
                (*_split(trace_path(trace_id)), body),
            )
            if inserted.rowcount != 1:
                return False
            conn.execute(
                "INSERT OR REPLACE INTO docs(parent, id, body) VALUES (?,?,?)",
                (*_split(step_path(trace_id, 0)), _encode_known(start)),
            )
            return True

        created = self._write(create)
        if created:
            self._written.keep(checkpoint, body)
        return created

    def _write_lease(self, request: LeaseRequest) -> tuple[Checkpoint, Any]:
        parent, doc_id = _split(trace_path(request.trace_id))
        with self._lock:
            row = self._conn.execute(
                "SELECT body FROM docs WHERE parent=? AND id=?", (parent, doc_id)
            ).fetchone()
        if row is not None:
            # Already ours for long enough (a lease the previous step's commit handed
            # over): admit the delivery, write nothing. Only its owner's commit moves it.
            known = self._written.take(request.trace_id, row[0])
            if known is not None and _covers(known.lease, request):
                return _grant_handed(request, known), row[0]
            doc = _decode(row[0])
            if _covers(doc.get("lease"), request):
                return request.grant(doc), row[0]

        def lease(conn: sqlite3.Connection) -> tuple[Checkpoint, str]:
            row = conn.execute(
                "SELECT body FROM docs WHERE parent=? AND id=?", (parent, doc_id)
            ).fetchone()
            doc = _decode(row[0]) if row else None
            checkpoint = request.grant(doc)
            body = _encode_known(doc)  # type: ignore[arg-type]
            conn.execute("UPDATE docs SET body=? WHERE parent=? AND id=?", (body, parent, doc_id))
            return checkpoint, body

        return self._write(lease)

    def _commit_on_mark(
        self, mark: Any, checkpoint: Checkpoint, log: StepLog, creates: Mapping[str, dict[str, Any]]
    ) -> bool:
        """The mark is the very checkpoint body this store's lease wrote."""
        trace_id, step = checkpoint.trace_id, log.step_order
        parent, doc_id = _split(trace_path(trace_id))
        body = _encode_known(checkpoint)
        entry = log.model_dump_json(exclude_defaults=True)
        born = [(*_split(path), _encode(doc)) for path, doc in creates.items()]

        def commit(conn: sqlite3.Connection) -> bool:
            updated = conn.execute(
                "UPDATE docs SET body=? WHERE parent=? AND id=? AND body=?",
                (body, parent, doc_id, mark),
            )
            if updated.rowcount != 1:
                return False
            conn.executemany(
                "INSERT OR REPLACE INTO docs(parent, id, body) VALUES (?,?,?)",
                [(*_split(step_path(trace_id, step)), entry), *born],
            )
            return True

        committed = self._write(commit)
        if committed:
            self._written.keep(checkpoint, body)
        return committed

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
        self._release_wal()

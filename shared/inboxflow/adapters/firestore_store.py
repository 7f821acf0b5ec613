"""Firestore checkpoint store: the five primitives on google-cloud-firestore.

Documents are JSON-compatible dicts and round-trip exactly. Firestore cannot
hold everything JSON can, so documents are encoded on the way in:

- an array directly inside an array becomes ``{"__list": [...]}``;
- a map key that Firestore refuses or that collides with those markers (the
  empty string, a leading ``__``, a leading ``~``) is prefixed with ``~``;
- a top-level numeric ``expire_at`` is stored as a Timestamp, so the TTL
  policy can delete the document, with the exact float beside it in
  ``__expire_at`` (a Timestamp keeps microseconds, a float may not).

The Firestore emulator differs from production: concurrent transactions on
one document wait about 2 s for its lock and then abort one or all of them
(hence ``serialize_transactions``); queries never ask for composite indexes
(production does: ``inboxflow.schema`` declares them); TTL deletes nothing.
The emulator refuses descending scans of document ids, so
``list(descending=True)`` without ``order_by`` reverses client-side everywhere.

Only this module imports ``google.cloud.firestore``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath

from ..errors import Contention, RetryableError
from ..naming import step_path, trace_path
from ..ports import inline_log
from ..ports.checkpoint import Checkpoint, DocumentCheckpointStore, LeaseRequest, StepLog
from ..ports.documents import DocumentExists, Fields, Filter, Listing, Versioned, Writes
from ..schema import TTL_FIELD

T = TypeVar("T")

LIST_MARKER = "__list"
EXPIRE_AT = TTL_FIELD
EXACT_EXPIRE_AT = "__expire_at"
KEY_ESCAPE = "~"

_TRANSIENT: tuple[type[Exception], ...] = (
    gexc.ServiceUnavailable,
    gexc.DeadlineExceeded,
    gexc.ResourceExhausted,
    gexc.InternalServerError,
    gexc.RetryError,
)
_EXHAUSTED = "Failed to commit transaction"

_LEASE_MASK = [
    *(FieldPath(name).to_api_repr() for name in Checkpoint.model_fields),
    FieldPath(EXACT_EXPIRE_AT).to_api_repr(),
    inline_log.LOG_BYTES,
    inline_log.LOG_SPILLED,
]
"""What the lease reads of a checkpoint: all of it but the inline log's entries."""


class FirestoreUnavailable(RetryableError):
    """Firestore answered UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED or INTERNAL."""


class FirestoreAborted(Contention):
    """Firestore answered ABORTED: a concurrent transaction holds or won the documents."""


# --- encoding ------------------------------------------------------------------------


def encode_key(key: str) -> str:
    """A map key Firestore accepts; ``decode_key`` inverts it."""
    if not isinstance(key, str):
        raise TypeError(f"document keys must be strings, got {type(key).__name__} {key!r}")
    if key == "" or key.startswith(("__", KEY_ESCAPE)):
        return KEY_ESCAPE + key
    return key


def decode_key(key: str) -> str:
    """Invert ``encode_key``."""
    return key[1:] if key.startswith(KEY_ESCAPE) else key


def encode_value(value: Any, in_array: bool = False) -> Any:
    """Encode one JSON value (see the module docstring)."""
    if isinstance(value, dict):
        return {encode_key(k): encode_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [encode_value(item, in_array=True) for item in value]
        return {LIST_MARKER: items} if in_array else items
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise ValueError(f"integer {value} does not fit Firestore's 64-bit integers")
    return value


def decode_value(value: Any) -> Any:
    """Invert ``encode_value``; Timestamps read back as epoch seconds."""
    if isinstance(value, dict):
        if len(value) == 1 and LIST_MARKER in value:
            return [decode_value(item) for item in value[LIST_MARKER]]
        return {decode_key(k): decode_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_value(item) for item in value]
    if isinstance(value, dt.datetime):
        return value.timestamp()
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _timestamp(epoch_s: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch_s, tz=dt.UTC)


def encode_document(doc: dict[str, Any]) -> dict[str, Any]:
    """Encode a whole document for Firestore."""
    if not isinstance(doc, dict):
        raise TypeError(f"a document is a dict, got {type(doc).__name__}")
    encoded = encode_value(doc)
    expire_at = doc.get(EXPIRE_AT)
    if _is_number(expire_at):
        encoded[EXPIRE_AT] = _timestamp(float(expire_at))  # type: ignore[arg-type]
        encoded[EXACT_EXPIRE_AT] = expire_at
    return encoded


def decode_document(data: dict[str, Any]) -> dict[str, Any]:
    """Decode a document read from Firestore."""
    data = dict(data)
    exact = data.pop(EXACT_EXPIRE_AT, None)
    doc = decode_value(data)
    if exact is not None and EXPIRE_AT in doc:
        doc[EXPIRE_AT] = exact
    return doc


def _encode_operand(field: str, op: str, value: Any) -> Any:
    if op == "in":
        return [_encode_operand(field, "==", option) for option in value]
    if op == "array_contains":
        return encode_value(value, in_array=True)
    if field == EXPIRE_AT and _is_number(value):
        return _timestamp(value)
    return encode_value(value, in_array=False)


def field_path(field: str) -> str:
    """A top-level field name as a Firestore field path (quoted when needed)."""
    return FieldPath(encode_key(field)).to_api_repr()


# --- errors --------------------------------------------------------------------------


def _find(exc: BaseException | None, kind: type[BaseException]) -> BaseException | None:
    """``exc`` or the first exception of ``kind`` in its cause/context chain."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """Raise Firestore's ABORTED as ``FirestoreAborted``, its transient errors as
    ``FirestoreUnavailable``; ``what`` names the call in the message."""
    try:
        yield
    except gexc.Aborted as exc:
        raise FirestoreAborted(f"Firestore {what}: {exc}") from exc
    except _TRANSIENT as exc:
        raise FirestoreUnavailable(f"Firestore {what}: {exc}") from exc


def _committed(batch: Any, what: str) -> bool:
    """Commit ``batch``: False when its precondition failed (the document changed or is gone)."""
    try:
        with translated(what):
            batch.commit()
    except (gexc.FailedPrecondition, gexc.NotFound):
        return False
    return True


class _FirestoreTransaction:
    """The port's ``Transaction`` over a Firestore transaction: reads, then writes."""

    def __init__(self, client: firestore.Client, transaction: firestore.Transaction) -> None:
        self._client = client
        self._tx = transaction
        self._written = False

    def get(self, path: str) -> dict[str, Any] | None:
        if self._written:
            raise RuntimeError("reads must come before writes in a transaction")
        snapshot = self._client.document(path).get(transaction=self._tx)
        data = snapshot.to_dict() if snapshot.exists else None
        return decode_document(data) if data is not None else None

    def set(self, path: str, doc: dict[str, Any]) -> None:
        self._written = True
        self._tx.set(self._client.document(path), encode_document(doc))

    def create(self, path: str, doc: dict[str, Any]) -> None:
        self._written = True
        self._tx.create(self._client.document(path), encode_document(doc))

    def delete(self, path: str) -> None:
        self._written = True
        self._tx.delete(self._client.document(path))


class FirestoreCheckpointStore(DocumentCheckpointStore):
    """Documents in Firestore (native mode), transactions with Firestore's retries.

    Args:
        project: Google Cloud project (default ``inboxflow-local``; ``from_env``:
            ``GOOGLE_CLOUD_PROJECT``).
        database: database id (default ``(default)``; ``from_env``:
            ``INBOXFLOW_FIRESTORE_DATABASE``).
        client: an existing client (then ``project`` and ``database`` are ignored).
        max_attempts: attempts of a transaction before ``Contention``. Each
            round is Firestore's own immediate retries (which keep the
            transaction's place in line), then a jittered backoff.
        serialize_transactions: run this instance's transactions one at a
            time (default off; ``from_env``: on against the emulator,
            ``FIRESTORE_EMULATOR_HOST``), whose lock manager makes concurrent
            transactions on one document wait about 2 s and then abort all
            but one; production Firestore does not need it.

    A trace's step-log entries live in its checkpoint document while they fit
    (``ports/inline_log.py``): a hop writes the checkpoint and nothing else.
    """

    inline_policy = inline_log.InlineLog()

    def __init__(
        self,
        project: str | None = None,
        database: str | None = None,
        client: firestore.Client | None = None,
        max_attempts: int = 12,
        serialize_transactions: bool | None = None,
    ) -> None:
        super().__init__()
        if client is None:
            client = firestore.Client(
                project=project or "inboxflow-local", database=database or "(default)"
            )
        self.client = client
        self.max_attempts = max_attempts
        self._serial = threading.RLock() if serialize_transactions else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **options: Any) -> FirestoreCheckpointStore:
        """The store ``environ`` (the entry point's environment) describes: its project,
        database and the emulator's serialized transactions, unless ``options`` give them."""
        if options.get("project") is None:
            options["project"] = environ.get("GOOGLE_CLOUD_PROJECT")
        if options.get("database") is None:
            options["database"] = environ.get("INBOXFLOW_FIRESTORE_DATABASE")
        if options.get("serialize_transactions") is None:
            options["serialize_transactions"] = bool(environ.get("FIRESTORE_EMULATOR_HOST"))
        return cls(**options)

    # --- the five primitives ---------------------------------------------------------

    def get(self, path: str) -> dict[str, Any] | None:
        with translated(f"get {path}"):
            snapshot = self.client.document(path).get()
        data = snapshot.to_dict() if snapshot.exists else None
        return decode_document(data) if data is not None else None

    def create(self, path: str, doc: dict[str, Any]) -> bool:
        encoded = encode_document(doc)
        try:
            with translated(f"create {path}"):
                self.client.document(path).create(encoded)
        except gexc.AlreadyExists:
            return False
        return True

    def set(self, path: str, doc: dict[str, Any]) -> None:
        encoded = encode_document(doc)
        with translated(f"set {path}"):
            self.client.document(path).set(encoded)

    def get_versioned(self, path: str) -> Versioned | None:
        with translated(f"get {path}"):
            snapshot = self.client.document(path).get()
        data = snapshot.to_dict() if snapshot.exists else None
        return Versioned(decode_document(data), snapshot.update_time) if data is not None else None

    def update_if_unchanged(
        self, path: str, version: Any, fields: Fields, also: Writes = None
    ) -> bool:
        # One commit preconditioned on the update time read: no transaction, no read, no lock
        # held while the caller decided (the emulator's lock manager aborts every one of
        # several transactions that read one document and then write it).
        encoded = encode_document(fields)
        batch = self.client.batch()
        batch.update(
            self.client.document(path),
            {FieldPath(name).to_api_repr(): value for name, value in encoded.items()},
            option=self.client.write_option(last_update_time=version),
        )
        for other, doc in (also or {}).items():
            batch.set(self.client.document(other), encode_document(doc))
        return _committed(batch, f"update {path} if unchanged")

    def _query(self, collection: str, where: Iterable[Filter]) -> Any:
        """The query of the documents of ``collection`` that pass ``where``."""
        query: Any = self.client.collection(collection.strip("/"))
        for field, op, value in where:
            operand = _encode_operand(field, op, value)
            query = query.where(filter=FieldFilter(field_path(field), op, operand))
        return query

    def select(self, listing: Listing) -> list[tuple[str, dict[str, Any]]]:
        query = self._query(listing.collection, listing.where)
        order_by, descending, limit = listing.order_by, listing.descending, listing.limit
        direction = firestore.Query.DESCENDING if descending else firestore.Query.ASCENDING
        if order_by is not None:
            query = query.order_by(field_path(order_by), direction=direction)
        # Firestore cannot scan document ids backwards: reverse here instead.
        reverse_ids = order_by is None and descending
        if limit is not None and not reverse_ids:
            query = query.limit(limit)
        with translated(f"query {listing.collection}"):
            rows = [(snap.id, decode_document(snap.to_dict() or {})) for snap in query.stream()]
        if reverse_ids:
            rows = rows[::-1][:limit]
        return rows

    def count(self, collection: str, where: Iterable[Filter] = ()) -> int:
        # an aggregation query: one read per 1,000 index entries counted, no documents
        query = self._query(collection, where)
        with translated(f"count {collection}"):
            results = query.count(alias="n").get()
        return int(results[0][0].value) if results and results[0] else 0

    def run_transaction(self, fn: Callable[[Any], T]) -> T:
        lock = self._serial if self._serial is not None else contextlib.nullcontext()
        with lock:
            return self._run_transaction(fn)

    def close(self) -> None:
        self.client.close()

    # --- the step protocol without transactions ---------------------------------------
    #
    # A hop used to be two transactions (lease, commit): BeginTransaction, a read and a
    # Commit each. Both are conditional writes instead, preconditioned on the
    # checkpoint's ``update_time``: the lease on the one its read saw, the commit on the
    # one the lease wrote. A precondition that fails means someone wrote the checkpoint
    # in between: the lease reads again and decides again; the commit falls back to the
    # port's transaction, which checks step and owner exactly as before.

    def create_trace(self, checkpoint: Checkpoint, start: StepLog) -> bool:
        batch = self.client.batch()  # a create-only write is its own precondition
        doc, entry = checkpoint.model_dump(), start.model_dump()
        placed = self.inline_policy.start(doc, entry)
        inline = {inline_log.entry_key(0): entry} if placed.inline else {}
        batch.create(
            self.client.document(trace_path(checkpoint.trace_id)),
            encode_document({**doc, inline_log.LOG_FIELD: inline, **placed.fields()}),
        )
        if not placed.inline:
            batch.set(
                self.client.document(step_path(checkpoint.trace_id, 0)), encode_document(entry)
            )
        try:
            with translated(f"create trace {checkpoint.trace_id}"):
                batch.commit()
        except gexc.AlreadyExists:
            return False
        return True

    def _write_lease(self, request: LeaseRequest) -> tuple[Checkpoint, Any]:
        ref = self.client.document(trace_path(request.trace_id))
        for _ in range(self.max_attempts):
            with translated(f"get {ref.path}"):
                snapshot = ref.get(field_paths=_LEASE_MASK)
            data = snapshot.to_dict() if snapshot.exists else None
            doc = decode_document(data) if data is not None else None
            held = inline_log.Held.of(doc)
            checkpoint = request.grant(doc)
            option = self.client.write_option(last_update_time=snapshot.update_time)
            try:
                with translated(f"lease {ref.path}"):
                    result = ref.update({"lease": encode_value(doc["lease"])}, option=option)  # type: ignore[index]
            except (gexc.FailedPrecondition, gexc.NotFound):
                time.sleep(random.uniform(0, 0.05))
                continue
            return checkpoint, (result.update_time, held)
        raise Contention(
            f"the checkpoint of trace {request.trace_id} changed {self.max_attempts} times"
        )

    def _commit_on_mark(
        self, mark: Any, checkpoint: Checkpoint, log: StepLog, creates: Mapping[str, dict[str, Any]]
    ) -> bool:
        update_time, held = mark
        doc, entry = checkpoint.model_dump(), log.model_dump(exclude_defaults=True)
        placed = self.inline_policy.place(held, doc, entry, checkpoint.updated_at)
        if placed.evict:
            return False  # the transaction moves the inline entries out: it reads them
        fields = encode_document({**doc, **placed.fields()})
        if placed.inline:  # a field path: only the new entry is sent, the others stay
            fields[f"{inline_log.LOG_FIELD}.{inline_log.entry_key(log.step_order)}"] = encode_value(
                entry
            )
        batch = self.client.batch()
        batch.update(
            self.client.document(trace_path(checkpoint.trace_id)),
            fields,
            option=self.client.write_option(last_update_time=update_time),
        )
        if not placed.inline:
            batch.set(
                self.client.document(step_path(checkpoint.trace_id, log.step_order)),
                encode_document(entry),
            )
        for path, doc in creates.items():
            batch.set(self.client.document(path), encode_document(doc))
        return _committed(batch, f"commit step {log.step_order} of {checkpoint.trace_id}")

    # --- transactions ----------------------------------------------------------------

    def _run_transaction(self, fn: Callable[[Any], T]) -> T:
        rounds = max(1, -(-self.max_attempts // 3))
        last: BaseException | None = None
        for round_ in range(rounds):
            try:
                return self._attempt(fn, attempts=min(3, self.max_attempts - 3 * round_))
            except (FirestoreAborted, ValueError) as exc:
                if isinstance(exc, ValueError) and not str(exc).startswith(_EXHAUSTED):
                    raise
                last = exc
            time.sleep(random.uniform(0, min(2.0, 0.05 * 2**round_)))
        raise Contention(
            f"Firestore transaction aborted {self.max_attempts} times by concurrent writers"
        ) from last

    def _attempt(self, fn: Callable[[Any], T], attempts: int) -> T:
        client = self.client

        @firestore.transactional
        def body(transaction: firestore.Transaction) -> T:
            return fn(_FirestoreTransaction(client, transaction))

        try:
            with translated("transaction"):
                return body(client.transaction(max_attempts=attempts))
        except gexc.GoogleAPICallError as exc:
            exists = _find(exc, gexc.AlreadyExists)
            if exists is not None:
                raise DocumentExists(str(exists)) from exc
            raise
        except ValueError as exc:
            # A failed rollback after a failed commit can hide the commit's error.
            exists = _find(exc, gexc.AlreadyExists)
            if exists is not None:
                raise DocumentExists(str(exists)) from exc
            raise

"""Count what a ``FirestoreCheckpointStore`` asks of Firestore, at the RPC layer (not a test).

``count_operations(store)`` wraps the store's Firestore API client so that
every call the store makes is counted the way Firestore bills it: a document
read per document returned by a get or a query (one for a query that returns
nothing), a document write per write in a commit, and the number of
transactions (``BeginTransaction``) and commits, whether transactional or a
plain batch. Nothing is estimated: whatever path the store takes, its RPCs
are what is counted. Writes are also counted by collection (``writes in traces``...,
:func:`writes_by_collection`), a sub-collection named by its path of collection ids
(``traces/steps``).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from inboxflow import schema
from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

KINDS = ("reads", "writes", "transactions", "commits", "rpcs")
WRITES_IN = "writes in "
"""Prefix of the per-collection write counts beside ``KINDS``."""
DELETES_IN = "deletes in "
"""Prefix of the per-collection counts of the writes that are deletes (counted in both)."""
EMBEDDED_RECORDS = frozenset(
    c.name
    for c in (
        schema.TASKS,
        schema.OUTBOX,
        schema.CONTACTS,
        schema.CALENDAR_EVENTS,
        schema.SAVED_REPLIES,
        schema.MAILBOX_DRAFTS,
        schema.MAILBOX_SENT,
        schema.MAILBOX_READ,
    )
)
"""The embedded adapters' own records (``schema.py``): the bench's stand-ins for Cloud Tasks,
the reviewers' mail channel and the Gmail mailbox write them to Firestore; a deployment's
real services do not."""


def writes_by_collection(counts: dict[str, float]) -> dict[str, float]:
    """The per-collection write counts among ``counts`` (a snapshot, a total), most first."""
    found = {k.removeprefix(WRITES_IN): v for k, v in counts.items() if k.startswith(WRITES_IN)}
    return dict(sorted(found.items(), key=lambda item: (-item[1], item[0])))


def deletes_by_collection(counts: dict[str, float]) -> dict[str, float]:
    """The per-collection delete counts among ``counts`` (each also one of the writes)."""
    return {k.removeprefix(DELETES_IN): v for k, v in counts.items() if k.startswith(DELETES_IN)}


def _is_delete(write: Any) -> bool:
    return bool(write.get("delete") if isinstance(write, dict) else write.delete)


def _collection(write: Any) -> str:
    """``traces``, ``traces/steps``...: the collection ids of a written document's path."""
    if isinstance(write, dict):
        name = (write.get("update") or {}).get("name") or write.get("delete") or ""
    else:
        name = write.update.name or write.delete
    path = name.split("/documents/", 1)[-1].split("/")
    return "/".join(path[0::2])


class OperationCounter:
    """Firestore operations by kind, per thread (a function serves concurrent requests in
    threads, each making its own RPCs): ``snapshot`` and ``since`` give the calling
    thread's deltas, ``total`` every thread's."""

    def __init__(self) -> None:
        self._by_thread: dict[int, Counter[str]] = {}
        self._lock = threading.Lock()

    def add(self, **kinds: int) -> None:
        """Count ``kinds`` (``reads=1``, ...) for the calling thread."""
        with self._lock:
            self._by_thread.setdefault(threading.get_ident(), Counter()).update(kinds)

    def snapshot(self) -> dict[str, int]:
        """The calling thread's counts so far."""
        with self._lock:
            counts = self._by_thread.get(threading.get_ident(), Counter())
            return {**{kind: counts[kind] for kind in KINDS}, **_per_collection(counts)}

    def since(self, before: dict[str, int]) -> dict[str, int]:
        """What the calling thread did after ``before`` (a ``snapshot``)."""
        now = self.snapshot()
        delta = {kind: now[kind] - before.get(kind, 0) for kind in now}
        return {k: v for k, v in delta.items() if v or k in KINDS}

    def total(self) -> dict[str, int]:
        """Every thread's counts."""
        with self._lock:
            return {kind: sum(c[kind] for c in self._by_thread.values()) for kind in KINDS}


def _per_collection(counts: Counter[str]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if k.startswith((WRITES_IN, DELETES_IN))}


def _streamed(responses: Iterable[Any], counter: OperationCounter, query: bool) -> Iterable[Any]:
    """Count reads as responses arrive (a caller may stop early): each document of a query,
    at least one per query; each found or missing document of a get."""
    found = 0
    try:
        for response in responses:
            if not query or getattr(response, "document", None):
                found += 1
                counter.add(reads=1)
            yield response
    finally:
        if query and not found:
            counter.add(reads=1)


def count_operations(store: FirestoreCheckpointStore) -> OperationCounter:
    """Wrap ``store``'s Firestore API client; returns the counter it feeds."""
    counter = OperationCounter()
    api = store.client._firestore_api

    def wrap(name: str, count: Callable[[Any, Any], Any]) -> None:
        original = getattr(api, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            counter.add(rpcs=1)
            request = kwargs.get("request", args[0] if args else None)
            return count(original(*args, **kwargs), request)

        setattr(api, name, counted)

    def commit(response: Any, request: Any) -> Any:
        writes = request["writes"] if isinstance(request, dict) else request.writes
        counter.add(writes=len(writes), commits=1)
        counter.add(**Counter(WRITES_IN + _collection(w) for w in writes))
        counter.add(**Counter(DELETES_IN + _collection(w) for w in writes if _is_delete(w)))
        return response

    def begin(response: Any, request: Any) -> Any:
        counter.add(transactions=1)
        return response

    wrap("commit", commit)
    wrap("begin_transaction", begin)
    wrap("batch_get_documents", lambda response, request: _streamed(response, counter, False))
    wrap("run_query", lambda response, request: _streamed(response, counter, True))
    wrap("rollback", lambda response, request: response)
    wrap("batch_write", commit)
    return counter


def index_entries(
    path: str, fields: dict[str, Any], exempt: frozenset[str] = frozenset()
) -> tuple[int, int]:
    """Single-field index entries Firestore (Standard edition) keeps for the document at
    ``path`` under automatic indexing, and their approximate bytes: ascending and descending
    for every value (a whole map or array included), every map's subfields recursively,
    array-contains for each distinct element of an array. ``exempt`` names top-level fields
    with indexing turned off. An entry's size is taken as the document's name, the field's
    path and value (JSON size) and 32 bytes, after Firestore's storage-size rules."""
    count = size = 0

    def add(field: str, value: Any, times: int) -> None:
        nonlocal count, size
        count += times
        size += times * (len(path) + len(field) + len(json.dumps(value, default=str)) + 34)

    def walk(field: str, value: Any) -> None:
        add(field, value, 2)
        if isinstance(value, dict):
            for name, item in value.items():
                walk(f"{field}.{name}", item)
        elif isinstance(value, list):
            for item in {json.dumps(item, default=str, sort_keys=True) for item in value}:
                add(field, item, 1)

    for name, value in fields.items():
        if name not in exempt:
            walk(name, value)
    return count, size


def exempt_fields(collection_group: str) -> frozenset[str]:
    """Top-level fields of ``collection_group`` with indexing off in ``infra/firestore.tf``: the
    index exemptions and the TTL field."""
    from inboxflow.dev.infra import export as infra_export

    names = {
        e["field"] for e in infra_export.INDEX_EXEMPTIONS if e["collection"] == collection_group
    }
    if collection_group in infra_export.TTL_COLLECTIONS:
        names.add("expire_at")
    return frozenset(names)

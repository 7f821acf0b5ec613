"""WAL checkpoints of the embedded store run on a background thread, not inside a commit."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path

import pytest

from inboxflow.adapters import sqlite_wal
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.services import make_vector_index

BODY = {"text": "x" * 3000}
"""About one page per document: 1,500 of them are well past SQLite's 1,000-page autocheckpoint."""


def _fill(store: SqliteCheckpointStore, count: int) -> None:
    for index in range(count):
        store.set(f"docs/{index:05d}", BODY)


def _db_bytes(path: Path) -> int:
    return path.stat().st_size


def test_a_commit_never_checkpoints_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_wal, "INTERVAL_S", 3600.0)
    path = tmp_path / "inboxflow.db"
    store = SqliteCheckpointStore(path)
    try:
        before = _db_bytes(path)
        _fill(store, 1500)
        # Every page is still only in the WAL: no commit copied it into the database.
        assert _db_bytes(path) == before
        assert Path(f"{path}-wal").stat().st_size > 1500 * 3000
        assert store.get("docs/01499") == BODY
    finally:
        store.close()
    assert _db_bytes(path) > 1500 * 3000  # the last close checkpoints, as SQLite always does


def test_the_background_thread_checkpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_wal, "INTERVAL_S", 0.05)
    path = tmp_path / "inboxflow.db"
    store = SqliteCheckpointStore(path)
    try:
        _fill(store, 300)
        deadline = time.monotonic() + 10
        while _db_bytes(path) < 300 * 3000 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _db_bytes(path) > 300 * 3000, "no checkpoint copied the WAL into the database"
    finally:
        store.close()


def test_one_thread_per_file_until_its_last_connection_closes(tmp_path: Path) -> None:
    path = tmp_path / "inboxflow.db"
    store = SqliteCheckpointStore(path)
    vectors = make_vector_index(store)
    other = SqliteCheckpointStore(tmp_path / "other.db")
    try:
        assert sqlite_wal.running(path) and sqlite_wal.running(tmp_path / "other.db")
        store.close()
        assert sqlite_wal.running(path), "the vector index still commits to this file"
        vectors.close()
        assert not sqlite_wal.running(path)
        assert sqlite_wal.running(tmp_path / "other.db")
    finally:
        other.close()
    assert not sqlite_wal.running(tmp_path / "other.db")


def test_a_store_dropped_unclosed_stops_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_wal, "INTERVAL_S", 0.02)
    path = tmp_path / "inboxflow.db"
    store = SqliteCheckpointStore(path)
    store.set("docs/a", {"n": 1})
    assert sqlite_wal.running(path)
    del store
    gc.collect()
    deadline = time.monotonic() + 10
    while sqlite_wal.running(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not sqlite_wal.running(path)


def test_stores_made_and_dropped_while_collections_run_never_deadlock(tmp_path: Path) -> None:
    """A collection can free an unclosed store in any thread, also inside ``attach`` while it
    holds the registry's lock and starts a thread: nothing it triggers may take that lock."""
    done = threading.Event()

    def churn() -> None:
        for index in range(200):
            store = SqliteCheckpointStore(tmp_path / f"s{index % 7}.db")
            store.set("docs/a", {"n": index})
            cycle: list[object] = [store]
            cycle.append(cycle)  # only the cyclic collector frees it, whenever it runs
            if index % 25 == 0:
                gc.collect()
        done.set()

    thresholds = gc.get_threshold()
    gc.set_threshold(50, 2, 2)  # collections at many allocations, as under a big test suite
    try:
        worker = threading.Thread(target=churn, daemon=True)
        worker.start()
        assert done.wait(60), "creating and dropping stores deadlocked"
    finally:
        gc.set_threshold(*thresholds)
    worker.join(5)


def test_an_in_memory_store_has_no_thread() -> None:
    store = SqliteCheckpointStore(":memory:")
    try:
        assert not sqlite_wal.running(":memory:")
        store.set("docs/a", {"n": 1})
        assert store.get("docs/a") == {"n": 1}
    finally:
        store.close()

"""WAL checkpoints of the embedded SQLite file on a background thread, off the commit path.

SQLite in WAL mode normally checkpoints inside whichever ``COMMIT`` pushes the
WAL past 1,000 pages: that commit copies the WAL into the database and, with
``synchronous=NORMAL``, waits for two fsyncs: on average 0.23 ms of every hop of
``bench/runtime.py``, about half of what the store cost it. SQLite's
documentation suggests the alternative used here: turn the automatic
checkpoint off on the connections that commit and run
``PRAGMA wal_checkpoint(PASSIVE)`` from a thread of its own every
``INTERVAL_S`` (sqlite releases the GIL while it copies and syncs).

Durability is unchanged: a committed transaction is in the WAL when ``COMMIT``
returns, whether or not a checkpoint ran since; a process that exits without
closing leaves a WAL that the next connection replays. The last connection to
close checkpoints and removes the WAL as before.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Callable
from functools import partial
from pathlib import Path

INTERVAL_S = 0.25
"""How often the thread checkpoints; the WAL holds at most about this long of commits."""

WAL_SIZE_LIMIT = 64 * 1024 * 1024
"""``journal_size_limit``: a WAL that grew past this is truncated to it when it restarts."""

_lock = threading.Lock()
"""Guards ``_running``. Never taken from a garbage-collection callback: a collection can run
in any thread at any allocation, also in one that holds this lock or waits on one that does."""
_running: dict[str, _Checkpointer] = {}


class _Checkpointer:
    """One thread per database file, shared by the stores and indexes that attach to it.

    Its owners are held weakly: the thread retires once every owner has released it or
    been garbage-collected unclosed (it looks at each tick).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.owners: weakref.WeakSet[object] = weakref.WeakSet()
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"sqlite-wal-checkpoint:{Path(path).name}", daemon=True
        )

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while not self.stop.wait(INTERVAL_S):
                checkpoint(conn)
                if not self.owners and self._retire():
                    return
        finally:
            conn.close()

    def _retire(self) -> bool:
        with _lock:
            if self.owners:
                return False
            if _running.get(self.path) is self:
                del _running[self.path]
            return True


def checkpoint(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """One passive checkpoint: ``(busy, wal frames, frames copied)``; never waits for writers."""
    row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def attach(conn: sqlite3.Connection, path: str | Path, owner: object) -> Callable[[], None]:
    """Move ``conn``'s WAL checkpoints to the background thread of ``path`` (started if needed).

    Returns the release to call when ``owner`` closes ``conn``; an ``owner`` garbage-collected
    unclosed releases itself (the thread sees it gone). The thread stops when no owner is
    left. An in-memory database has no WAL and no thread.
    """
    if str(path) == ":memory:":
        return _nothing
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
    key = str(Path(path).resolve())
    with _lock:
        runner = _running.get(key)
        if runner is None:
            runner = _running[key] = _Checkpointer(key)
            runner.thread.start()
        runner.owners.add(owner)
    return partial(_release, key, weakref.ref(owner))


def _nothing() -> None:
    return None


def _release(key: str, owner: weakref.ref[object]) -> None:
    with _lock:
        runner = _running.get(key)
        alive = owner()
        if runner is None or alive is None:
            return
        runner.owners.discard(alive)
        del alive
        if runner.owners:
            return
        del _running[key]
    runner.stop.set()
    runner.thread.join()


def running(path: str | Path) -> bool:
    """Whether a checkpoint thread runs for the database at ``path``."""
    with _lock:
        return str(Path(path).resolve()) in _running

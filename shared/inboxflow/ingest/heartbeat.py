"""Renewing the short leases an ingest run holds, for as long as the run is alive.

An ingest run holds two kinds of lease: the mailbox's sync lease (one run
lists a mailbox's history at a time, ``mailbox_sync.py``) and the claim of the
message it is carrying out (``claims.py``). Both are short, shorter than
Pub/Sub's redelivery budget, so the messages of a run that was killed are
taken by the next delivery of its notification rather than dead-lettered
for want of time. A live run keeps them with this heartbeat: a daemon thread
renews every held lease every ``every_s`` seconds. The thread dies with the
process, so a killed run stops renewing at once; a run that hangs stops
renewing after ``max_hold_s`` (the function's timeout), so nothing is held
for ever.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from types import TracebackType

from ..clock import Clock
from ..repeating import Repeating

log = logging.getLogger("inboxflow.ingest")

Renew = Callable[[float], bool]
"""Renews one lease at the given time; False when the lease is no longer this run's."""


class Heartbeat:
    """Renews the leases a run holds while it runs (use as a context manager).

    Args:
        clock: the time leases are written in.
        every_s: seconds of wall time between two renewals.
        max_hold_s: stop renewing once the run has lasted this long (clock time).
    """

    def __init__(self, clock: Clock, every_s: float, max_hold_s: float) -> None:
        self.clock = clock
        self.every_s = every_s
        self.max_hold_s = max_hold_s
        self._held: dict[Hashable, Renew] = {}
        self._lock = threading.Lock()
        self._began = clock.now()
        self._beating = Repeating(self.beat, every_s, "ingest-heartbeat")

    def hold(self, key: Hashable, renew: Renew) -> None:
        """Renew ``key``'s lease with ``renew`` until it is dropped."""
        with self._lock:
            self._held[key] = renew

    def drop(self, key: Hashable) -> None:
        """Stop renewing ``key``'s lease (it was finished or given back)."""
        with self._lock:
            self._held.pop(key, None)

    def beat(self) -> int:
        """Renew every held lease now; returns how many are still held.

        A lease its renewal reports lost (another run took it over after it lapsed)
        is dropped; a renewal that fails (the store is down) is tried again next beat.
        """
        now = self.clock.now()
        if now - self._began > self.max_hold_s:
            with self._lock:
                self._held.clear()
            return 0
        with self._lock:
            held = list(self._held.items())
        for key, renew in held:
            try:
                kept = renew(now)
            except Exception as exc:  # the next beat tries again; the lease outlives a few misses
                log.warning("could not renew the ingest lease %s: %s", key, exc)
                continue
            if not kept:
                self.drop(key)
        with self._lock:
            return len(self._held)

    def __enter__(self) -> Heartbeat:
        self._beating.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._beating.stop()

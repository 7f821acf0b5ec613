"""``Repeating``: a function called every few seconds in a daemon thread, until stopped.

The ingest heartbeat renews its leases with one; the dev supervisor checks its
processes with another.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Repeating:
    """Calls ``tick`` every ``every_s`` seconds (first after one interval) from ``start`` to ``stop``.

    Args:
        tick: what to do each time; an exception it raises ends the repetition.
        every_s: seconds between two calls.
        name: the thread's name.
    """

    def __init__(self, tick: Callable[[], object], every_s: float, name: str) -> None:
        self.tick = tick
        self.every_s = every_s
        self.name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start calling ``tick`` in a daemon thread."""
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float | None = None) -> None:
        """Stop, and wait for a call under way to end (at most ``timeout_s`` when given)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.tick()

"""What ``inboxflow dev`` prints as traces move, and how it rides out an emulator's hiccup.

The Firestore emulator drops streams under load or when it is frozen
(``UNAVAILABLE: Stream removed``, deadlines): a failed poll is said once, in
one line, and retried with backoff (0.5 s doubling to 10 s); the next poll that
answers says so. No error of the store ends ``dev``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from inboxflow.schema import TRACES

if TYPE_CHECKING:
    from inboxflow.ports.checkpoint import DocumentCheckpointStore

POLL_S = 0.5
MAX_BACKOFF_S = 10.0


class TraceWatcher:
    """Prints a line per trace whose step or status changed since the last poll.

    Args:
        store: the emulated cloud's store.
        say: prints one line.
        since: only traces updated after this (epoch seconds).
    """

    def __init__(
        self,
        store: DocumentCheckpointStore,
        say: Callable[[str], None],
        since: float | None = None,
    ) -> None:
        self.store = store
        self.say = say
        self.since = time.time() - 1 if since is None else since
        self.seen: dict[str, tuple[int, str]] = {}
        self.failures = 0

    def poll(self) -> float:
        """Look once; returns how long to wait before the next look."""
        from inboxflow.dev.cli.render import route_of

        try:
            changed = []
            for trace_id, doc in self.store.list(
                TRACES.name, where=[("updated_at", ">=", self.since)]
            ):
                marker = (doc["step"], doc["status"])
                if self.seen.get(trace_id) != marker:
                    changed.append((trace_id, doc, marker))
            lines = [
                f"[dim]{time.strftime('%H:%M:%S')}[/dim] trace [bold]{trace_id}[/bold] "
                f"{doc['status']:<12} {route_of(self.store.step_logs(trace_id))}"
                for trace_id, doc, _ in changed
            ]
        except Exception as exc:
            self.failures += 1
            delay = min(POLL_S * 2**self.failures, MAX_BACKOFF_S)
            if self.failures == 1 or (delay == MAX_BACKOFF_S and self.failures % 6 == 0):
                first = str(exc).splitlines()[0] if str(exc) else ""
                self.say(
                    f"[yellow]the store did not answer ({type(exc).__name__}: {first}); "
                    f"trying again in {delay:.0f}s[/yellow]"
                )
            return delay
        if self.failures:
            self.say(f"the store answers again (after {self.failures} failed polls)")
            self.failures = 0
        for (trace_id, _, marker), line in zip(changed, lines, strict=True):
            self.seen[trace_id] = marker
            self.say(line)
        return POLL_S

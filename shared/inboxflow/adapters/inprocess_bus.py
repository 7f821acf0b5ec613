"""Embedded message bus: an in-process queue that drives the same handler as
the CloudEvent entry point, with Pub/Sub's at-least-once semantics (nack means
redelivery with backoff; too many attempts means the dead-letter list)."""

from __future__ import annotations

import heapq
import itertools
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..clock import Clock, SystemClock
from ..envelope import MAX_ENVELOPE_BYTES, Envelope
from ..ports.bus import MessageBus

MessageHandler = Callable[[dict[str, Any]], object]


class SimulatedCrash(BaseException):
    """Fault injection: the worker process dies here. Nothing in the runtime catches it."""


class Published(dict[str, Any]):
    """A message ``publish`` made: the Pub/Sub message as a push delivers it, which also
    carries the envelope it encodes (``envelope``), so that a consumer in this process may
    take it as is instead of decoding the bytes just encoded (``Runtime.handle_message``).

    ``envelope`` is None when the message is over the envelope limit: decoding refuses it
    there, as it would on Pub/Sub.
    """

    envelope: Envelope | None = None


_MAX_DATA = MAX_ENVELOPE_BYTES * 4 // 3
"""Base64 characters of the largest envelope a consumer accepts."""


class InProcessBus(MessageBus):
    """A delivery queue processed by ``drain``.

    Args:
        clock: time source for redelivery backoff.
        copies: deliver every published message this many times (duplicate storms).
        shuffle_seed: if set, deliver in random order instead of FIFO.
        max_attempts: deliveries before a message goes to ``dead_letters``
            (Pub/Sub's ``max_delivery_attempts``).
        min_backoff_s, max_backoff_s: redelivery delay bounds (Pub/Sub retry policy).
    """

    def __init__(
        self,
        clock: Clock | None = None,
        copies: int = 1,
        shuffle_seed: int | None = None,
        max_attempts: int = 5,
        min_backoff_s: float = 10.0,
        max_backoff_s: float = 600.0,
    ) -> None:
        self.clock = clock or SystemClock()
        self.copies = copies
        self.random = random.Random(shuffle_seed) if shuffle_seed is not None else None
        self.max_attempts = max_attempts
        self.min_backoff_s = min_backoff_s
        self.max_backoff_s = max_backoff_s
        self.handler: MessageHandler | None = None
        self._heap: list[tuple[float, int, int, dict[str, Any]]] = []
        self._ids = itertools.count()
        self.published = 0
        self.deliveries = 0
        self.redeliveries = 0
        self.dead_letters: list[tuple[dict[str, Any], str]] = []
        self._queue_lock = threading.RLock()
        self._drain_lock = threading.RLock()  # re-entrant: a handler may drain (in-process ingest)

    def publish(self, envelopes: Sequence[Envelope]) -> None:
        now = self.clock.now()
        for envelope in envelopes:
            self.published += 1
            for _ in range(self.copies):
                message = Published(envelope.to_pubsub_message(str(next(self._ids))))
                if len(message["data"]) <= _MAX_DATA:
                    message.envelope = envelope
                self.push_raw(message, not_before=now)

    def subscribe(self, handler: MessageHandler) -> None:
        """Deliver to ``handler`` unless a consumer subscribed first (the first runtime built)."""
        if self.handler is None:
            self.handler = handler

    def push_raw(
        self, message: dict[str, Any], not_before: float | None = None, attempt: int = 1
    ) -> None:
        """Enqueue a raw Pub/Sub message (tests use it to deliver garbage)."""
        when = self.clock.now() if not_before is None else not_before
        with self._queue_lock:
            heapq.heappush(self._heap, (when, next(self._ids), attempt, message))

    def dead_letter(self, message: dict[str, Any], reason: str, node_id: str | None) -> None:
        self.dead_letters.append((message, reason))

    def __len__(self) -> int:
        return len(self._heap)

    def _pop(self) -> tuple[float, int, int, dict[str, Any]]:
        now = self.clock.now()
        if self.random is not None:
            ready = [i for i, item in enumerate(self._heap) if item[0] <= now]
            if ready:
                index = self.random.choice(ready)
                item = self._heap[index]
                self._heap[index] = self._heap[-1]
                self._heap.pop()
                heapq.heapify(self._heap)
                return item
        return heapq.heappop(self._heap)

    def drain(self, limit: int = 1_000_000, on_delivery: Callable[[], None] | None = None) -> int:
        """Deliver until the queue is empty (or ``limit`` deliveries). Returns deliveries made.

        One thread drains at a time (``inboxflow serve`` drains after each request, from
        its request threads): another caller waits, then delivers whatever is left.
        """
        if self.handler is None:
            raise RuntimeError("InProcessBus.handler is not set")
        with self._drain_lock:
            return self._drain(limit, on_delivery)

    def _drain(self, limit: int, on_delivery: Callable[[], None] | None) -> int:
        assert self.handler is not None
        made = 0
        while made < limit:
            with self._queue_lock:
                if not self._heap:
                    break
                when, _, attempt, message = self._pop()
            wait = when - self.clock.now()
            if wait > 0:
                self.clock.sleep(wait)
            made += 1
            self.deliveries += 1
            try:
                self.handler(message)
            except (Exception, SimulatedCrash) as exc:
                self._nack(message, attempt, exc)
            if on_delivery is not None:
                on_delivery()
        return made

    def _nack(self, message: dict[str, Any], attempt: int, exc: BaseException) -> None:
        if attempt >= self.max_attempts:
            self.dead_letters.append((message, f"{type(exc).__name__}: {exc}"))
            return
        self.redeliveries += 1
        backoff = min(self.max_backoff_s, self.min_backoff_s * 2 ** (attempt - 1))
        self.push_raw(message, not_before=self.clock.now() + backoff, attempt=attempt + 1)

"""The embedded bus under concurrent drains (``inboxflow serve`` drains from its request threads)."""

from __future__ import annotations

import threading
import time
from typing import Any

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.clock import SystemClock
from inboxflow.envelope import Envelope


def test_concurrent_drains_deliver_each_message_once_and_one_at_a_time() -> None:
    bus = InProcessBus(clock=SystemClock())
    seen: list[str] = []
    running = 0
    most = 0
    lock = threading.Lock()

    def handle(message: dict[str, Any]) -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.002)
        seen.append(message["attributes"]["trace_id"])
        with lock:
            running -= 1

    bus.handler = handle
    bus.publish([Envelope(trace_id=f"t{i:03d}", graph="g", node="n", step=1) for i in range(200)])
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def drain() -> None:
        start.wait()
        try:
            bus.drain()
        except BaseException as exc:  # an IndexError from two pops of one heap, say
            errors.append(exc)

    threads = [threading.Thread(target=drain) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert sorted(seen) == [f"t{i:03d}" for i in range(200)]
    assert most == 1


def test_a_handler_may_drain_the_bus_it_is_called_from() -> None:
    bus = InProcessBus(clock=SystemClock())
    order: list[int] = []

    def handle(message: dict[str, Any]) -> None:
        step = int(message["attributes"]["step"])
        order.append(step)
        if step == 1:
            bus.publish([Envelope(trace_id="t", graph="g", node="n", step=2)])
            bus.drain()  # in-process ingest drains from inside a delivery

    bus.handler = handle
    bus.publish([Envelope(trace_id="t", graph="g", node="n", step=1)])
    assert bus.drain() == 1
    assert order == [1, 2]

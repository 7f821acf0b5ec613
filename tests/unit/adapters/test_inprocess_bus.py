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


def test_a_published_message_carries_its_envelope_and_a_raw_one_is_decoded(
    tmp_path, monkeypatch
) -> None:
    """The runtime takes the envelope a published message carries instead of decoding the
    bytes just encoded; a message pushed raw (or over the envelope limit) is decoded."""
    from inboxflow.adapters.inprocess_bus import Published
    from inboxflow.engine import runtime as runtime_module
    from tests.harness.toy_graph import make_runtime

    runtime, bus, _ = make_runtime(tmp_path)
    decoded: list[Any] = []
    decode = runtime_module.decode_pubsub_message

    def counting(message: Any) -> Envelope:
        decoded.append(message)
        return decode(message)

    monkeypatch.setattr(runtime_module, "decode_pubsub_message", counting)
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain()
    assert runtime.store.get_trace(trace_id).status == "done" and decoded == []

    envelope = Envelope(trace_id="t1", graph="toy", node="count", step=1)
    (published,) = _published(bus, envelope)
    assert isinstance(published, Published) and published.envelope is envelope
    assert published == envelope.to_pubsub_message(published["messageId"])  # a Pub/Sub message
    huge = Envelope(trace_id="t2", graph="toy", node="count", step=1, resume={"x": "y" * 90_000})
    assert _published(bus, huge)[0].envelope is None  # refused by decoding, as on Pub/Sub
    bus.push_raw({"data": "bm90IGFuIGVudmVsb3Bl"})  # "not an envelope"
    bus.drain()
    assert len(decoded) == 2 and len(bus.dead_letters) == 2  # the huge one and the raw one


def _published(bus: InProcessBus, envelope: Envelope) -> list[Any]:
    before = list(bus._heap)
    bus.publish([envelope])
    return [item[3] for item in bus._heap if item not in before]

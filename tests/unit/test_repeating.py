"""``Repeating``: calls its tick every interval in a daemon thread until stopped."""

from __future__ import annotations

import threading

from inboxflow.repeating import Repeating


def test_repeating_ticks_after_each_interval_and_no_more_once_stopped() -> None:
    ticked = threading.Event()
    calls: list[str] = []

    def tick() -> None:
        calls.append(threading.current_thread().name)
        ticked.set()

    repeating = Repeating(tick, every_s=0.01, name="test-repeating")
    assert calls == []
    repeating.start()
    assert ticked.wait(5)
    repeating.stop()
    stopped_at = len(calls)
    assert calls[0] == "test-repeating"
    threading.Event().wait(0.05)
    assert len(calls) == stopped_at


def test_stopping_what_never_started_does_nothing() -> None:
    Repeating(lambda: None, every_s=60, name="idle").stop()

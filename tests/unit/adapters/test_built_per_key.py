"""``BuiltPerKey``: one value per key, built once even when threads ask together."""

from __future__ import annotations

import threading
import time

import pytest

from inboxflow.adapters.built_per_key import BuiltPerKey


def test_each_key_is_built_once_and_kept() -> None:
    built: list[str] = []

    def build(key: str) -> str:
        built.append(key)
        return key.upper()

    values = BuiltPerKey(build)
    assert [values.get("a"), values.get("b"), values.get("a")] == ["A", "B", "A"]
    assert built == ["a", "b"]


def test_threads_asking_together_get_one_value() -> None:
    calls: list[int] = []

    def slow(key: int) -> object:
        calls.append(key)
        time.sleep(0.05)
        return object()

    values: BuiltPerKey[int, object] = BuiltPerKey(slow)
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(values.get(1))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1] and len({id(value) for value in got}) == 1


def test_a_build_that_raises_is_tried_again() -> None:
    attempts: list[str] = []

    def flaky(key: str) -> str:
        attempts.append(key)
        if len(attempts) == 1:
            raise RuntimeError("not yet")
        return key

    values = BuiltPerKey(flaky)
    with pytest.raises(RuntimeError):
        values.get("k")
    assert values.get("k") == "k" and attempts == ["k", "k"]

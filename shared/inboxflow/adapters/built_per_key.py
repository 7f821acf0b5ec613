"""``BuiltPerKey``: one value per key, built on the key's first use and then kept.

What an adapter keeps one of per something (the notifier's adapter per delivery,
Gemini's client per Vertex location) when several threads may ask at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BuiltPerKey(Generic[K, V]):
    """Values made by ``build(key)``, once per key, thread-safe.

    Args:
        build: makes the value of a key; called once per key (again only if it raised).
    """

    def __init__(self, build: Callable[[K], V]) -> None:
        self._build = build
        self._built: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V:
        """The value of ``key`` (built now if needed)."""
        with self._lock:
            if key not in self._built:
                self._built[key] = self._build(key)
            return self._built[key]


__all__ = ["BuiltPerKey"]

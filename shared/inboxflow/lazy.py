"""``Lazy[T]``: a part built on its first access, so its adapter is imported only then.

The composition root (``inboxflow.services``) wires the model, the embedder, the
workspace, the task queue, the notifier, the CRM ... as ``Lazy`` parts of
``Ports``: a node function that never asks for one never imports its client
library (cold start matters).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """A value built by ``build`` on the first ``get()``, then kept.

    Args:
        build: makes the value; called at most once (again only if it raised).
    """

    __slots__ = ("_build", "_built", "_value")

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._built = False
        self._value: T | None = None

    @property
    def built(self) -> bool:
        """Whether the value was built."""
        return self._built

    def get(self) -> T:
        """The value (built now if needed)."""
        if not self._built:
            self._value = self._build()
            self._built = True
        return self._value  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"Lazy({'built' if self._built else 'not built'})"


def as_lazy(value: T | Lazy[T]) -> Lazy[T]:
    """``value`` as a ``Lazy`` (one already built when ``value`` is not lazy)."""
    if isinstance(value, Lazy):
        return value
    built: Lazy[T] = Lazy(lambda: value)
    return built


def import_reference(reference: str, what: str) -> Any:
    """The object at ``module:attribute`` (``attribute`` may be dotted).

    Raises:
        ValueError: the reference is malformed, its module does not import, or it has no such attribute.
    """
    module_name, _, attribute = reference.strip().partition(":")
    if not module_name or not attribute:
        raise ValueError(f"{what} reference {reference!r}: expected module:attribute")
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(
            f"{what} reference {reference!r}: cannot import {module_name}: {exc}"
        ) from exc
    for name in attribute.split("."):
        if not hasattr(found, name):
            raise ValueError(f"{what} reference {reference!r}: {module_name} has no {attribute}")
        found = getattr(found, name)
    return found

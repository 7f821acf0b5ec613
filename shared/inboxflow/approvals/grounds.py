"""What every part of the approval protocol stands on: the store, the clock, the config.

``Grounds`` is built once by ``ApprovalService`` and handed to each part
(``Tokens``, ``SignIns``, ``Decisions``, ``Deadlines``, ``Notifications``,
``Digests``); ``Part`` keeps it and names its three members, so a part's
constructor takes only what is its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from ..clock import Clock
from ..engine.members import Member
from ..lazy import Lazy, as_lazy
from ..ports.documents import DocumentStore
from .settings import ApprovalConfig

T = TypeVar("T")


@dataclass(frozen=True)
class Grounds:
    """The store, the clock and the config the approval parts share.

    Args:
        store: where approvals, token, sign-in and digest records live.
        clock: time source.
        config: where links point, and limits.
    """

    store: DocumentStore
    clock: Clock
    config: ApprovalConfig


class Part:
    """A part of the approval protocol: ``store``, ``clock`` and ``config`` from its grounds."""

    def __init__(self, grounds: Grounds) -> None:
        self.grounds = grounds
        self.store = grounds.store
        self.clock = grounds.clock
        self.config = grounds.config


class LazyMember(Member[T]):
    """A part's member built on first use: a port whose adapter is imported only then.

    Reading it builds the value (``Lazy.get``); assigning it takes the value or a
    ``Lazy`` of it (the constructor's argument, or a double a test swaps in).
    """

    def read(self, part: Any) -> T:
        built: Lazy[T] = getattr(part, f"_{self.name}")
        return built.get()

    def write(self, part: Any, value: Any) -> None:
        setattr(part, f"_{self.name}", as_lazy(value))

"""What every part of the approval protocol stands on: the store, the clock, the config.

``Grounds`` is built once by ``ApprovalService`` and handed to each part
(``Tokens``, ``SignIns``, ``Decisions``, ``Deadlines``, ``Notifications``,
``Digests``); ``Part`` keeps it and names its three members, so a part's
constructor takes only what is its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..clock import Clock
from ..ports.documents import DocumentStore
from .settings import ApprovalConfig


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

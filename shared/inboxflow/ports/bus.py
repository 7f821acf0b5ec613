"""The message bus port: publish envelopes to the topic of their node."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from ..envelope import Envelope


class MessageBus(ABC):
    """Delivers each envelope, at least once, to the function of its node."""

    @abstractmethod
    def publish(self, envelopes: Sequence[Envelope]) -> None:
        """Publish envelopes with ``ordering_key = trace_id``; return once accepted.

        Raises:
            RetryableError: the bus did not accept every envelope.
        """

    @abstractmethod
    def dead_letter(self, message: dict[str, Any], reason: str, node_id: str | None) -> None:
        """Park a message that is not a valid envelope where operators look for it."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Flush and release clients."""

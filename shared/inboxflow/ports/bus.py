"""The message bus port: publish envelopes to the topic of their node."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
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

    def subscribe(self, handler: Callable[[dict[str, Any]], object]) -> None:  # noqa: B027
        """Deliver this process's messages to ``handler`` (the runtime, at its construction).

        Only the in-process bus delivers in the process; Pub/Sub pushes to each node's
        function through the subscriptions infra/ declares, so this is a no-op here.
        """

    def close(self) -> None:  # noqa: B027 - optional hook
        """Flush and release clients."""

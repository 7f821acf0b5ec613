"""Dead-lettering counted by the function, where Pub/Sub cannot do it: the emulator.

In production a push subscription's dead-letter policy moves a message to the
function's ``-dlq`` topic after ``max_delivery_attempts`` (Terraform,
``infra/modules/node_function``). The Pub/Sub emulator does not implement
dead-letter policies (nor retry policies: it redelivers about once a second);
a push subscription created with one crashes in the emulator after the last
attempt (``NullPointerException`` at ``MessageBacklog.pull``) and that
subscription delivers nothing more. So the emulated topology
(``INBOXFLOW_DEAD_LETTERING=function``, set by ``inboxflow dev``) creates push
subscriptions without the policy, and the function keeps it instead:

- each failed delivery of a message (the function raised, so Pub/Sub
  redelivers) adds one to ``delivery_attempts/{function}:{message_id}``;
  a delivery that succeeds writes nothing;
- once a message failed ``max_attempts`` times and has been failing for at
  least the time production's retry policy would have spread those attempts
  over (``RedeliveryPolicy.budget_s``: the emulator's once-a-second redelivery
  would otherwise spend them in seconds, long before a dead worker's lease
  lapses), the function publishes it to its ``-dlq`` topic with the reason and
  acknowledges it.

A delivery whose process dies before answering is not counted (production
counts it); the supervisor of ``inboxflow dev`` restarts the process and the
message comes back.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .clock import Clock
from .ports.bus import MessageBus
from .ports.documents import DocumentStore, Transaction
from .schema import DELIVERY_ATTEMPTS
from .settings import RedeliveryPolicy

log = logging.getLogger("inboxflow.delivery_attempts")

RETENTION_S = 7 * 86400
MAX_ERROR_CHARS = 500


@dataclass(frozen=True)
class FailedDelivery:
    """The count of one message's failed deliveries to one function."""

    attempts: int
    first_failed_at: float
    last_error: str


def message_id_of(message: Any) -> str | None:
    """The Pub/Sub message id of a push body's ``message`` (None when it has none)."""
    if not isinstance(message, Mapping):
        return None
    value = message.get("messageId") or message.get("message_id")
    return str(value) if value else None


class DeliveryAttempts:
    """Failed deliveries per message and function, and the dead-lettering they lead to.

    Args:
        store: where the counts live (``delivery_attempts``).
        bus: what publishes to the dead-letter topics.
        policy: when a message is given up.
        clock: the time source.
    """

    def __init__(
        self, store: DocumentStore, bus: MessageBus, policy: RedeliveryPolicy, clock: Clock
    ) -> None:
        self.store = store
        self.bus = bus
        self.policy = policy
        self.clock = clock

    def record_failure(self, function: str, message_id: str, error: str) -> FailedDelivery:
        """Count one failed delivery of ``message_id`` to ``function``."""
        path = DELIVERY_ATTEMPTS.path(f"{function}:{message_id}")
        now = self.clock.now()

        def count(tx: Transaction) -> FailedDelivery:
            doc = tx.get(path) or {"attempts": 0, "first_failed_at": now}
            doc.update(
                attempts=int(doc["attempts"]) + 1,
                last_error=error[:MAX_ERROR_CHARS],
                function=function,
                message_id=message_id,
                updated_at=now,
                expire_at=now + RETENTION_S,
            )
            tx.set(path, doc)
            return FailedDelivery(doc["attempts"], float(doc["first_failed_at"]), error)

        return self.store.run_transaction(count)

    def exhausted(self, failed: FailedDelivery) -> bool:
        """Whether production's policy would have dead-lettered the message by now."""
        elapsed = self.clock.now() - failed.first_failed_at
        return failed.attempts >= self.policy.max_attempts and elapsed >= self.policy.budget_s

    def after_failure(self, function: str, message: Any, error: BaseException) -> bool:
        """Count a failed delivery; dead-letter the message when it is exhausted.

        Returns:
            True when the message went to the dead-letter topic (the caller acknowledges
            it); False when Pub/Sub must redeliver it (the caller re-raises). A message
            without an id, or a count the store cannot write, is redelivered.
        """
        message_id = message_id_of(message)
        if message_id is None:
            return False
        text = f"{type(error).__name__}: {error}"
        try:
            failed = self.record_failure(function, message_id, text)
            if not self.exhausted(failed):
                return False
            reason = (
                f"not acknowledged by {function} after {failed.attempts} deliveries "
                f"in {self.clock.now() - failed.first_failed_at:.0f}s (counted by the function: "
                f"the Pub/Sub emulator has no dead-lettering); last error: {text}"
            )
            self.bus.dead_letter(dict(message), reason[: MAX_ERROR_CHARS * 2], function)
        except Exception as counting:  # the store or the bus is down too: redeliver
            log.warning("could not count the failed delivery of %s: %s", message_id, counting)
            return False
        log.error("dead-lettered message %s: %s", message_id, reason)
        return True

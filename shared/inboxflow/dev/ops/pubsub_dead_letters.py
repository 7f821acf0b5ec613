"""Reading and replaying the dead-letter subscriptions (``inboxflow dlq``).

Each node's push subscription dead-letters to ``{topic}-dlq`` (Pub/Sub forwards
a message there after ``max_delivery_attempts``, or on the emulator the function
itself does, ``inboxflow.delivery_attempts``; the runtime publishes there what
is not an envelope at all), ingest's to ``inboxflow-gmail-dlq``, and
messages no node can be named for go to ``inboxflow-dead-letter``. Each of
those topics has a ``-sub`` pull subscription that keeps the messages
(``infra/pubsub.tf``, ``PubSubAdmin.ensure_topics``).

``peek`` pulls and hands the messages straight back (ack deadline 0), so
listing changes nothing. ``replay`` publishes each message to where it was
going (an envelope to its node's topic, a Gmail notification to the Gmail
topic) and acknowledges it only once the publish is accepted. Replays carry no
ordering key: one trace has one step in flight, and an envelope that still
arrives early is retried by the runtime (rule 1). Replaying a message twice is harmless: the step protocol
drops the duplicate delivery.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from google.api_core import exceptions as gexc

from ...adapters.pubsub_bus import (
    GMAIL_TOPIC,
    INGEST_DEAD_LETTER_TOPIC,
    SHARED_DEAD_LETTER_TOPIC,
    PubSubAdmin,
)
from ...envelope import Envelope, decode_body
from ...errors import BadEnvelope
from ...naming import dead_letter_topic_name, topic_name

SUBSCRIPTION_SUFFIX = "-sub"
PULL_TIMEOUT_S = 10.0


def dead_letter_subscriptions(nodes: Iterable[tuple[str, str]]) -> dict[str, str | None]:
    """Every dead-letter pull subscription, and the topic its messages were meant for.

    Args:
        nodes: ``(graph, node)`` pairs of the deployed graphs.

    Returns:
        ``{subscription: topic}``; the topic is None for the shared dead-letter topic
        (its messages go wherever their envelope says).
    """
    subscriptions: dict[str, str | None] = {
        f"{dead_letter_topic_name(g, n)}{SUBSCRIPTION_SUFFIX}": topic_name(g, n) for g, n in nodes
    }
    subscriptions[f"{INGEST_DEAD_LETTER_TOPIC}{SUBSCRIPTION_SUFFIX}"] = GMAIL_TOPIC
    subscriptions[f"{SHARED_DEAD_LETTER_TOPIC}{SUBSCRIPTION_SUFFIX}"] = None
    return subscriptions


@dataclass
class DeadLetter:
    """One message held by a dead-letter subscription."""

    subscription: str
    message_id: str
    ack_id: str
    data: bytes
    attributes: dict[str, str]
    ordering_key: str
    published_at: float
    delivery_attempt: int
    envelope: Envelope | None = field(default=None)
    problem: str | None = None
    """Why the body is not an envelope (None when it is one, or for Gmail notifications)."""

    @property
    def reason(self) -> str:
        """Why it was dead-lettered: the runtime's ``reason``, or Pub/Sub's delivery limit."""
        if "reason" in self.attributes:
            return self.attributes["reason"]
        source = self.attributes.get("CloudPubSubDeadLetterSourceSubscription")
        if source:
            attempts = self.attributes.get("CloudPubSubDeadLetterSourceDeliveryCount", "?")
            return f"not acknowledged by {source} after {attempts} deliveries"
        return "unknown"

    def summary(self) -> dict[str, Any]:
        """What ``dlq list`` / ``dlq show --json`` print."""
        body: Any
        try:
            body = json.loads(self.data)
        except ValueError:
            body = self.data.decode(errors="replace")
        return {
            "subscription": self.subscription,
            "message_id": self.message_id,
            "trace_id": self.envelope.trace_id
            if self.envelope
            else self.attributes.get("trace_id"),
            "node": self.envelope.node if self.envelope else self.attributes.get("node"),
            "step": self.envelope.step if self.envelope else None,
            "reason": self.reason,
            "published_at": self.published_at,
            "attributes": self.attributes,
            "body": body,
        }


class DeadLetterQueues:
    """The dead-letter subscriptions of one project.

    Args:
        admin: the Pub/Sub clients (its project is the one read).
        subscriptions: ``dead_letter_subscriptions(...)`` of the deployed graphs.
    """

    def __init__(self, admin: PubSubAdmin, subscriptions: dict[str, str | None]) -> None:
        self.admin = admin
        self.subscriptions = subscriptions

    def check(self, subscription: str) -> None:
        """Raise ``KeyError`` with the known names if ``subscription`` is not a dead-letter one."""
        if subscription not in self.subscriptions:
            raise KeyError(
                f"{subscription!r} is not a dead-letter subscription (known: "
                f"{', '.join(sorted(self.subscriptions))})"
            )

    def peek(self, subscription: str, limit: int = 100) -> list[DeadLetter]:
        """Up to ``limit`` messages of ``subscription``, handed back at once (nothing changes).

        A subscription that does not exist (a node not deployed) holds nothing.
        """
        letters = self._pull(subscription, limit)
        self._nack(subscription, letters)
        return letters

    def replay(
        self, subscription: str, message_ids: set[str] | None = None, limit: int = 1000
    ) -> tuple[list[DeadLetter], list[DeadLetter]]:
        """Publish the messages of ``subscription`` (those of ``message_ids``, or all) again.

        Returns:
            ``(replayed, left)``: the acknowledged ones, and those left in place
            (not chosen, or with nowhere to go: see ``DeadLetter.problem``).
        """
        letters = self._pull(subscription, limit)
        chosen = [m for m in letters if message_ids is None or m.message_id in message_ids]
        left = [m for m in letters if m not in chosen]
        replayed: list[DeadLetter] = []
        futures = []
        for letter in chosen:
            topic = self._destination(subscription, letter)
            if topic is None:
                left.append(letter)
                continue
            if letter.envelope is not None:
                future = self.admin.publisher.publish(
                    self.admin.topic_path(topic),
                    letter.envelope.to_bytes(),
                    **letter.envelope.attributes(),
                )
            else:
                attributes = {k: v for k, v in letter.attributes.items() if k != "reason"}
                attributes.pop("node_id", None)
                future = self.admin.publisher.publish(
                    self.admin.topic_path(topic), letter.data, **_pubsub_attributes(attributes)
                )
            futures.append((letter, future))
        for letter, future in futures:
            future.result(timeout=30)
            replayed.append(letter)
        self._ack(subscription, replayed)
        self._nack(subscription, left)
        return replayed, left

    def _destination(self, subscription: str, letter: DeadLetter) -> str | None:
        meant_for = self.subscriptions.get(subscription)
        if meant_for == GMAIL_TOPIC:
            return GMAIL_TOPIC
        if letter.envelope is None:
            letter.problem = letter.problem or "not an envelope"
            return None
        return topic_name(letter.envelope.graph, letter.envelope.node)

    def _pull(self, subscription: str, limit: int) -> list[DeadLetter]:
        path = self.admin.subscription_path(subscription)
        letters: list[DeadLetter] = []
        while len(letters) < limit:
            try:
                response = self.admin.subscriber.pull(
                    request={
                        "subscription": path,
                        "max_messages": min(100, limit - len(letters)),
                        "return_immediately": True,
                    },
                    timeout=PULL_TIMEOUT_S,
                )
            except (gexc.NotFound, gexc.DeadlineExceeded):
                break
            received = response.received_messages
            if not received:
                break
            seen = {m.message_id for m in letters}
            fresh = [m for m in received if m.message.message_id not in seen]
            letters += [self._letter(subscription, m) for m in fresh]
            if len(fresh) < len(received):
                break
        return letters

    def _letter(self, subscription: str, received: Any) -> DeadLetter:
        message = received.message
        data = bytes(message.data)
        letter = DeadLetter(
            subscription=subscription,
            message_id=message.message_id,
            ack_id=received.ack_id,
            data=data,
            attributes=dict(message.attributes),
            ordering_key=message.ordering_key,
            published_at=message.publish_time.timestamp(),
            delivery_attempt=received.delivery_attempt,
        )
        if self.subscriptions.get(subscription) != GMAIL_TOPIC:
            try:
                letter.envelope = decode_body(data)
            except BadEnvelope as exc:
                letter.problem = str(exc)
        return letter

    def _ack(self, subscription: str, letters: list[DeadLetter]) -> None:
        if letters:
            self.admin.subscriber.acknowledge(request=self._letters(subscription, letters))

    def _nack(self, subscription: str, letters: list[DeadLetter]) -> None:
        if letters:
            self.admin.subscriber.modify_ack_deadline(
                request={**self._letters(subscription, letters), "ack_deadline_seconds": 0}
            )

    def _letters(self, subscription: str, letters: list[DeadLetter]) -> dict[str, Any]:
        """The request naming ``letters`` of ``subscription`` (to ack or to nack)."""
        return {
            "subscription": self.admin.subscription_path(subscription),
            "ack_ids": [m.ack_id for m in letters],
        }


def _pubsub_attributes(attributes: dict[str, str]) -> dict[str, str]:
    """Attributes Pub/Sub accepts on publish (it reserves the ``goog`` prefix)."""
    return {k: v for k, v in attributes.items() if not k.lower().startswith("goog")}


__all__ = ["DeadLetter", "DeadLetterQueues", "dead_letter_subscriptions"]

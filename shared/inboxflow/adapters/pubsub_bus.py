"""Pub/Sub message bus: one topic per graph node, ordered by trace, dead-letter topics.

``PubSubBus`` is what node functions publish with. ``PubSubAdmin`` creates the
topics and subscriptions that Terraform declares in production, for the
emulator (``inboxflow dev``, integration tests).

The Pub/Sub emulator differs from production in ways callers must respect:
a push body carries no ``orderingKey`` or ``deliveryAttempt``; the retry
policy is ignored (redelivery about once a second); and it has no
dead-lettering: a push subscription with a dead-letter policy crashes in the
emulator after ``max_delivery_attempts`` (``NullPointerException`` at
``MessageBacklog.pull``) and delivers nothing more. ``ensure_push_subscription``
with ``dead_letter_topic`` but ``dead_letter_policy=False`` creates the topic and
its ``-sub`` and leaves the policy out: the function dead-letters by counting
(``inboxflow.delivery_attempts``).

Only this module imports ``google.cloud.pubsub_v1``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import pubsub_v1  # type: ignore[attr-defined]
from google.protobuf import duration_pb2

from ..envelope import Envelope
from ..errors import RetryableError
from ..naming import PREFIX, dead_letter_topic_name, node_id, subscription_name, topic_name
from ..ports.bus import MessageBus

log = logging.getLogger("inboxflow.pubsub")

SHARED_DEAD_LETTER_TOPIC = f"{PREFIX}-dead-letter"
"""Where messages go that no node can be named for (``node_id`` None)."""

GMAIL_TOPIC = f"{PREFIX}-gmail"
"""The topic Gmail watch notifications go to; the ``ingest`` function is pushed from it."""

INGEST_DEAD_LETTER_TOPIC = f"{GMAIL_TOPIC}-dlq"
"""The dead-letter topic of the ``ingest`` function's subscription."""

PUBLISH_BATCH_LATENCY_S = 0.001
"""How long the publisher holds a message for more to batch with it (the client's default
is 10 ms). A node publishes its next envelopes together and then waits for them: longer
batching only delays the hop."""

MAX_ATTRIBUTE_VALUE_BYTES = 1024
MAX_ATTRIBUTE_KEY_BYTES = 256


def _project(project: str | None) -> str:
    return project or "inboxflow-local"


def dead_letter_topic_for(node: str | None) -> str:
    """The dead-letter topic of ``node`` (``graph.node``, or ``ingest``), or the shared one."""
    if node == "ingest":
        return INGEST_DEAD_LETTER_TOPIC
    if node and "." in node:
        graph, _, name = node.partition(".")
        return dead_letter_topic_name(graph, name)
    return SHARED_DEAD_LETTER_TOPIC


def _truncate(text: str, limit: int) -> str:
    encoded = text.encode()
    return text if len(encoded) <= limit else encoded[:limit].decode(errors="ignore")


def _raw_body(message: Mapping[str, Any]) -> bytes:
    """The message's data as published if it decodes, else the whole message as JSON."""
    data = message.get("data")
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            pass
    return json.dumps(message, default=repr, sort_keys=True).encode()


def _dead_letter_attributes(
    message: Mapping[str, Any], reason: str, node: str | None
) -> dict[str, str]:
    attributes: dict[str, str] = {}
    original = message.get("attributes")
    if isinstance(original, Mapping):
        for key, value in list(original.items())[:90]:
            key = str(key)
            if key.startswith("goog") or len(key.encode()) > MAX_ATTRIBUTE_KEY_BYTES:
                continue
            attributes[key] = _truncate(str(value), MAX_ATTRIBUTE_VALUE_BYTES)
    attributes["reason"] = _truncate(reason, MAX_ATTRIBUTE_VALUE_BYTES)
    attributes["node_id"] = node or ""
    return attributes


class PubSubBus(MessageBus):
    """Publishes envelopes to ``naming.topic_name(graph, node)`` with ``ordering_key = trace_id``.

    Args:
        project: Google Cloud project (the settings' ``project``; default ``inboxflow-local``).
        publisher: an existing client; it must have message ordering enabled.
        timeout_s: how long ``publish`` waits for the server to accept each message.
    """

    def __init__(
        self,
        project: str | None = None,
        publisher: pubsub_v1.PublisherClient | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.project = _project(project)
        self.publisher = publisher or pubsub_v1.PublisherClient(
            batch_settings=pubsub_v1.types.BatchSettings(max_latency=PUBLISH_BATCH_LATENCY_S),
            publisher_options=pubsub_v1.types.PublisherOptions(enable_message_ordering=True),
        )
        self.timeout_s = timeout_s

    def topic_path(self, topic: str) -> str:
        """``projects/{project}/topics/{topic}``."""
        return str(self.publisher.topic_path(self.project, topic))

    def publish(self, envelopes: Sequence[Envelope]) -> None:
        pending = []
        for envelope in envelopes:
            topic = self.topic_path(topic_name(envelope.graph, envelope.node))
            try:
                future = self.publisher.publish(
                    topic,
                    envelope.to_bytes(),
                    ordering_key=envelope.ordering_key,
                    **envelope.attributes(),
                )
            except pubsub_v1.publisher.exceptions.PublishToPausedOrderingKeyException as exc:
                self.publisher.resume_publish(topic, envelope.ordering_key)
                raise RetryableError(f"publishing to {topic} was paused: {exc}") from exc
            pending.append((topic, envelope, future))
        failures = []
        for topic, envelope, future in pending:
            try:
                future.result(timeout=self.timeout_s)
            except Exception as exc:  # any failure: the key is paused until resumed
                self.publisher.resume_publish(topic, envelope.ordering_key)
                failures.append(f"step {envelope.step} of {envelope.trace_id} to {topic}: {exc}")
        if failures:
            raise RetryableError(f"Pub/Sub did not accept {'; '.join(failures)}")

    def dead_letter(self, message: dict[str, Any], reason: str, node_id: str | None) -> None:
        """Publish the raw message data with ``reason`` and ``node_id`` attributes.

        Goes to ``naming.dead_letter_topic_name`` of ``node_id`` (``graph.node``),
        or to ``inboxflow-dead-letter``. A missing topic is logged, not raised:
        the runtime has already recorded the failure where it can be queried,
        and redelivering the message cannot create the topic.

        Raises:
            RetryableError: Pub/Sub did not accept the message (transient).
        """
        topic = self.topic_path(dead_letter_topic_for(node_id))
        future = self.publisher.publish(
            topic, _raw_body(message), **_dead_letter_attributes(message, reason, node_id)
        )
        try:
            future.result(timeout=self.timeout_s)
        except gexc.NotFound:
            log.error("dead-letter topic %s does not exist; message dropped: %s", topic, reason)
        except Exception as exc:
            raise RetryableError(f"could not dead-letter a message to {topic}: {exc}") from exc

    def close(self) -> None:
        self.publisher.stop()


def publish_data(topic: str, data: bytes, timeout_s: float = 30.0) -> str:
    """Publish one message of raw ``data`` to ``topic`` (``projects/P/topics/T``), as Gmail
    publishes its notifications; returns the message id."""
    publisher = pubsub_v1.PublisherClient()
    try:
        return str(publisher.publish(topic, data).result(timeout=timeout_s))
    finally:
        publisher.stop()


def _seconds(value: float) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=int(value), nanos=int((value % 1) * 1e9))


class PubSubAdmin:
    """Creates topics and subscriptions (idempotently) for local setups.

    In production Terraform owns these (``infra/pubsub.tf``, the node
    function module); the shapes here mirror it: per node a topic, a
    dead-letter topic with a ``-sub`` pull subscription that keeps dead
    letters, and a push subscription with ordering, a retry policy and a
    dead-letter policy.

    Args:
        project: Google Cloud project (the settings' ``project``; default ``inboxflow-local``).
    """

    def __init__(self, project: str | None = None) -> None:
        self.project = _project(project)
        self.publisher = pubsub_v1.PublisherClient()
        self.subscriber = pubsub_v1.SubscriberClient()

    def topic_path(self, topic: str) -> str:
        """``projects/{project}/topics/{topic}``."""
        return str(self.publisher.topic_path(self.project, topic))

    def subscription_path(self, subscription: str) -> str:
        """``projects/{project}/subscriptions/{subscription}``."""
        return str(self.subscriber.subscription_path(self.project, subscription))

    def ensure_topic(self, topic: str) -> str:
        """Create a topic unless it exists; returns its path."""
        path = self.topic_path(topic)
        with contextlib.suppress(gexc.AlreadyExists):
            self.publisher.create_topic(name=path)
        return path

    def ensure_pull_subscription(
        self, subscription: str, topic: str, ordered: bool = False, ack_deadline_s: int = 60
    ) -> str:
        """Create a pull subscription unless it exists; returns its path."""
        path = self.subscription_path(subscription)
        request = {
            "name": path,
            "topic": self.ensure_topic(topic),
            "enable_message_ordering": ordered,
            "ack_deadline_seconds": ack_deadline_s,
        }
        with contextlib.suppress(gexc.AlreadyExists):
            self.subscriber.create_subscription(request=request)
        return path

    def ensure_push_subscription(
        self,
        subscription: str,
        topic: str,
        endpoint: str,
        dead_letter_topic: str | None = None,
        max_delivery_attempts: int = 5,
        minimum_backoff_s: float = 10.0,
        maximum_backoff_s: float = 600.0,
        ack_deadline_s: int = 60,
        dead_letter_policy: bool = True,
    ) -> str:
        """Create an ordered push subscription, or point an existing one at ``endpoint``.

        Args:
            subscription: subscription id.
            topic: topic id (created if missing).
            endpoint: URL Pub/Sub POSTs each message to.
            dead_letter_topic: topic id for messages that failed ``max_delivery_attempts``
                times (created, with a ``-sub`` pull subscription, if missing).
            max_delivery_attempts: 5 to 100.
            minimum_backoff_s, maximum_backoff_s: redelivery backoff (0 to 600 s).
            ack_deadline_s: how long the endpoint may take (10 to 600 s).
            dead_letter_policy: False: create the dead-letter topic and its ``-sub`` but
                no policy (the emulator: its function dead-letters by counting).

        Returns:
            The subscription's path.
        """
        path = self.subscription_path(subscription)
        request: dict[str, Any] = {
            "name": path,
            "topic": self.ensure_topic(topic),
            "push_config": {"push_endpoint": endpoint},
            "enable_message_ordering": True,
            "ack_deadline_seconds": ack_deadline_s,
            "retry_policy": {
                "minimum_backoff": _seconds(minimum_backoff_s),
                "maximum_backoff": _seconds(maximum_backoff_s),
            },
        }
        if dead_letter_topic is not None:
            self.ensure_pull_subscription(f"{dead_letter_topic}-sub", dead_letter_topic)
        if dead_letter_topic is not None and dead_letter_policy:
            request["dead_letter_policy"] = {
                "dead_letter_topic": self.topic_path(dead_letter_topic),
                "max_delivery_attempts": max_delivery_attempts,
            }
        try:
            self.subscriber.create_subscription(request=request)
        except gexc.AlreadyExists:
            self.subscriber.modify_push_config(
                request={"subscription": path, "push_config": {"push_endpoint": endpoint}}
            )
        return path

    def ensure_topics(
        self,
        nodes: Iterable[tuple[str, str]],
        push_endpoints: Mapping[str, str] | None = None,
        **push_options: Any,
    ) -> dict[str, str]:
        """Create every node's topic and dead-letter topic, and push subscriptions.

        Args:
            nodes: ``(graph, node)`` pairs.
            push_endpoints: URL per ``graph.node`` id; nodes listed get a push
                subscription (``naming.subscription_name``) to it.
            **push_options: passed to ``ensure_push_subscription``
                (``max_delivery_attempts``, ``minimum_backoff_s``, ...).

        Returns:
            Topic path per ``graph.node`` id.
        """
        push_endpoints = push_endpoints or {}
        self.ensure_pull_subscription(f"{SHARED_DEAD_LETTER_TOPIC}-sub", SHARED_DEAD_LETTER_TOPIC)
        topics: dict[str, str] = {}
        for graph, node in nodes:
            key = node_id(graph, node)
            topic, dead_letter = topic_name(graph, node), dead_letter_topic_name(graph, node)
            topics[key] = self.ensure_topic(topic)
            self.ensure_pull_subscription(f"{dead_letter}-sub", dead_letter)
            if key in push_endpoints:
                self.ensure_push_subscription(
                    subscription_name(graph, node),
                    topic,
                    push_endpoints[key],
                    dead_letter_topic=dead_letter,
                    **push_options,
                )
        return topics

    def pull(
        self, subscription: str, max_messages: int = 100, timeout_s: float = 5.0
    ) -> list[dict[str, Any]]:
        """Pull and acknowledge messages (for tests and operators reading dead letters).

        Returns:
            Messages as ``{"data": bytes, "attributes": dict, "ordering_key": str,
            "message_id": str, "delivery_attempt": int}``.
        """
        path = self.subscription_path(subscription)
        try:
            response = self.subscriber.pull(
                request={"subscription": path, "max_messages": max_messages}, timeout=timeout_s
            )
        except gexc.DeadlineExceeded:
            return []
        received = response.received_messages
        if received:
            self.subscriber.acknowledge(
                request={"subscription": path, "ack_ids": [m.ack_id for m in received]}
            )
        return [
            {
                "data": bytes(m.message.data),
                "attributes": dict(m.message.attributes),
                "ordering_key": m.message.ordering_key,
                "message_id": m.message.message_id,
                "delivery_attempt": m.delivery_attempt,
            }
            for m in received
        ]

    def close(self) -> None:
        """Release the clients."""
        self.publisher.stop()
        self.subscriber.close()

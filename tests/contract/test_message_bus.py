"""The message bus contract, run against every adapter (in-process, Pub/Sub emulator)."""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.envelope import Envelope, decode_body
from inboxflow.errors import RetryableError
from inboxflow.naming import dead_letter_topic_name, topic_name
from inboxflow.ports.bus import MessageBus

NODES = [("pipeline", "classify"), ("pipeline", "draft_reply")]


class BusHarness:
    """One adapter plus a way to see what it delivered, normalised to one shape.

    Received messages are ``{"topic", "data": bytes, "attributes", "ordering_key"}``;
    dead letters are ``{"topic", "data": bytes, "attributes"}``.
    """

    bus: MessageBus

    def received(self, count: int) -> list[dict[str, Any]]:
        raise NotImplementedError

    def dead_letters(self, count: int) -> list[dict[str, Any]]:
        raise NotImplementedError


class InProcessHarness(BusHarness):
    def __init__(self) -> None:
        self.bus = self.inprocess = InProcessBus()
        self.delivered: list[dict[str, Any]] = []
        self.inprocess.handler = self.delivered.append

    def received(self, count: int) -> list[dict[str, Any]]:
        self.inprocess.drain()
        messages = [
            {
                "topic": topic_name(m["attributes"]["graph"], m["attributes"]["node"]),
                "data": base64.b64decode(m["data"]),
                "attributes": m["attributes"],
                "ordering_key": m["orderingKey"],
            }
            for m in self.delivered
        ]
        self.delivered.clear()
        return messages

    def dead_letters(self, count: int) -> list[dict[str, Any]]:
        return [
            {
                "data": _raw(message),
                "attributes": {**message.get("attributes", {}), "reason": reason},
            }
            for message, reason in self.inprocess.dead_letters
        ]


def _raw(message: dict[str, Any]) -> bytes:
    try:
        return base64.b64decode(message["data"], validate=True)
    except Exception:
        return b""


class PubSubHarness(BusHarness):
    """Ordered pull subscriptions on every node topic, made before anything is published."""

    def __init__(self) -> None:
        from inboxflow.adapters.pubsub_bus import (
            SHARED_DEAD_LETTER_TOPIC,
            PubSubAdmin,
            PubSubBus,
        )

        self.admin = PubSubAdmin(os.environ["GOOGLE_CLOUD_PROJECT"])
        self.admin.ensure_topics(NODES)
        self.node_subscriptions = {}
        for graph, node in NODES:
            topic = topic_name(graph, node)
            self.admin.ensure_pull_subscription(f"{topic}-test", topic, ordered=True)
            self.node_subscriptions[f"{topic}-test"] = topic
        self.dead_letter_subscriptions = {
            f"{topic}-sub": topic
            for topic in [dead_letter_topic_name(g, n) for g, n in NODES]
            + [SHARED_DEAD_LETTER_TOPIC]
        }
        self.bus = PubSubBus(os.environ["GOOGLE_CLOUD_PROJECT"])

    def _pull(self, subscriptions: dict[str, str], count: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        deadline = time.monotonic() + 20
        while len(messages) < count and time.monotonic() < deadline:
            for subscription, topic in subscriptions.items():
                for message in self.admin.pull(subscription, timeout_s=2):
                    messages.append({**message, "topic": topic})
        return messages

    def received(self, count: int) -> list[dict[str, Any]]:
        return self._pull(self.node_subscriptions, count)

    def dead_letters(self, count: int) -> list[dict[str, Any]]:
        return self._pull(self.dead_letter_subscriptions, count)

    def close(self) -> None:
        self.bus.close()
        self.admin.close()


@pytest.fixture(params=["inprocess", pytest.param("pubsub", marks=pytest.mark.emulator)])
def harness(request: pytest.FixtureRequest) -> Iterator[BusHarness]:
    if request.param == "inprocess":
        yield InProcessHarness()
        return
    request.getfixturevalue("pubsub_env")
    pubsub = PubSubHarness()
    yield pubsub
    pubsub.close()


def _envelope(trace_id: str, step: int, node: str = "classify") -> Envelope:
    return Envelope(
        trace_id=trace_id, graph="pipeline", node=node, step=step, sent_at=1000.0 + step
    )


def test_published_envelopes_arrive_with_key_and_attributes(harness: BusHarness) -> None:
    envelopes = [
        _envelope("trace-a", 1),
        _envelope("trace-b", 1, node="draft_reply"),
        Envelope(
            trace_id="trace-c",
            graph="pipeline",
            node="classify",
            step=4,
            resume={"decision": "approve", "by": "rev@example.com", "edited": {"body": "Grüße"}},
        ),
    ]
    harness.bus.publish(envelopes)
    received = harness.received(len(envelopes))
    assert len(received) == len(envelopes)
    by_trace = {decode_body(m["data"]).trace_id: m for m in received}
    for envelope in envelopes:
        message = by_trace[envelope.trace_id]
        assert decode_body(message["data"]) == envelope
        assert message["ordering_key"] == envelope.trace_id
        assert message["attributes"] == envelope.attributes()
        assert message["topic"] == topic_name(envelope.graph, envelope.node)


def test_order_within_a_trace_is_preserved(harness: BusHarness) -> None:
    steps = range(1, 16)
    # Two traces interleaved, some in one call and some one call per envelope.
    harness.bus.publish([_envelope("trace-x", s) for s in steps[:5]])
    for step in steps[5:]:
        harness.bus.publish([_envelope("trace-x", step), _envelope("trace-y", step)])
    received = harness.received(len(steps) + len(steps[5:]))
    order: dict[str, list[int]] = {}
    for message in received:
        envelope = decode_body(message["data"])
        order.setdefault(envelope.trace_id, []).append(envelope.step)
    assert order == {"trace-x": list(steps), "trace-y": list(steps[5:])}


def test_publish_nothing_is_a_no_op(harness: BusHarness) -> None:
    harness.bus.publish([])
    harness.bus.publish([_envelope("trace-a", 1)])
    assert len(harness.received(1)) == 1


def test_dead_letter_lands_with_reason(harness: BusHarness) -> None:
    envelope = _envelope("trace-a", 2)
    good = envelope.to_pubsub_message("7")
    garbage = {"data": "not base64 at all!", "attributes": {"x": "1"}, "messageId": "8"}
    harness.bus.dead_letter(good, "step 2 rejected: no trace", "pipeline.classify")
    harness.bus.dead_letter(garbage, "Pub/Sub message data is not valid base64", None)
    letters = harness.dead_letters(2)
    assert len(letters) == 2
    by_reason = {letter["attributes"]["reason"]: letter for letter in letters}
    parked = by_reason["step 2 rejected: no trace"]
    assert decode_body(parked["data"]) == envelope
    assert parked["attributes"]["trace_id"] == "trace-a"
    assert "Pub/Sub message data is not valid base64" in by_reason
    if "topic" in parked:  # where Pub/Sub parks it
        assert parked["topic"] == dead_letter_topic_name("pipeline", "classify")
        assert by_reason["Pub/Sub message data is not valid base64"]["topic"] == (
            "inboxflow-dead-letter"
        )


# --- Pub/Sub specifics --------------------------------------------------------------------


@pytest.mark.emulator
def test_pubsub_failed_publish_is_retryable_and_key_resumes(pubsub_env: str) -> None:
    """A publish that fails pauses its ordering key; the bus resumes it so a retry works."""
    from inboxflow.adapters.pubsub_bus import PubSubAdmin, PubSubBus

    bus, admin = (
        PubSubBus(os.environ["GOOGLE_CLOUD_PROJECT"], timeout_s=10),
        PubSubAdmin(os.environ["GOOGLE_CLOUD_PROJECT"]),
    )
    try:
        with pytest.raises(RetryableError, match="did not accept"):
            bus.publish([_envelope("trace-r", 1)])  # the topic does not exist yet
        admin.ensure_topics(NODES)
        topic = topic_name("pipeline", "classify")
        subscription = admin.ensure_pull_subscription(f"{topic}-test", topic, ordered=True)
        bus.publish([_envelope("trace-r", 1)])  # same ordering key: must not stay paused
        messages = admin.pull(subscription.rsplit("/", 1)[-1], timeout_s=5)
        assert [decode_body(m["data"]).step for m in messages] == [1]
    finally:
        bus.close()
        admin.close()


@pytest.mark.emulator
def test_pubsub_bus_batches_briefly_and_a_hop_fan_out_arrives_in_order(pubsub_env: str) -> None:
    """The bus holds messages 1 ms for batching (not the client's 10 ms: a node waits for its
    publish), and one publish of several envelopes still arrives whole and in key order."""
    from inboxflow.adapters.pubsub_bus import PUBLISH_BATCH_LATENCY_S, PubSubAdmin, PubSubBus

    bus, admin = (
        PubSubBus(os.environ["GOOGLE_CLOUD_PROJECT"], timeout_s=10),
        PubSubAdmin(os.environ["GOOGLE_CLOUD_PROJECT"]),
    )
    try:
        assert bus.publisher.batch_settings.max_latency == PUBLISH_BATCH_LATENCY_S <= 0.001
        admin.ensure_topics(NODES)
        subscriptions = {}
        for graph, node in NODES:
            topic = topic_name(graph, node)
            admin.ensure_pull_subscription(f"{topic}-fan", topic, ordered=True)
            subscriptions[node] = f"{topic}-fan"
        bus.publish(
            [
                _envelope("trace-f", 2, "classify"),
                _envelope("trace-f", 3, "classify"),
                _envelope("trace-f", 2, "draft_reply"),
            ]
        )
        got: dict[str, list[int]] = {node: [] for node in subscriptions}
        deadline = time.monotonic() + 20
        while sum(map(len, got.values())) < 3 and time.monotonic() < deadline:
            for node, subscription in subscriptions.items():
                got[node] += [
                    decode_body(m["data"]).step for m in admin.pull(subscription, timeout_s=2)
                ]
        assert got == {"classify": [2, 3], "draft_reply": [2]}
    finally:
        bus.close()
        admin.close()


@pytest.mark.emulator
def test_pubsub_push_subscription_shape(pubsub_env: str) -> None:
    """``ensure_topics`` makes what Terraform makes: ordered push + dead-letter + retry policy."""
    from inboxflow.adapters.pubsub_bus import PubSubAdmin

    admin = PubSubAdmin(os.environ["GOOGLE_CLOUD_PROJECT"])
    try:
        admin.ensure_topics(
            NODES, {"pipeline.classify": "http://127.0.0.1:9/a"}, max_delivery_attempts=7
        )
        # Re-running with a new endpoint (a restarted `inboxflow dev`) repoints it.
        admin.ensure_topics(NODES, {"pipeline.classify": "http://127.0.0.1:9/b"})
        path = admin.subscription_path("inboxflow-pipeline-classify-push")
        sub = admin.subscriber.get_subscription(request={"subscription": path})
        assert sub.push_config.push_endpoint == "http://127.0.0.1:9/b"
        assert sub.enable_message_ordering is True
        assert sub.dead_letter_policy.dead_letter_topic.endswith("/inboxflow-pipeline-classify-dlq")
        assert sub.dead_letter_policy.max_delivery_attempts == 7
        assert sub.retry_policy.minimum_backoff.total_seconds() == 10
        assert sub.topic.endswith("/topics/inboxflow-pipeline-classify")
    finally:
        admin.close()


@pytest.mark.emulator
def test_pubsub_dead_letter_to_a_missing_topic_is_logged_not_raised(
    pubsub_env: str, caplog: pytest.LogCaptureFixture
) -> None:
    from inboxflow.adapters.pubsub_bus import PubSubBus

    bus = PubSubBus(os.environ["GOOGLE_CLOUD_PROJECT"], timeout_s=10)
    try:
        bus.dead_letter({"data": "e30="}, "payload is not an envelope", "pipeline.classify")
    finally:
        bus.close()
    assert "inboxflow-pipeline-classify-dlq does not exist" in caplog.text

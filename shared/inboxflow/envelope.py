"""The envelope that travels between node functions, and its Pub/Sub encoding.

An envelope is JSON in the Pub/Sub message body; the same scalar fields are
copied into the message attributes (so subscriptions can filter and humans can
read them in the console) and the message is published with
``ordering_key = trace_id``.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import BadEnvelope

MAX_ENVELOPE_BYTES = 64 * 1024
"""An envelope is a few hundred bytes; anything this big is not one of ours."""

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,62}$"
TRACE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
TRACEPARENT_PATTERN = r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$"


class Envelope(BaseModel):
    """Addresses one step of one trace: run ``node`` of ``graph`` at ``step``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trace_id: str = Field(pattern=TRACE_ID_PATTERN)
    graph: str = Field(pattern=NAME_PATTERN)
    node: str = Field(pattern=NAME_PATTERN)
    step: int = Field(ge=0, le=1_000_000)
    sent_at: float = Field(default_factory=time.time)
    resume: dict[str, Any] | None = None
    """Set when a paused trace resumes: the decision and who made it."""
    traceparent: str | None = Field(default=None, pattern=TRACEPARENT_PATTERN)
    """W3C trace context of the span that published this envelope (``inboxflow.telemetry``)."""

    @property
    def ordering_key(self) -> str:
        """Pub/Sub ordering key: every message of one trace is delivered in order."""
        return self.trace_id

    def attributes(self) -> dict[str, str]:
        """The scalar fields as Pub/Sub message attributes."""
        attributes = {
            "trace_id": self.trace_id,
            "graph": self.graph,
            "node": self.node,
            "step": str(self.step),
            "sent_at": f"{self.sent_at:.6f}",
        }
        if self.traceparent is not None:
            attributes["traceparent"] = self.traceparent
        return attributes

    def to_bytes(self) -> bytes:
        """The message body."""
        return self.model_dump_json(exclude_none=True).encode()

    def to_pubsub_message(self, message_id: str = "0") -> dict[str, Any]:
        """The message as a push subscription delivers it (``message`` of the push body)."""
        return {
            "data": base64.b64encode(self.to_bytes()).decode(),
            "attributes": self.attributes(),
            "messageId": message_id,
            "orderingKey": self.ordering_key,
        }


def decode_body(body: bytes) -> Envelope:
    """Parse a message body (already base64-decoded) into an envelope.

    Raises:
        BadEnvelope: with a message that says what is wrong with the body.
    """
    if len(body) > MAX_ENVELOPE_BYTES:
        raise BadEnvelope(
            f"payload of {len(body)} bytes exceeds the {MAX_ENVELOPE_BYTES} byte envelope limit"
        )
    parsed = json_object(body, "payload")
    try:
        return Envelope.model_validate(parsed)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'payload'}: {err['msg']}"
            for err in exc.errors()
        )
        raise BadEnvelope(f"payload is not an envelope: {problems}") from None


def json_object(
    body: bytes, what: str, error: Callable[[str], Exception] = BadEnvelope
) -> dict[str, Any]:
    """``body`` parsed as a JSON object (a message body: an envelope, a Gmail notification).

    Raises:
        ``error(reason)``: ``body`` is not JSON, or JSON but not an object (``what`` names it).
    """
    try:
        parsed = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise error(f"{what} is not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise error(f"{what} is JSON {type(parsed).__name__}, expected an object")
    return parsed


def pubsub_data(
    message: Any, max_bytes: int, error: Callable[[str], Exception] = BadEnvelope
) -> bytes:
    """The decoded ``data`` of a Pub/Sub message object (push body or CloudEvent ``message``).

    Raises:
        ``error(reason)``: not an object, no data, data over ``max_bytes``, or not base64.
    """
    if not isinstance(message, dict):
        raise error(f"Pub/Sub message is {type(message).__name__}, expected an object")
    data = message.get("data")
    if not data:
        raise error("Pub/Sub message has no data")
    if isinstance(data, bytes):
        return data
    if not isinstance(data, str):
        raise error(f"Pub/Sub message data is {type(data).__name__}, expected base64 text")
    if len(data) > max_bytes * 4 // 3 + 4:
        raise error(f"data of {len(data)} base64 characters exceeds the {max_bytes}-byte limit")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise error("Pub/Sub message data is not valid base64") from None


def decode_pubsub_message(message: Any) -> Envelope:
    """Decode the ``message`` object of a Pub/Sub push / CloudEvent into an envelope.

    Raises:
        BadEnvelope: the message has no data, data that is not base64, or a body
            that is not an envelope.
    """
    return decode_body(pubsub_data(message, MAX_ENVELOPE_BYTES))

"""Envelope encoding, and fuzzing of the decoder: it returns an envelope or raises BadEnvelope."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inboxflow.envelope import Envelope, decode_pubsub_message, json_object
from inboxflow.errors import BadEnvelope


def test_round_trip_through_a_pubsub_message_keeps_fields_and_ordering_key():
    envelope = Envelope(
        trace_id="abc123",
        graph="pipeline",
        node="classify",
        step=1,
        sent_at=12.5,
        resume={"decision": "approve"},
    )
    message = envelope.to_pubsub_message("42")
    assert message["orderingKey"] == "abc123"
    assert message["attributes"] == {
        "trace_id": "abc123",
        "graph": "pipeline",
        "node": "classify",
        "step": "1",
        "sent_at": "12.500000",
    }
    assert decode_pubsub_message(message) == envelope


def test_unknown_fields_are_refused():
    body = {"trace_id": "t", "graph": "g", "node": "n", "step": 1, "sent_at": 1.0, "admin": True}
    with pytest.raises(BadEnvelope, match="admin"):
        decode_pubsub_message({"data": base64.b64encode(json.dumps(body).encode()).decode()})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
envelope_like = st.fixed_dictionaries(
    {},
    optional={
        "trace_id": st.text(max_size=70) | st.integers(),
        "graph": st.sampled_from(["pipeline", "Pipeline", "", "x" * 70]) | st.integers(),
        "node": st.text(max_size=12),
        "step": st.integers(min_value=-5, max_value=2_000_000) | st.text(max_size=3),
        "sent_at": st.floats(allow_nan=False) | st.text(max_size=3),
        "resume": json_values,
    },
)


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=300).map(lambda b: {"data": base64.b64encode(b).decode()}),
        st.text(max_size=300).map(lambda t: {"data": t}),
        json_values.map(lambda v: {"data": base64.b64encode(json.dumps(v).encode()).decode()}),
        envelope_like.map(lambda v: {"data": base64.b64encode(json.dumps(v).encode()).decode()}),
        json_values,
    )
)
def test_decoder_returns_an_envelope_or_raises_bad_envelope(message):
    try:
        envelope = decode_pubsub_message(message)
    except BadEnvelope as exc:
        assert str(exc)
        return
    assert isinstance(envelope, Envelope)
    assert envelope.step >= 0
    assert decode_pubsub_message(envelope.to_pubsub_message()) == envelope


def test_json_object_parses_an_object_and_says_what_is_not_one_with_the_error_given():
    assert json_object(b'{"a": 1}', "payload") == {"a": 1}
    with pytest.raises(BadEnvelope, match="payload is not JSON"):
        json_object(b"{nope", "payload")
    with pytest.raises(BadEnvelope, match="payload is JSON list, expected an object"):
        json_object(b"[1]", "payload")
    with pytest.raises(KeyError, match="notification is not JSON"):
        json_object(b"\xff", "notification", KeyError)

"""The node function as functions-framework serves it, fed saved Pub/Sub CloudEvents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cloudevents.conversion import to_structured
from cloudevents.http import CloudEvent
from functions_framework import create_app

from inboxflow import entry
from inboxflow.dev.cli.local import sample_inbox
from inboxflow.mail import load_email_file
from inboxflow.workspace import seed_workspace

DATA = Path(__file__).parent.parent / "data"
ROOT = Path(__file__).parent.parent.parent
TRACE_ID = "fn-trace-0001"


def saved(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def make_client(tmp_path, monkeypatch, node: str | None = None):
    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("INBOXFLOW_STORE", "sqlite")
    monkeypatch.setenv("INBOXFLOW_BUS", "inprocess")
    if node:
        monkeypatch.setenv("INBOXFLOW_NODE", node)
    entry.reset()
    app = create_app("run_node", str(ROOT / "functions" / "main.py"), "cloudevent")
    return app.test_client()


@pytest.fixture
def started_trace():
    """Create the trace the saved envelopes address (first sample: a meeting request)."""

    def start(subject_contains: str = "") -> str:
        rt = entry.runtime()
        seed_workspace(rt.store, rt.clock.now())
        path = next(p for p in sample_inbox() if subject_contains in load_email_file(p).subject)
        rt.start(
            "pipeline", {"email": load_email_file(path).model_dump(mode="json")}, trace_id=TRACE_ID
        )
        rt.bus._heap.clear()  # the saved CloudEvent is the delivery of that first envelope
        return TRACE_ID

    yield start
    entry.reset()


def post_cloudevent(client, payload: dict):
    attributes = {k: v for k, v in payload.items() if k != "data"}
    headers, body = to_structured(CloudEvent(attributes, payload["data"]))
    return client.post("/", headers=headers, data=body)


def test_structured_cloudevent_runs_the_trace_to_its_end_in_process(
    tmp_path, monkeypatch, started_trace
):
    client = make_client(tmp_path, monkeypatch)
    started_trace()
    response = post_cloudevent(client, saved("cloudevent_pipeline_classify.json"))
    assert response.status_code == 200
    checkpoint = entry.runtime().store.get_trace(TRACE_ID)
    assert checkpoint.status in {"done", "waiting"}
    assert checkpoint.step > 5
    assert entry.runtime().store.step_logs(TRACE_ID)[1].step_name == "classify"


def test_raw_push_body_is_converted_and_a_node_function_runs_only_its_node(
    tmp_path, monkeypatch, started_trace
):
    client = make_client(tmp_path, monkeypatch, node="pipeline.classify")
    started_trace()
    response = client.post("/", json=saved("push_pipeline_classify.json"))
    assert response.status_code == 200
    checkpoint = entry.runtime().store.get_trace(TRACE_ID)
    assert checkpoint.step == 2  # classify ran; the next node belongs to another function
    assert checkpoint.node in {"retrieve"}
    assert [e["node"] for e in checkpoint.next] == ["retrieve"]
    redelivered = client.post("/", json=saved("push_pipeline_classify.json"))
    assert redelivered.status_code == 200
    assert entry.runtime().store.get_trace(TRACE_ID).step == 2


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("push_not_base64.json", "not valid base64"),
        ("push_not_json.json", "not JSON"),
        ("push_wrong_node.json", "this function runs pipeline.classify"),
    ],
)
def test_bad_payloads_are_acknowledged_and_recorded(
    tmp_path, monkeypatch, started_trace, name, reason
):
    client = make_client(tmp_path, monkeypatch, node="pipeline.classify")
    started_trace()
    response = client.post("/", json=saved(name))
    assert response.status_code == 200  # acknowledged: redelivering cannot fix it
    failures = entry.runtime().store.list("failures")
    assert len(failures) == 1 and reason in failures[0][1]["reason"]
    assert entry.runtime().store.get_trace(TRACE_ID).step == 1


def test_early_envelope_answers_500_so_pubsub_redelivers(tmp_path, monkeypatch, started_trace):
    client = make_client(tmp_path, monkeypatch, node="pipeline.retrieve")
    started_trace()
    payload = saved("push_pipeline_classify.json")
    from inboxflow.envelope import Envelope

    early = Envelope(trace_id=TRACE_ID, graph="pipeline", node="retrieve", step=2)
    payload["message"] = {
        **early.to_pubsub_message("66666666666"),
        "publishTime": "2026-11-22T10:00:00Z",
    }
    response = client.post("/", json=payload)
    assert response.status_code == 500
    assert entry.runtime().store.list("failures") == []


def test_where_the_function_dead_letters_a_message_failing_past_the_budget_goes_to_the_dlq(
    tmp_path, monkeypatch, started_trace
):
    """The emulator's topology: the function counts failed deliveries and dead-letters itself."""
    monkeypatch.setenv("INBOXFLOW_DEAD_LETTERING", "function")
    monkeypatch.setenv("INBOXFLOW_MAX_DELIVERY_ATTEMPTS", "3")
    monkeypatch.setenv("INBOXFLOW_RETRY_MINIMUM_BACKOFF_S", "0")
    client = make_client(tmp_path, monkeypatch, node="pipeline.retrieve")
    started_trace()
    from inboxflow.envelope import Envelope

    early = Envelope(trace_id=TRACE_ID, graph="pipeline", node="retrieve", step=7)
    payload = saved("push_pipeline_classify.json")
    payload["message"] = {**early.to_pubsub_message("77777777777"), "publishTime": "2026-11-22"}
    statuses = [client.post("/", json=payload).status_code for _ in range(3)]
    assert statuses == [500, 500, 200]  # the third failure dead-letters it, acknowledged
    bus = entry.runtime().bus
    assert len(bus.dead_letters) == 1
    message, reason = bus.dead_letters[0]
    assert message["messageId"] == "77777777777"
    assert "not acknowledged by pipeline.retrieve after 3 deliveries" in reason
    assert "EarlyArrival" in reason
    (key, count), *others = entry.runtime().store.list("delivery_attempts")
    assert others == [] and key == "pipeline.retrieve:77777777777" and count["attempts"] == 3
    assert entry.runtime().store.get_trace(TRACE_ID).step == 1  # the trace is left as it was


def test_where_pubsub_dead_letters_the_function_counts_nothing(
    tmp_path, monkeypatch, started_trace
):
    client = make_client(tmp_path, monkeypatch, node="pipeline.retrieve")
    started_trace()
    from inboxflow.envelope import Envelope

    early = Envelope(trace_id=TRACE_ID, graph="pipeline", node="retrieve", step=7)
    payload = saved("push_pipeline_classify.json")
    payload["message"] = {**early.to_pubsub_message("77777777777"), "publishTime": "2026-11-22"}
    assert [client.post("/", json=payload).status_code for _ in range(12)] == [500] * 12
    assert entry.runtime().bus.dead_letters == []
    assert entry.runtime().store.list("delivery_attempts") == []


def test_a_warm_up_builds_the_runtime_and_the_node_code_and_changes_nothing(tmp_path, monkeypatch):
    from inboxflow.entry.warmup import warmup_message
    from inboxflow.lazy import Lazy

    client = make_client(tmp_path, monkeypatch, node="pipeline.classify")
    nodes = entry.runtime().graphs["pipeline"].nodes
    classify, retrieve = nodes["classify"].run, nodes["retrieve"].run
    for lazy_node in (classify, retrieve):  # as in a new process (other tests loaded them)
        monkeypatch.setattr(lazy_node, "_function", Lazy(lazy_node._import))
    assert not classify.loaded
    payload = {"message": warmup_message(), "subscription": "projects/p/subscriptions/s"}
    assert client.post("/", json=payload).status_code == 200
    assert classify.loaded  # the node's module is imported: its first message will not pay
    assert not retrieve.loaded  # only the node this function serves
    store = entry.runtime().store
    assert store.list("traces") == [] and store.list("failures") == []

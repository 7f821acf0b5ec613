"""One email, one OpenTelemetry trace, across separate function processes on the emulators:
ingest (started by the Gmail double's watch notification), each pipeline node behind
its push subscription, and the approval function whose decision resumes the trace.
Every process appends its spans to one JSON-lines file (``INBOXFLOW_TRACING=jsonl:``)."""

from __future__ import annotations

import itertools
import json
import os
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from inboxflow.dev.cli.local import sample_inbox
from inboxflow.dev.devcloud import DevCloud
from inboxflow.dev.gmail import deliver
from inboxflow.graphs import get_graph
from inboxflow.ingest.claims import message_trace_id
from inboxflow.workspace import seed_workspace

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

API_KEY = "k" * 40


def _wait_status(store: Any, trace_id: str, wanted: str, cloud: DevCloud) -> Any:
    deadline = time.monotonic() + 120
    checkpoint = None
    while time.monotonic() < deadline:
        checkpoint = store.get_trace(trace_id)
        if checkpoint is not None and checkpoint.status == wanted:
            return checkpoint
        time.sleep(0.3)
    tails = {name: server.log_tail() for name, server in cloud.servers.items()}
    raise AssertionError(f"trace {trace_id}: {checkpoint and checkpoint.status}; {tails}")


def test_ingest_nodes_and_approval_make_one_trace(
    tmp_path: Path, firestore_emulator: Any, pubsub_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spans_file = tmp_path / "spans.jsonl"
    project = f"otel-{uuid.uuid4().hex[:10]}"
    env = {
        "GOOGLE_CLOUD_PROJECT": project,
        "INBOXFLOW_STORE": "firestore",
        "INBOXFLOW_BUS": "pubsub",
        "INBOXFLOW_TRACING": f"jsonl:{spans_file}",
        "INBOXFLOW_API_KEY": API_KEY,
        **firestore_emulator.env,
        **pubsub_emulator.env,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    store = FirestoreCheckpointStore.from_env(os.environ, project=project)
    seed_workspace(store, time.time())
    with DevCloud(project, dict(env), gmail=True, approve=True) as cloud:
        cloud.start([get_graph("pipeline")])
        assert cloud.gmail_double is not None and cloud.mailbox is not None
        complaint = next(p for p in sample_inbox() if p.name.startswith("04-"))
        gmail_id = deliver(cloud.gmail_double.url, cloud.mailbox, complaint.read_bytes())["id"]
        trace_id = message_trace_id(cloud.mailbox, gmail_id)
        waiting = _wait_status(store, trace_id, "waiting", cloud)
        assert waiting.pause is not None
        request = urllib.request.Request(
            f"{cloud.servers['approve'].url}/api/approvals/{waiting.pause['approval_id']}/decision",
            data=json.dumps(
                {"decision": "approve", "reviewer": waiting.pause["reviewers"][0]}
            ).encode(),
            headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200
        _wait_status(store, trace_id, "done", cloud)
        time.sleep(0.5)  # the last step's span ends just after its commit
    store.close()

    spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    ours = {s["trace_id"] for s in spans if s["attributes"].get("inboxflow.trace_id") == trace_id}
    assert len(ours) == 1, f"the email's spans are in {len(ours)} traces"
    in_trace = sorted((s for s in spans if s["trace_id"] in ours), key=lambda s: s["start_ns"])
    top = [s for s in in_trace if not s["name"].startswith(("llm ", "tool "))]
    assert [(s["service"], s["name"]) for s in top] == [
        ("ingest", "start pipeline"),
        ("pipeline.classify", "step pipeline.classify"),
        ("pipeline.retrieve", "step pipeline.retrieve"),
        ("pipeline.decide", "step pipeline.decide"),
        ("pipeline.execute_tools", "step pipeline.execute_tools"),
        ("pipeline.generate", "step pipeline.generate"),
        ("pipeline.review", "step pipeline.review"),
        ("approve", "resume pipeline.dispatch"),
        ("pipeline.dispatch", "step pipeline.dispatch"),
    ]
    assert top[0]["parent_id"] is None
    for parent, child in itertools.pairwise(top):
        assert child["parent_id"] == parent["span_id"], (parent["name"], child["name"])
    assert top[-1]["attributes"]["inboxflow.outcome"] == "done"
    assert top[0]["links"], "the start span links to the ingest notification's span"
    calls = [s for s in in_trace if s["name"].startswith(("llm ", "tool "))]
    parents = {s["span_id"]: s["service"] for s in top}
    assert calls and all(parents.get(c["parent_id"]) == c["service"] for c in calls)

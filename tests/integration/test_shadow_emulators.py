"""A shadow on the emulated cloud writes nothing outside its traces: the pipeline's nodes as
separate function processes on the Pub/Sub and Firestore emulators, mail from the Gmail
double through ingest, a shadow (``shadow:`` of inboxflow.yaml) on every email."""

from __future__ import annotations

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
from inboxflow.engine.shadow import HELD, shadow_trace_id
from inboxflow.graphs import get_graph
from inboxflow.ingest.claims import message_trace_id
from inboxflow.schema import COLLECTIONS
from inboxflow.workspace import seed_workspace

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

API_KEY = "k" * 40
SAMPLES = ("01-", "04-")
"""A pricing inquiry (drafted at once) and a complaint (a reviewer approves the draft)."""


def _wait(store: Any, trace_id: str, wanted: set[str], cloud: DevCloud) -> Any:
    deadline = time.monotonic() + 180
    checkpoint = None
    while time.monotonic() < deadline:
        checkpoint = store.get_trace(trace_id)
        if checkpoint is not None and checkpoint.status in wanted:
            return checkpoint
        time.sleep(0.3)
    tails = {name: server.log_tail() for name, server in cloud.servers.items()}
    raise AssertionError(f"trace {trace_id}: {checkpoint and checkpoint.status}; {tails}")


def _gmail(cloud: DevCloud, path: str) -> dict[str, Any]:
    assert cloud.gmail_double is not None and cloud.mailbox is not None
    url = f"{cloud.gmail_double.url}/gmail/v1/users/{cloud.mailbox}/{path}"
    with urllib.request.urlopen(url, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def _approve(cloud: DevCloud, pause: dict[str, Any]) -> None:
    request = urllib.request.Request(
        f"{cloud.servers['approve'].url}/api/approvals/{pause['approval_id']}/decision",
        data=json.dumps({"decision": "approve", "reviewer": pause["reviewers"][0]}).encode(),
        headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200


def test_a_shadow_on_the_emulated_cloud_writes_nothing_outside_its_traces(
    tmp_path: Path, firestore_emulator: Any, pubsub_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "inboxflow.yaml"
    config.write_text("shadow:\n  share: 1.0\n  model: offline\n")
    project = f"shadow-{uuid.uuid4().hex[:10]}"
    env = {
        "GOOGLE_CLOUD_PROJECT": project,
        "INBOXFLOW_STORE": "firestore",
        "INBOXFLOW_BUS": "pubsub",
        "INBOXFLOW_CONFIG": str(config),
        "INBOXFLOW_API_KEY": API_KEY,
        "INBOXFLOW_HOME": str(tmp_path / "home"),
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
        live_ids = []
        for prefix in SAMPLES:
            path = next(p for p in sample_inbox() if p.name.startswith(prefix))
            gmail_id = deliver(cloud.gmail_double.url, cloud.mailbox, path.read_bytes())["id"]
            live_ids.append(message_trace_id(cloud.mailbox, gmail_id))
        shadows = [_wait(store, shadow_trace_id(t), {"done"}, cloud) for t in live_ids]
        inquiry, complaint = (_wait(store, t, {"done", "waiting"}, cloud) for t in live_ids)
        assert inquiry.status == "done" and complaint.status == "waiting"
        _approve(cloud, complaint.pause)
        _wait(store, complaint.trace_id, {"done"}, cloud)
        time.sleep(1.0)  # a late duplicate delivery, if any, lands before we look
        drafts = _gmail(cloud, "drafts").get("drafts", [])
        sent = _gmail(cloud, "messages?labelIds=SENT").get("messages", [])

    shadow_ids = {shadow.trace_id for shadow in shadows}
    traces = [doc for _, doc in store.list("traces")]
    assert sorted(doc["trace_id"] for doc in traces if doc.get("shadow")) == sorted(shadow_ids)
    assert [shadow.shadow_of for shadow in shadows] == live_ids
    assert shadows[1].pause is not None and shadows[1].pause["held"] is True
    assert shadows[1].pause["kind"] == "approve_draft"

    effects = store.list("effects")
    mine = [(key, doc) for key, doc in effects if key.split(":")[0] in shadow_ids]
    assert {key.split(":")[2] for key, _ in mine} == {"dispatch"}
    assert all(doc["status"] == HELD and doc["would"]["to"] for _, doc in mine)
    performed = [key for key, doc in effects if doc.get("status") == "done"]
    assert all(key.split(":")[0] in live_ids for key in performed)

    # The Gmail double: the live traces' two drafts and the complaint's review mail, no more.
    dispatched = [key for key in performed if key.endswith(":dispatch")]
    notified = [key for key in performed if key.split(":")[2].startswith("notify-")]
    assert len(drafts) == len(dispatched) == 2
    assert len(sent) == len(notified) >= 1
    # Nothing else anywhere names a shadow: no approval, token, Cloud Task, outbox entry, claim.
    for collection in COLLECTIONS:
        if collection.parent is not None or collection.name in ("traces", "effects"):
            continue
        docs = store.list(collection.name)
        assert "-shadow" not in json.dumps(docs, default=str), collection.name
    store.close()


def test_held_writes_read_back_on_firestore(firestore_emulator: Any, monkeypatch: Any) -> None:
    """The held store's read-back (a query on the journal by trace and path) on Firestore."""
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
    from inboxflow.clock import FakeClock
    from inboxflow.engine.shadow import HeldDocuments, HeldJournal

    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    store = FirestoreCheckpointStore.from_env(os.environ, project=f"held-{uuid.uuid4().hex[:10]}")
    store.set("tickets/c1:T1", {"ticket_id": "T1", "opened_by": "L1:1:open_ticket"})
    journal = HeldJournal(store, FakeClock())
    intake = HeldDocuments(store, journal, "L1-shadow", 1, None, "L1")
    assert intake.get("tickets/c1:T1") is None and intake.list("tickets") == []
    assert intake.create("tickets/c1:T2", {"ticket_id": "T2", "status": "active"})
    intake.set("tickets/c1:T2", {"ticket_id": "T2", "status": "escalated"})
    later = HeldDocuments(store, journal, "L1-shadow", 3, None, "L1")
    assert later.get("tickets/c1:T2") == {"ticket_id": "T2", "status": "escalated"}
    assert store.get("tickets/c1:T2") is None
    assert [key for key, _ in store.list("tickets")] == ["c1:T1"]
    store.close()

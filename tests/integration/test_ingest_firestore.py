"""Ingestion with state in the Firestore emulator: concurrent runs, a burst of 200
messages, and the production push topology (Gmail double -> Pub/Sub emulator ->
ingest function process)."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from bench.ingest_burst import run_burst

from inboxflow.dev.devcloud import DevCloud
from inboxflow.dev.gmail import deliver
from inboxflow.ingest.claims import message_trace_id
from inboxflow.ingest.mailboxes import MailboxRegistry
from tests.unit.ingest.test_ingest import World, eml, notify_concurrently

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


@pytest.fixture
def firestore_store(firestore_emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    store = FirestoreCheckpointStore.from_env(os.environ, project=f"ingest-{uuid.uuid4().hex[:10]}")
    yield store
    store.close()


def test_two_runs_at_once_on_firestore_start_each_message_once(
    tmp_path: Path, firestore_store: Any
) -> None:
    world = World(tmp_path, store=firestore_store)
    world.register()
    ids = [world.deliver(n)[1] for n in range(20)]
    reports, redeliver = notify_concurrently(world, [ids[-1], ids[-1], ids[5], ids[-1]])
    reports += [world.notify(h) for h in redeliver]
    started = [t for r in reports for t in r.started]
    assert len(started) == len(set(started)) == 20
    assert len(world.traces()) == 20 and world.cursor() == ids[-1]


def test_a_burst_of_200_messages_on_firestore_gives_exactly_one_trace_each(
    firestore_store: Any,
) -> None:
    figures = run_burst(firestore_store, messages=200, workers=8)
    print(f"burst on the Firestore emulator: {figures}")
    assert figures["traces"] == figures["started"] == 200
    assert figures["missing"] == figures["extra"] == figures["started_twice"] == 0
    assert figures["notifications"] == 400
    assert figures["records_per_message"] == 1.0  # one listing met each message, none re-listed
    assert figures["calls"]["messages.get"] == 200


def test_mail_delivered_to_the_double_reaches_the_ingest_function_through_pubsub(
    tmp_path: Path, firestore_emulator: Any, pubsub_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"it-{uuid.uuid4().hex[:10]}"
    env = {
        "GOOGLE_CLOUD_PROJECT": project,
        "INBOXFLOW_STORE": "firestore",
        "INBOXFLOW_BUS": "pubsub",
        **firestore_emulator.env,
        **pubsub_emulator.env,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
    from inboxflow.adapters.pubsub_bus import PubSubAdmin
    from inboxflow.graphs import get_graph

    with DevCloud(project, dict(env), gmail=True) as cloud:
        cloud.start([])  # ingest only: the traces' first topic has no subscriber here
        admin = PubSubAdmin(project)
        admin.ensure_topics([("pipeline", node) for node in get_graph("pipeline").nodes])
        admin.close()
        assert cloud.gmail_double is not None and cloud.mailbox is not None
        store = FirestoreCheckpointStore.from_env(os.environ, project=project)
        count = 200
        began = time.monotonic()
        gmail_ids = [
            deliver(cloud.gmail_double.url, cloud.mailbox, eml(n))["id"] for n in range(count)
        ]
        expected = {message_trace_id(cloud.mailbox, g) for g in gmail_ids}
        deadline = time.monotonic() + 120
        traces: set[str] = set()
        claims: list = []
        # A claim turns "started" just after its trace is written: wait for both.
        while time.monotonic() < deadline:
            traces = {t for t, _ in store.list("traces")}
            claims = store.list("mail_claims")
            if traces >= expected and all(c["state"] == "started" for _, c in claims):
                break
            time.sleep(0.5)
        seconds = time.monotonic() - began
        print(f"push topology: {count} messages, {len(traces)} traces in {seconds:.1f}s")
        assert traces == expected, cloud.servers["ingest"].log_tail()
        assert len(claims) == count and {c["state"] for _, c in claims} == {"started"}
        mailbox = MailboxRegistry(store).get(cloud.mailbox)
        assert mailbox is not None and mailbox.history_id is not None
        store.close()

"""Dead-lettering on the Pub/Sub emulator, which has none: the push subscriptions carry no
dead-letter policy (the emulator crashes on one), the function counts the failed deliveries
of a message and moves it to its node's ``-dlq`` topic, and ``inboxflow dlq list --dev``
shows what the dead node left. The functions run as separate processes, as in ``dev``."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.pubsub_bus import PubSubAdmin, PubSubBus
from inboxflow.clock import SystemClock
from inboxflow.dev.cli import app
from inboxflow.dev.devcloud import DevCloud
from inboxflow.envelope import Envelope
from inboxflow.graphs import get_graph
from inboxflow.naming import subscription_name
from inboxflow.services import build_runtime
from inboxflow.settings import Settings
from inboxflow.start import StartContext
from tests.plugin.test_errand_plugin import EMAIL, PLUGIN

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


def test_a_message_a_node_never_takes_ends_in_its_dlq_and_dlq_list_dev_shows_it(
    tmp_path: Path, firestore_emulator: Any, pubsub_emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"dlq-{uuid.uuid4().hex[:10]}"
    env = {
        "GOOGLE_CLOUD_PROJECT": project,
        "INBOXFLOW_STORE": "firestore",
        "INBOXFLOW_BUS": "pubsub",
        "INBOXFLOW_GRAPHS": PLUGIN,
        "INBOXFLOW_MAX_DELIVERY_ATTEMPTS": "3",
        "INBOXFLOW_RETRY_MINIMUM_BACKOFF_S": "0",
        **firestore_emulator.env,
        **pubsub_emulator.env,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    graph = get_graph("errand", os.environ)
    with DevCloud(project, dict(env)) as cloud:
        cloud.start([graph])
        assert cloud.env["INBOXFLOW_DEAD_LETTERING"] == "function"
        admin = PubSubAdmin(project)
        try:  # the emulator's push subscription has no dead-letter policy
            pushed = admin.subscriber.get_subscription(
                subscription=admin.subscription_path(subscription_name("errand", "note"))
            )
        finally:
            admin.close()
        assert not pushed.dead_letter_policy.dead_letter_topic
        # A trace created at step 0 (its first envelope never published), then an envelope
        # for its step 2: "early" at every delivery, the node never takes it.
        clock = SystemClock()
        runtime = build_runtime(Settings.from_env(os.environ), clock, bus=InProcessBus(clock=clock))
        first = dict(graph.initial_state(EMAIL, StartContext(rule="errands")))
        trace_id = runtime.start("errand", first)
        bus = PubSubBus(project)
        try:
            bus.publish([Envelope(trace_id=trace_id, graph="errand", node="note", step=2)])
        finally:
            bus.close()
        home = tmp_path / "cloud"  # what `inboxflow dev` writes, so `--dev` finds this cloud
        home.mkdir()
        (home / "dev.json").write_text(json.dumps({"env": cloud.env, "pid": os.getpid()}))
        listing: dict[str, Any] = {}
        deadline = time.monotonic() + 60
        while not listing and time.monotonic() < deadline:
            time.sleep(1)
            shown = CliRunner().invoke(app, ["dlq", "list", "--dev", "--home", str(home), "--json"])
            assert shown.exit_code == 0, shown.output
            listing = next((json.loads(line) for line in shown.output.splitlines()), {})
        log = cloud.servers["errand.note"].log_tail(60)
        assert listing, log
        assert listing["subscription"] == "inboxflow-errand-note-dlq-sub"
        assert listing["trace_id"] == trace_id and listing["step"] == 2
        assert "not acknowledged by errand.note after 3 deliveries" in listing["reason"]
        assert "EarlyArrival" in listing["reason"]
        attempts = runtime.store.list("delivery_attempts")
        assert [doc["attempts"] for _, doc in attempts] == [3]
        # acknowledged once dead-lettered: no fourth delivery is counted
        time.sleep(3)
        assert [doc["attempts"] for _, doc in runtime.store.list("delivery_attempts")] == [3]
        table = CliRunner().invoke(app, ["dlq", "list", "--dev", "--home", str(home)])
        assert "1 dead-lettered message(s)" in table.output, table.output
        runtime.store.close()

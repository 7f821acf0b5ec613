"""The agent graph on the emulators: crash tests with the checkpoint store on Firestore, the
audit records read back from Firestore, and one run as separate function processes
(Pub/Sub emulator pushing each node's topic to its own functions-framework process)."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections import Counter

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.graphs.agent.tasks import OFFLINE_POLICIES
from inboxflow.schema import AGENT_RUNS, EMAIL_EVENTS, LLM_CALLS
from tests.harness.agent import build, reply_writes, sample, start
from tests.harness.emulated_cloud import graph_functions
from tests.harness.pipeline import StormBus

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


@pytest.fixture
def firestore_store(firestore_emulator, monkeypatch):
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    store = FirestoreCheckpointStore.from_env(os.environ, project=f"agent-{uuid.uuid4().hex[:10]}")
    yield store
    store.close()


def test_duplicates_and_a_crash_after_the_reply_on_firestore(
    tmp_path, firestore_store, monkeypatch
):
    asked: Counter[int] = Counter()
    policy = OFFLINE_POLICIES["pharmacy"]

    def counting(messages, tools):
        asked[sum(1 for m in messages if m.get("role") == "assistant") + 1] += 1
        return policy(messages, tools)

    monkeypatch.setitem(OFFLINE_POLICIES, "pharmacy", counting)
    bus = StormBus(clock=FakeClock(), copies=2, shuffle_seed=3)
    runtime = build(tmp_path, bus, store=firestore_store)
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where in ("after_effect:reply", "before_commit:agent_turn") and where not in crashes:
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    trace_id = start(runtime, sample("21"))
    bus.drain()
    assert bus.dead_letters == [] and sorted(crashes) == [
        "after_effect:reply",
        "before_commit:agent_turn",
    ]
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done", checkpoint.error
    # The crashed first turn was asked again; no other turn was.
    assert asked == Counter({1: 2, 2: 1, 3: 1, 4: 1})
    assert len(reply_writes(runtime.store, trace_id)) == 1
    assert len(runtime.store.list("reservations")) == 1
    steps = [entry.step_order for entry in runtime.store.step_logs(trace_id)]
    assert steps == list(range(10))


def test_audit_records_are_the_same_on_firestore(tmp_path, firestore_store):
    runtime = build(tmp_path, store=firestore_store)
    trace_id = start(runtime, sample("22"))
    runtime.bus.drain()
    run = runtime.store.get(f"{AGENT_RUNS.name}/{trace_id}")
    assert (run["status"], run["profile"], run["iterations"]) == ("completed", "pharmacy", 3)
    assert [e["tool"] for e in json.loads(run["tool_calls_log"])] == [
        "search_drugs",
        "create_draft",
    ]
    turns = runtime.store.list(LLM_CALLS.name, where=[("trace_id", "==", trace_id)])
    assert sorted(doc["iteration"] for _, doc in turns) == [1, 2, 3]
    assert {doc["call_type"] for _, doc in turns} == {"agent"}
    event = runtime.store.get(f"{EMAIL_EVENTS.name}/{trace_id}")
    assert (event["graph"], event["profile"], event["status"]) == ("agent", "pharmacy", "completed")
    from inboxflow.dev.cli.runs import agent_runs

    assert [r["run_id"] for r in agent_runs(runtime.store, "pharmacy", "completed")] == [trace_id]
    assert agent_runs(runtime.store, status="escalated") == []


def test_the_pharmacy_loop_as_separate_function_processes(
    firestore_emulator, pubsub_emulator, monkeypatch
):
    with graph_functions("agent", firestore_emulator, pubsub_emulator, monkeypatch) as (
        cloud,
        runtime,
    ):
        assert len(cloud.servers) == 4
        trace_id = start(runtime, sample("21"))
        deadline = time.monotonic() + 120
        checkpoint = runtime.store.get_trace(trace_id)
        while checkpoint.status == "running" and time.monotonic() < deadline:
            time.sleep(0.25)
            checkpoint = runtime.store.get_trace(trace_id)
        assert checkpoint.status == "done", (
            checkpoint.status,
            checkpoint.node,
            checkpoint.error,
        )
        assert checkpoint.state["iteration"] == 4
        (draft,) = reply_writes(runtime.store, trace_id)
        assert draft["to"] == "jana.novakova@seznam.cz"
        workers = {log.worker.split(":")[1] for log in runtime.store.step_logs(trace_id)[1:]}
        assert len(workers) == 4  # one process per node

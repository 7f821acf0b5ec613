"""The reliability scenarios again, with the checkpoint store on the Firestore emulator."""

from __future__ import annotations

import os
import uuid

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus, SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.graphs import get_graph
from inboxflow.ports.checkpoint import TERMINAL
from tests.harness.pipeline import StormBus, build, dispatch_effects, mailbox_writes, sample_emails

pytestmark = [pytest.mark.emulator, pytest.mark.slow]
SETTLED = TERMINAL | {"waiting"}


@pytest.fixture
def firestore_store(firestore_emulator, monkeypatch):
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    store = FirestoreCheckpointStore.from_env(os.environ, project=f"rel-{uuid.uuid4().hex[:10]}")
    yield store
    store.close()


def test_duplicate_storm_on_firestore(tmp_path, firestore_store):
    bus = StormBus(clock=FakeClock(), copies=3, shuffle_seed=7)
    runtime = build(tmp_path, bus, store=firestore_store)
    emails = [{**sample_emails()[i % 16], "message_id": f"<fs-storm-{i}@test>"} for i in range(50)]
    trace_ids = [runtime.start("pipeline", {"email": email}) for email in emails]
    bus.drain()
    assert bus.dead_letters == []
    dispatched = 0
    for trace_id in trace_ids:
        checkpoint = runtime.store.get_trace(trace_id)
        assert checkpoint.status in SETTLED and checkpoint.error is None
        logs = runtime.store.step_logs(trace_id)
        steps = [entry.step_order for entry in logs]
        assert steps == list(range(len(steps)))
        writes = mailbox_writes(runtime.store, trace_id)
        effects = dispatch_effects(runtime.store, trace_id)
        if "dispatch" in [entry.step_name for entry in logs]:
            dispatched += 1
            assert len(writes) == len(effects) == 1 and effects[0]["status"] == "done"
        else:
            assert writes == effects == []
    # The storm did deliver copies, and the work was done: a store that wrote
    # nothing would pass the checks above.
    assert dispatched > 0
    assert bus.deliveries >= 3 * sum(len(runtime.store.step_logs(t)) - 1 for t in trace_ids)


@pytest.mark.parametrize("point", ["after_commit", "before_commit", "after_effect"])
def test_crash_at_every_node_on_firestore(tmp_path, firestore_store, point):
    runtime = build(tmp_path, InProcessBus(clock=FakeClock()), store=firestore_store)
    inquiry = next(e for e in sample_emails() if e["subject"].startswith("Pricing"))
    nodes = list(get_graph("pipeline").nodes)
    targets = ["dispatch"] if point == "after_effect" else nodes
    crashes: list[str] = []
    armed = {
        f"{point}:{n}" if point != "after_effect" else "after_effect:dispatch" for n in targets
    }

    def fault(where: str) -> None:
        if where in armed:
            armed.discard(where)
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    trace_id = runtime.start("pipeline", {"email": inquiry})
    runtime.bus.drain()
    assert len(crashes) == len(targets)
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done", checkpoint.error
    assert len(mailbox_writes(runtime.store, trace_id)) == 1
    assert len(dispatch_effects(runtime.store, trace_id)) == 1

"""The support graph with its tickets on Firestore (emulator): lifecycle, duplicates, a crash."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.graphs.support.tickets import TicketStore
from tests.harness.emulated_cloud import graph_functions
from tests.harness.pipeline import StormBus
from tests.harness.support import build, run, sample

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


@pytest.fixture
def firestore_store(firestore_emulator, monkeypatch):
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    store = FirestoreCheckpointStore.from_env(
        os.environ, project=f"support-{uuid.uuid4().hex[:10]}"
    )
    yield store
    store.close()


def test_ticket_lifecycle_duplicates_and_a_crash_after_the_reply_on_firestore(
    tmp_path, firestore_store
):
    bus = StormBus(clock=FakeClock(), copies=2, shuffle_seed=7)
    runtime = build(tmp_path, bus=bus, store=firestore_store)
    crashed: list[str] = []

    def fault(where: str) -> None:
        if where == "after_effect:support_reply" and not crashed:
            crashed.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    answered = run(runtime, sample("01"))
    first = run(runtime, sample("05"))
    follow_up = run(runtime, sample("06"))
    escalated = run(runtime, sample("03"))

    assert crashed and answered["status"] == "done"
    workspace = runtime.ports.workspace
    assert len(workspace.drafts() + workspace.sent()) == 1
    assert follow_up["ticket"]["ticket_id"] == first["ticket"]["ticket_id"]
    tickets = TicketStore(firestore_store)
    assert [t.outcome for t in tickets.list("cus_free_sam", "completed")] == ["auto_respond"]
    [active] = tickets.list(status="active")
    assert active.customer_id == "cus_pro_brightpath" and len(active.traces) == 2
    assert [t.outcome for t in tickets.list("cus_ent_northwind")] == ["escalate_human"]
    assert escalated["act"]["status"] == "escalated"
    assert tickets.find(active.ticket_id) == active


def test_a_ticket_and_its_follow_up_as_separate_function_processes(
    firestore_emulator, pubsub_emulator, monkeypatch
):
    with graph_functions("support", firestore_emulator, pubsub_emulator, monkeypatch) as (
        cloud,
        runtime,
    ):
        assert len(cloud.servers) == 8
        states = []
        for prefix in ("05", "06"):
            message = sample(prefix)
            trace_id = runtime.start("support", {"email": message.model_dump(mode="json")})
            deadline = time.monotonic() + 120
            checkpoint = runtime.store.get_trace(trace_id)
            while checkpoint.status == "running" and time.monotonic() < deadline:
                time.sleep(0.25)
                checkpoint = runtime.store.get_trace(trace_id)
            assert checkpoint.status == "done", (checkpoint.node, checkpoint.error)
            states.append(checkpoint.state)
            workers = {log.worker.split(":")[1] for log in runtime.store.step_logs(trace_id)[1:]}
            assert len(workers) == 5  # intake, translator, supervisor, technical, act
        first, follow_up = states
        assert follow_up["ticket"]["how"] == "matched"
        assert follow_up["ticket"]["ticket_id"] == first["ticket"]["ticket_id"]
        [ticket] = TicketStore(runtime.store).list(status="active")
        assert len(ticket.traces) == 2 and ticket.working["queue"] == "technical"

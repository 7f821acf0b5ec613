"""The support graph with its tickets on Firestore (emulator): lifecycle, duplicates, a crash."""

from __future__ import annotations

import uuid

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.graphs.support.tickets import TicketStore
from tests.pipeline_harness import StormBus
from tests.support_harness import build, run, sample

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


@pytest.fixture
def firestore_store(firestore_emulator, monkeypatch):
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    store = FirestoreCheckpointStore(project=f"support-{uuid.uuid4().hex[:10]}")
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
    workspace = runtime.services["workspace"]
    assert len(workspace.drafts() + workspace.sent()) == 1
    assert follow_up["ticket"]["ticket_id"] == first["ticket"]["ticket_id"]
    tickets = TicketStore(firestore_store)
    assert [t.outcome for t in tickets.list("cus_free_sam", "completed")] == ["auto_respond"]
    [active] = tickets.list(status="active")
    assert active.customer_id == "cus_pro_brightpath" and len(active.traces) == 2
    assert [t.outcome for t in tickets.list("cus_ent_northwind")] == ["escalate_human"]
    assert escalated["act"]["status"] == "escalated"
    assert tickets.find(active.ticket_id) == active

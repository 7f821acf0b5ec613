"""The planner on the emulators: the issue's three scenarios and a full quote with the checkpoint
store (and the quotes) on Firestore under duplicate delivery, then as separate function processes
(Pub/Sub push per node, Firestore)."""

from __future__ import annotations

import json
import os
import time
import uuid

import pytest

from inboxflow.clock import FakeClock
from tests.harness.emulated_cloud import graph_functions
from tests.harness.pipeline import StormBus
from tests.harness.planner import (
    MAILBOX,
    VALID_VIN,
    approve_all,
    build,
    checkpoint,
    decide,
    pending,
    quote,
    reply_email,
    resume_with_reply,
    sample,
    sent,
    start,
    state,
)

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

ANSWER = (
    "Hi,\n\nMy driver's license is D4821937 (CA), licensed for 12 years, no accidents.\n"
    f"VIN: {VALID_VIN}\n\nJordan"
)


@pytest.fixture
def firestore_store(firestore_emulator, monkeypatch):
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    store = FirestoreCheckpointStore.from_env(
        os.environ, project=f"planner-{uuid.uuid4().hex[:10]}"
    )
    yield store
    store.close()


def test_the_three_scenarios_and_a_full_quote_on_firestore(tmp_path, firestore_store):
    bus = StormBus(clock=FakeClock(), copies=2, shuffle_seed=3)
    runtime = build(tmp_path, bus=bus, store=firestore_store)
    email = sample("41")
    trace_id = start(runtime, email)
    assert pending(runtime, trace_id).payload["tool"] == "ask_customer"  # (1) planned
    decide(runtime, trace_id, "approve")  # (1) approved: sent, waiting
    assert checkpoint(runtime, trace_id).pause["kind"] == "customer_reply"
    assert len(sent(runtime, trace_id)) == 1

    resume_with_reply(runtime, trace_id, reply_email(email, ANSWER, "g-1"))  # (3)
    assert state(runtime, trace_id)["customer_info"]["vin"] == VALID_VIN
    assert pending(runtime, trace_id).payload["tool"] == "add_vehicle"  # the next tool

    decide(runtime, trace_id, "reject", comment="VIN is incorrect")  # (2)
    replanned = pending(runtime, trace_id)
    assert replanned.payload["tool"] == "ask_customer"
    assert json.loads(replanned.payload["inputs"])["fields"] == ["vin"]

    decide(runtime, trace_id, "approve")
    second = reply_email(email, "Sorry, it is VIN 1HGCM82633A004352.", "g-2")
    resume_with_reply(runtime, trace_id, second)
    assert approve_all(runtime, trace_id) == ["add_vehicle", "get_rate", "prepare_final_summary"]
    done = checkpoint(runtime, trace_id)
    assert done.status == "done", done.error
    held = quote(runtime, done.state["quote_session"]["quote_id"])
    assert [v.vin for v in held.vehicles] == ["1HGCM82633A004352"]
    assert held.rate is not None
    assert len(sent(runtime, trace_id)) == 3  # two questions and the summary
    assert runtime.bus.dead_letters == []


def _wait(runtime, trace_id, until, timeout_s=120):
    deadline = time.monotonic() + timeout_s
    found = runtime.store.get_trace(trace_id)
    while (found is None or found.status not in until) and time.monotonic() < deadline:
        time.sleep(0.25)
        found = runtime.store.get_trace(trace_id)
    return found


def _paused_on(runtime, trace_id, kind, step_after):
    deadline = time.monotonic() + 120
    found = runtime.store.get_trace(trace_id)
    while time.monotonic() < deadline:
        if found is not None and found.status != "running" and found.step > step_after:
            break
        time.sleep(0.25)
        found = runtime.store.get_trace(trace_id)
    assert found is not None and found.status == "waiting", (found.status, found.error)
    assert found.pause["kind"] == kind, found.pause
    return found


def test_the_scenarios_as_separate_function_processes(
    firestore_emulator, pubsub_emulator, monkeypatch
):
    from inboxflow.routing import RouteDecision
    from inboxflow.start import start_email_trace

    with graph_functions("planner", firestore_emulator, pubsub_emulator, monkeypatch) as (
        cloud,
        runtime,
    ):
        assert len(cloud.servers) == 4
        service = runtime.ports.approvals
        email = sample("41")
        decision = RouteDecision("planner", None, "test", mailbox=email.mailbox)
        trace_id = start_email_trace(runtime, email, decision).trace_id
        found = _paused_on(runtime, trace_id, "agency_review", 0)
        review = service.get(found.pause["approval_id"])
        assert review.payload["tool"] == "ask_customer"  # (1)
        service.decisions.decide_as(review.approval_id, MAILBOX, "approve")
        found = _paused_on(runtime, trace_id, "customer_reply", found.step)
        assert found.state["awaiting_customer_reply"] is True

        reply = reply_email(email, ANSWER, "g-1")  # (3)
        runtime.resume(
            trace_id,
            {
                "decision": "reply",
                "payload": {"email": reply.model_dump(mode="json")},
                "reviewer": reply.sender.address,
            },
        )
        found = _paused_on(runtime, trace_id, "agency_review", found.step)
        assert found.state["customer_info"]["license_number"] == "D4821937"
        review = service.get(found.pause["approval_id"])
        assert review.payload["tool"] == "add_vehicle"

        service.decisions.decide_as(
            review.approval_id, MAILBOX, "reject", comment="VIN is incorrect"
        )  # (2)
        found = _paused_on(runtime, trace_id, "agency_review", found.step)
        review = service.get(found.pause["approval_id"])
        assert review.payload["tool"] == "ask_customer"
        assert json.loads(review.payload["inputs"])["fields"] == ["vin"]

        logs = runtime.store.step_logs(trace_id)[1:]
        assert {log.step_name for log in logs} == {
            "planner",
            "agency_review",
            "tools",
            "wait_customer",
        }
        assert len({log.worker.split(":")[1] for log in logs}) == 4  # one process per node

"""The assistant and its memory on the Firestore emulator: concurrent memory writers (several
clients, a barrier) lose nothing; a change is a conditional write, no transaction (the
emulator's lock manager livelocks read-write transactions on one document); learning end to end, under duplicate delivery and a crash
after the Gmail call, with the checkpoint store on Firestore."""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.memory import HISTORY_KEEP, PreferenceMemory, memory_path
from tests.harness.agent import build
from tests.harness.assistant import OWNER, decide, pending, sample, sent, start, state
from tests.harness.emulated_cloud import graph_functions
from tests.harness.pipeline import StormBus

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


@pytest.fixture
def project(firestore_emulator, monkeypatch):
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    return f"assistant-{uuid.uuid4().hex[:10]}"


def _store(project):
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    return FirestoreCheckpointStore.from_env(os.environ, project=project)


def test_concurrent_writers_on_separate_clients_lose_no_write(project):
    writers = 6
    stores = [_store(project) for _ in range(writers)]
    barrier = threading.Barrier(writers)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        def change(memory):
            return {**memory.profile, "notes": [*memory.profile["notes"], f"w{n}"]}, f"w{n}"

        try:
            barrier.wait()
            PreferenceMemory(stores[n], FakeClock()).update(
                OWNER, "triage_preferences", change, f"src-{n}"
            )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    preferences = PreferenceMemory(stores[0], FakeClock())
    memory = preferences.read(OWNER, "triage_preferences")
    assert memory.version == writers
    assert sorted(memory.profile["notes"]) == sorted(f"w{n}" for n in range(writers))
    history = preferences.history(OWNER, "triage_preferences")
    assert [h["version"] for h in history] == list(range(writers, 0, -1))
    for store in stores:
        store.close()


def test_a_change_runs_no_transaction_and_history_keeps_fifty(project):
    store = _store(project)
    transactions: list[str] = []
    run_transaction = store.run_transaction

    def counted(fn):
        transactions.append(fn.__name__)
        return run_transaction(fn)

    store.run_transaction = counted
    preferences = PreferenceMemory(store, FakeClock())
    for n in range(HISTORY_KEEP + 2):
        preferences.update(
            OWNER,
            "cal_preferences",
            lambda memory, n=n: ({**memory.profile, "notes": [str(n)]}, f"noted {n}"),
            f"s{n}",
        )
    assert transactions == ["delete", "delete"]  # only the history past fifty, write-only
    history = preferences.history(OWNER, "cal_preferences")
    assert [h["version"] for h in history] == list(range(HISTORY_KEEP + 2, 2, -1))
    assert len(store.list(f"{memory_path(OWNER, 'cal_preferences')}/history")) == HISTORY_KEEP
    store.close()


def test_learning_and_exactly_once_on_firestore(tmp_path, project):
    store = _store(project)
    runtime = build(tmp_path, StormBus(clock=FakeClock(), copies=2, shuffle_seed=7), store=store)
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where == "after_effect:write_email" and not crashes:
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    first = start(runtime, sample("34"))
    draft = pending(runtime, first).payload["content"]
    decide(runtime, first, "edit", edit={"content": draft.replace("Best regards", "Cheers,\nAlex")})
    assert crashes and state(runtime, first)["status"] == "completed"
    assert len(sent(runtime, first)) == 1

    second = start(runtime, sample("34", message_id="<again@test>", thread_id="thread-again"))
    assert pending(runtime, second).payload["content"].endswith("\n\nCheers,\nAlex")

    for n in (1, 2):
        trace_id = start(runtime, sample("32", message_id=f"<n{n}@test>", thread_id=f"t{n}"))
        decide(runtime, trace_id, "ignore")
    third = start(runtime, sample("32", message_id="<n3@test>", thread_id="t3"))
    assert state(runtime, third)["classification"] == "ignore"
    assert PreferenceMemory(store, runtime.clock).read(OWNER, "triage_preferences").version == 2
    assert runtime.bus.dead_letters == []
    store.close()


def _wait(runtime, trace_id, until, timeout_s=120):
    deadline = time.monotonic() + timeout_s
    checkpoint = runtime.store.get_trace(trace_id)
    while (checkpoint is None or checkpoint.status not in until) and time.monotonic() < deadline:
        time.sleep(0.25)
        checkpoint = runtime.store.get_trace(trace_id)
    return checkpoint


def test_the_assistant_as_separate_function_processes(
    firestore_emulator, pubsub_emulator, monkeypatch
):
    from inboxflow.routing import RouteDecision
    from inboxflow.start import start_email_trace

    with graph_functions("assistant", firestore_emulator, pubsub_emulator, monkeypatch) as (
        cloud,
        runtime,
    ):
        assert len(cloud.servers) == 5
        email = sample("34")
        decision = RouteDecision("assistant", None, "test", mailbox=email.mailbox)
        trace_id = start_email_trace(runtime, email, decision).trace_id
        checkpoint = _wait(runtime, trace_id, {"waiting", "done", "failed", "needs_review"})
        assert checkpoint.status == "waiting", (checkpoint.status, checkpoint.error)
        approval = next(a for a in runtime.ports.approvals.pending() if a.trace_id == trace_id)
        assert approval.kind == "tool_review"
        runtime.ports.approvals.decisions.decide_as(approval.approval_id, OWNER, "accept")
        checkpoint = _wait(runtime, trace_id, {"done", "failed", "needs_review"})
        assert checkpoint.status == "done", (
            checkpoint.status,
            checkpoint.node,
            checkpoint.error,
        )
        assert checkpoint.state["status"] == "completed"
        assert len(sent(runtime, trace_id)) == 1
        assert checkpoint.state["marked_read"]["found"] is True
        logs = runtime.store.step_logs(trace_id)[1:]
        nodes = {log.step_name for log in logs}
        assert nodes == {"triage_router", "llm_call", "tool_review", "mark_as_read"}
        assert len({log.worker.split(":")[1] for log in logs}) == 4  # one process per node

"""Reliability of the email pipeline on the embedded default: duplicate storms, crashes at
every node, bad input. Every email must reach exactly one outcome with exactly one effect."""

from __future__ import annotations

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.graphs import get_graph
from inboxflow.ports.checkpoint import TERMINAL
from tests.harness.pipeline import StormBus, build, dispatch_effects, mailbox_writes, sample_emails

SETTLED = TERMINAL | {"waiting"}


def _distinct(emails: list[dict], count: int) -> list[dict]:
    return [
        {**emails[i % len(emails)], "message_id": f"<storm-{i}@test.example>"} for i in range(count)
    ]


def test_duplicate_storm_50_emails_each_delivered_3_times_shuffled(tmp_path):
    bus = StormBus(clock=FakeClock(), copies=3, shuffle_seed=20261122)
    runtime = build(tmp_path, bus)
    emails = _distinct(sample_emails(), 50)
    trace_ids = [runtime.start("pipeline", {"email": email}) for email in emails]
    bus.drain()

    assert len(set(trace_ids)) == 50
    assert bus.dead_letters == []
    dispatched = 0
    for trace_id in trace_ids:
        checkpoint = runtime.store.get_trace(trace_id)
        assert checkpoint.status in SETTLED, (trace_id, checkpoint.status, checkpoint.error)
        assert checkpoint.error is None
        logs = runtime.store.step_logs(trace_id)
        steps = [entry.step_order for entry in logs]
        assert steps == list(range(len(steps))), "every step ran exactly once"
        effects = dispatch_effects(runtime.store, trace_id)
        writes = mailbox_writes(runtime.store, trace_id)
        if "dispatch" in [entry.step_name for entry in logs]:
            dispatched += 1
            assert len(effects) == 1 and effects[0]["status"] == "done"
            assert len(writes) == 1
        else:
            assert effects == [] and writes == []
    assert dispatched > 0
    assert bus.deliveries >= 3 * sum(len(runtime.store.step_logs(t)) - 1 for t in trace_ids)


def _nodes() -> list[str]:
    return list(get_graph("pipeline").nodes)


@pytest.mark.parametrize("point", ["after_commit", "before_commit"])
@pytest.mark.parametrize("node", _nodes())
def test_crash_around_the_commit_of_every_node_is_repaired(tmp_path, node, point):
    runtime = build(tmp_path)
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where == f"{point}:{node}" and len(crashes) < 3:
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    trace_ids = [runtime.start("pipeline", {"email": email}) for email in sample_emails()]
    runtime.bus.drain()
    assert crashes, f"no sample email reached {node}"
    dispatched = 0
    for trace_id in trace_ids:
        checkpoint = runtime.store.get_trace(trace_id)
        assert checkpoint.status in SETTLED and checkpoint.error is None, (
            trace_id,
            checkpoint.error,
        )
        writes = len(mailbox_writes(runtime.store, trace_id))
        assert writes == len(dispatch_effects(runtime.store, trace_id)) <= 1
        dispatched += writes
    assert dispatched > 0, "the crashes were repaired and the replies still went out"
    assert runtime.bus.dead_letters == []


def test_crash_inside_the_dispatch_effect_after_it_happened_sends_once(tmp_path):
    runtime = build(tmp_path)
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where == "after_effect:dispatch" and len(crashes) < 5:
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    trace_ids = [runtime.start("pipeline", {"email": email}) for email in sample_emails()]
    runtime.bus.drain()
    assert len(crashes) == 5
    reconciled = dispatched = 0
    for trace_id in trace_ids:
        effects = dispatch_effects(runtime.store, trace_id)
        assert len(mailbox_writes(runtime.store, trace_id)) == len(effects) <= 1
        reconciled += sum(1 for effect in effects if effect.get("reconciled"))
        dispatched += len(effects)
    assert reconciled == len(crashes)
    assert dispatched > len(crashes)


def test_approved_resume_dispatches_once_even_when_delivered_twice(tmp_path):
    runtime = build(tmp_path)
    trace_ids = [runtime.start("pipeline", {"email": email}) for email in sample_emails()]
    runtime.bus.drain()
    waiting = [t for t in trace_ids if runtime.store.get_trace(t).status == "waiting"]
    assert waiting
    trace_id = waiting[0]
    payload = dict(runtime.store.get_trace(trace_id).pause["payload"])
    runtime.resume(
        trace_id, {"decision": "approve", "payload": payload, "reviewer": "lead@example.com"}
    )
    runtime.resume(
        trace_id, {"decision": "approve", "payload": payload, "reviewer": "lead@example.com"}
    )
    runtime.bus.drain()
    assert runtime.store.get_trace(trace_id).status == "done"
    assert len(mailbox_writes(runtime.store, trace_id)) == 1

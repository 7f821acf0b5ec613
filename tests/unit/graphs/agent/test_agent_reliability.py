"""The agent loop under duplicate delivery and crashes, on the embedded default: every turn
and tool batch is a step, side effects happen once, a crash resumes at the turn it hit."""

from __future__ import annotations

from collections import Counter

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.graphs.agent.tasks import OFFLINE_POLICIES
from tests.harness.agent import SAMPLES, build, reply_writes, sample, start
from tests.harness.pipeline import StormBus

EXPECTED = {"21": ("done", 4), "22": ("done", 3), "23": ("needs_review", 1)}


def _reservations(runtime):
    return [doc for _, doc in runtime.store.list("reservations")]


def test_duplicate_storm_each_sample_delivered_three_times(tmp_path):
    runtime = build(tmp_path, bus=StormBus(clock=FakeClock(), copies=3, shuffle_seed=11))
    traces = {p.name[:2]: start(runtime, sample(p.name[:2])) for p in SAMPLES}
    runtime.bus.drain()
    for prefix, trace_id in traces.items():
        checkpoint = runtime.store.get_trace(trace_id)
        assert (checkpoint.status, checkpoint.state["iteration"]) == EXPECTED[prefix], (
            checkpoint.error
        )
        assert len(reply_writes(runtime.store, trace_id)) == (1 if prefix != "23" else 0)
        turns = [d for i, d in runtime.store.list("llm_calls") if i.startswith(trace_id)]
        assert len(turns) == EXPECTED[prefix][1]
    assert len(_reservations(runtime)) == 1
    assert len(runtime.ports.approvals.notifier.messages()) == 1
    assert runtime.bus.dead_letters == []
    assert runtime.bus.deliveries >= 2 * len(runtime.bus.seen)  # duplicates were delivered


@pytest.mark.parametrize("effect", ["reply", "reservation#0"])
def test_crash_after_a_tools_side_effect_does_it_once(tmp_path, effect):
    runtime = build(tmp_path)
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where == f"after_effect:{effect}" and not crashes:
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    trace_id = start(runtime, sample("21"))
    runtime.bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert crashes and checkpoint.status == "done", checkpoint.error
    assert len(reply_writes(runtime.store, trace_id)) == 1
    assert len(_reservations(runtime)) == 1
    (entry,) = [
        doc
        for doc_id, doc in runtime.store.list("effects")
        if doc_id.startswith(f"{trace_id}:") and doc_id.endswith(f":{effect}")
    ]
    # The reply is found again by its trace key; the reservation is re-made under the same id.
    assert entry["status"] == "done"
    assert (entry["reconciled"], entry["attempts"]) == (
        (True, 1) if effect == "reply" else (False, 2)
    )
    tool_steps = [
        log for log in runtime.store.step_logs(trace_id) if log.step_name == "agent_tools"
    ]
    assert len(tool_steps) == 3


@pytest.mark.parametrize(
    ("point", "node", "nth", "reruns"),
    [
        # The third turn dies before its commit: only that turn is asked again.
        ("before_commit", "agent_turn", 3, Counter({1: 1, 2: 1, 3: 2, 4: 1})),
        # It dies after its commit (the next envelope unsent): the redelivery is a duplicate.
        ("after_commit", "agent_turn", 3, Counter({1: 1, 2: 1, 3: 1, 4: 1})),
        # The second tool batch dies before its commit: no turn is asked again.
        ("before_commit", "agent_tools", 2, Counter({1: 1, 2: 1, 3: 1, 4: 1})),
    ],
)
def test_a_crash_mid_loop_resumes_at_the_turn_it_hit(
    tmp_path, monkeypatch, point, node, nth, reruns
):
    asked: Counter[int] = Counter()
    policy = OFFLINE_POLICIES["pharmacy"]

    def counting(messages, tools):
        asked[sum(1 for m in messages if m.get("role") == "assistant") + 1] += 1
        return policy(messages, tools)

    monkeypatch.setitem(OFFLINE_POLICIES, "pharmacy", counting)
    runtime = build(tmp_path)
    seen: list[str] = []
    crashed: list[str] = []

    def fault(where: str) -> None:
        if where == f"{point}:{node}":
            seen.append(where)
            if len(seen) == nth and not crashed:
                crashed.append(where)
                raise SimulatedCrash(where)

    runtime.fault = fault
    trace_id = start(runtime, sample("21"))
    runtime.bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert crashed and checkpoint.status == "done", checkpoint.error
    assert asked == reruns
    assert len(reply_writes(runtime.store, trace_id)) == 1 and len(_reservations(runtime)) == 1
    names = [log.step_name for log in runtime.store.step_logs(trace_id)]
    assert names.count("agent_turn") == 4 and names.count("agent_tools") == 3

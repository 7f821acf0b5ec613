"""The assistant under duplicate delivery and crashes: one email sent, one event, one
mark_as_read, one memory change per decision, whatever is delivered twice or dies mid-step."""

from __future__ import annotations

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.memory import PreferenceMemory
from tests.harness.agent import build
from tests.harness.assistant import OWNER, decide, pending, sample, sent, start, state
from tests.harness.pipeline import StormBus


def _effects(runtime, trace_id, name):
    return [
        doc
        for doc_id, doc in runtime.store.list("effects")
        if doc_id.startswith(f"{trace_id}:") and doc_id.endswith(f":{name}")
    ]


def _events(runtime):
    return [doc for _, doc in runtime.store.list("calendar_events")]


def test_duplicate_storm_sends_once_schedules_once_marks_read_once(tmp_path):
    runtime = build(tmp_path, bus=StormBus(clock=FakeClock(), copies=3, shuffle_seed=5))
    meeting = start(runtime, sample("33"))
    decide(runtime, meeting, "accept")  # the meeting
    decide(runtime, meeting, "edit", edit={"content": "Hi Dana,\n\nSee you then.\n\nCheers,\nAlex"})
    reply = start(runtime, sample("34"))
    decide(runtime, reply, "accept")
    for trace_id in (meeting, reply):
        checkpoint = runtime.store.get_trace(trace_id)
        assert (checkpoint.status, checkpoint.state["status"]) == ("done", "completed")
        assert len(sent(runtime, trace_id)) == 1
        assert len(_effects(runtime, trace_id, "mark_as_read")) == 1
    assert len(_events(runtime)) == 1
    assert (
        PreferenceMemory(runtime.store, runtime.clock).read(OWNER, "response_preferences").version
        == 1
    )
    assert runtime.ports.approvals.pending() == []
    assert runtime.bus.dead_letters == []
    assert runtime.bus.deliveries >= 2 * len(runtime.bus.seen)  # duplicates were delivered


@pytest.mark.parametrize(
    ("prefix", "effect", "decisions"),
    [
        ("34", "write_email", ["accept"]),
        ("33", "schedule_meeting", ["accept", "accept"]),
        ("34", "mark_as_read", ["accept"]),
    ],
)
def test_a_crash_after_the_gmail_call_does_it_once(tmp_path, prefix, effect, decisions):
    runtime = build(tmp_path)
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where == f"after_effect:{effect}" and not crashes:
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    trace_id = start(runtime, sample(prefix))
    for decision in decisions:
        decide(runtime, trace_id, decision)
    checkpoint = runtime.store.get_trace(trace_id)
    assert crashes and checkpoint.status == "done", checkpoint.error
    assert checkpoint.state["status"] == "completed"
    assert len(sent(runtime, trace_id)) == 1
    assert len(_events(runtime)) == (1 if prefix == "33" else 0)
    (entry,) = _effects(runtime, trace_id, effect)
    assert entry["status"] == "done"
    if effect == "write_email":  # found again by its trace key, not sent again
        assert (entry["reconciled"], entry["attempts"]) == (True, 1)


def test_a_crash_before_committing_a_learning_step_learns_once(tmp_path):
    runtime = build(tmp_path)
    crashes: list[str] = []
    seen: list[str] = []

    def fault(where: str) -> None:
        if where == "before_commit:tool_review":
            seen.append(where)
            if len(seen) == 2 and not crashes:  # the resumed step, after it learnt and sent
                crashes.append(where)
                raise SimulatedCrash(where)

    runtime.fault = fault
    trace_id = start(runtime, sample("34"))
    draft = pending(runtime, trace_id).payload["content"]
    decide(runtime, trace_id, "edit", edit={"content": draft.replace("Best regards", "Thanks!")})
    assert crashes and state(runtime, trace_id)["status"] == "completed"
    memory = PreferenceMemory(runtime.store, runtime.clock).read(OWNER, "response_preferences")
    assert (memory.version, memory.profile["sign_off"]) == (1, "Thanks!")
    # The re-run found the change its first run made, and records it.
    assert state(runtime, trace_id)["memory_updates"] == ["response_preferences@1"]
    assert len(sent(runtime, trace_id)) == 1

"""Guards (``inboxflow.engine.guards``): a node's proposed step is replaced before it is routed, the
replacement is route-checked like the node's own, and the trace says which guard fired and why."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.clock import FakeClock
from inboxflow.dev.cli.inspect import trace as trace_command
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.guards import Guard, Verdict
from inboxflow.engine.runtime import Runtime
from inboxflow.engine.step import END, Step
from tests.harness.runtimes import runtime_for

SENT: list[str] = []


class Mail(BaseModel):
    schema_version: int = 1
    text: str = ""
    model_says: str = "reply"
    decided: str = ""
    sent: bool = False


def decide(state: Mail, ctx: NodeContext) -> Step:
    """The 'model': routes wherever ``model_says`` tells it (an obedient, unsafe model)."""
    return Step(update={"decided": state.model_says}, goto=state.model_says)


def reply(state: Mail, ctx: NodeContext) -> Step:
    SENT.append(ctx.trace_id)
    return Step(update={"sent": True}, goto=END)


def person(state: Mail, ctx: NodeContext) -> Step:
    return Step(update={}, goto=END, status="done")


def complaints_reach_a_person(state: Mail, step: Step, ctx: NodeContext) -> Verdict | None:
    if "refund" in state.text.lower() and step.goto == "reply":
        return Verdict(
            Step(update={**step.update, "decided": "person"}, goto="person"),
            'complaint cue "refund": to a person, not the customer',
        )
    return None


def nowhere(state: Mail, step: Step, ctx: NodeContext) -> Verdict | None:
    return Verdict(Step(goto="dispatch"), "sends the trace where decide may not go")


def broken(state: Mail, step: Step, ctx: NodeContext) -> Verdict | None:
    raise KeyError("signals")


def _graph(*guards: Guard) -> Graph:
    return Graph.build(
        "guarded",
        "decide",
        Mail,
        [
            Node("decide", decide, routes=("reply", "person"), guards=guards),
            Node("reply", reply, routes=(END,)),
            Node("person", person, routes=(END,)),
        ],
    )


def _run(tmp_path: Path, graph: Graph, **state: Any) -> tuple[Runtime, str]:
    bus = InProcessBus(clock=FakeClock())
    runtime = runtime_for(tmp_path, graphs={"guarded": graph}, bus=bus)
    trace_id = runtime.start("guarded", state)
    bus.drain()
    return runtime, trace_id


def test_a_guard_replaces_the_models_step_and_the_step_log_says_why(tmp_path):
    graph = _graph(Guard("complaint_review", complaints_reach_a_person))
    runtime, trace_id = _run(tmp_path, graph, text="I want a REFUND now", model_says="reply")
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done"
    assert checkpoint.state["decided"] == "person"
    assert checkpoint.state["sent"] is False
    assert trace_id not in SENT
    logs = runtime.store.step_logs(trace_id)
    assert logs[1].step_name == "decide"
    assert logs[1].routed_to == "person"
    assert logs[1].guards == [
        {
            "guard": "complaint_review",
            "reason": 'complaint cue "refund": to a person, not the customer',
        }
    ]
    assert logs[2].guards == []


def test_a_guard_that_does_not_fire_leaves_the_step_and_records_nothing(tmp_path):
    graph = _graph(Guard("complaint_review", complaints_reach_a_person))
    runtime, trace_id = _run(tmp_path, graph, text="thanks, all good", model_says="reply")
    assert runtime.store.get_trace(trace_id).state["sent"] is True
    assert all(entry.guards == [] for entry in runtime.store.step_logs(trace_id))


def test_guards_run_in_order_each_on_the_step_the_last_one_left(tmp_path):
    seen: list[str] = []

    def second(state: Mail, step: Step, ctx: NodeContext) -> Verdict | None:
        seen.append(str(step.goto))
        return None

    graph = _graph(Guard("complaint_review", complaints_reach_a_person), Guard("second", second))
    _run(tmp_path, graph, text="refund please", model_says="reply")
    assert seen == ["person"]


def test_a_guard_cannot_route_where_the_node_may_not_go(tmp_path):
    runtime, trace_id = _run(tmp_path, _graph(Guard("nowhere", nowhere)), text="hi")
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "needs_review"
    assert "dispatch" in (checkpoint.error or "")
    assert checkpoint.state["decided"] == ""


def test_a_broken_guard_fails_the_step_instead_of_letting_the_proposal_through(tmp_path):
    runtime, trace_id = _run(tmp_path, _graph(Guard("broken", broken)), text="hi")
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "needs_review"
    assert "KeyError" in (checkpoint.error or "")
    assert checkpoint.state["sent"] is False


def test_a_guard_named_by_reference_is_imported_on_its_first_use(tmp_path):
    module = "tests.unit.test_guards"
    guard = Guard("complaint_review", f"{module}:complaints_reach_a_person")
    assert "complaints_reach_a_person" in repr(guard)
    runtime, trace_id = _run(tmp_path, _graph(guard), text="refund", model_says="reply")
    assert runtime.store.get_trace(trace_id).state["decided"] == "person"
    assert sys.modules[module].complaints_reach_a_person is complaints_reach_a_person


def test_a_guard_reference_that_does_not_resolve_fails_the_step_with_its_name(tmp_path):
    guard = Guard("missing", "tests.unit.test_guards:no_such_rule")
    runtime, trace_id = _run(tmp_path, _graph(guard), text="hi")
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "needs_review"
    assert "guard missing" in (checkpoint.error or "")


@pytest.mark.parametrize("name", ["", "two words", "a-b"])
def test_a_guard_name_is_a_plain_identifier(name):
    with pytest.raises(ValueError, match="guard name"):
        Guard(name, complaints_reach_a_person)


def test_inboxflow_trace_shows_which_guard_fired_and_why(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    graph = _graph(Guard("complaint_review", complaints_reach_a_person))
    _, trace_id = _run(tmp_path, graph, text="refund", model_says="reply")
    trace_command(trace_id, at=None, as_json=False, dev=False, home=tmp_path)
    shown = capsys.readouterr().out
    assert "guard complaint_review" in shown
    assert "complaint cue" in shown

"""A step's ``latency_ms`` is its node's own time: the function, its retries and its guards,
not the engine's validation, merge and size check around it (``bench/runtime.py`` splits a
hop's time by it into node code and the runtime's own)."""

from __future__ import annotations

import time

from pydantic import BaseModel, field_validator

from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.guards import Guard, Verdict
from inboxflow.engine.step import END, Step
from tests.harness.runtimes import runtime_for

SLOW_S = 0.05


class SlowState(BaseModel):
    """A state whose validation takes ``SLOW_S`` (the engine's work), twice a step."""

    schema_version: int = 1
    done: bool = False
    sleep_in_node: float = 0.0

    @field_validator("done")
    @classmethod
    def _slowly(cls, value: bool) -> bool:
        time.sleep(SLOW_S)
        return value


def work(state: SlowState, ctx: NodeContext) -> Step:
    time.sleep(state.sleep_in_node)
    return Step(update={"done": True}, goto=END)


def _guard(state: SlowState, step: Step, ctx: NodeContext) -> Verdict | None:
    time.sleep(state.sleep_in_node)
    return None


SLOW = Graph.build(
    "slow",
    "work",
    SlowState,
    [Node("work", work, routes=(END,), guards=(Guard("slow_guard", _guard),))],
)


def test_the_engines_validation_is_not_the_nodes_latency(tmp_path):
    runtime = runtime_for(tmp_path, graphs={"slow": SLOW})
    quick = runtime.start("slow", {})
    slow = runtime.start("slow", {"sleep_in_node": SLOW_S})
    runtime.bus.drain()
    (quick_step,) = runtime.store.step_logs(quick)[1:]
    (slow_step,) = runtime.store.step_logs(slow)[1:]
    assert runtime.store.get_trace(quick).status == "done"
    assert quick_step.latency_ms < SLOW_S * 1000  # two validations of SLOW_S ran around it
    assert slow_step.latency_ms >= 2 * SLOW_S * 1000  # the node and its guard are counted

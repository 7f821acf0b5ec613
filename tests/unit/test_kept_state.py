"""A step validates its state once: a handing-over commit keeps the model it dumped the new
state from, and the next step's node gets it when the checkpoint it leased holds that very
state (``Runtime._validated``); a checkpoint written since is validated from what is stored."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, field_validator

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.step import END, Step
from tests.harness.runtimes import runtime_for


class Counted(BaseModel):
    """A state that counts its validations (``note`` is validated whenever it is given)."""

    validations: ClassVar[int] = 0
    schema_version: int = 1
    note: str = ""
    seen: list[str] = []

    @field_validator("note")
    @classmethod
    def _count(cls, value: str) -> str:
        Counted.validations += 1
        return value


def _step(name: str, goto: str):
    def run(state: Counted, ctx: NodeContext) -> Step:
        return Step(update={"seen": [*state.seen, f"{name}:{state.note}"]}, goto=goto)

    return Node(name, run, routes=(goto,))


THREE = Graph.build("three", "a", Counted, [_step("a", "b"), _step("b", "c"), _step("c", END)])


def test_each_step_validates_its_state_once_on_the_handed_over_lease(tmp_path):
    runtime = runtime_for(tmp_path, graphs={"three": THREE})
    trace_id = runtime.start("three", {"note": "n"})
    Counted.validations = 0
    runtime.bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done" and checkpoint.state["seen"] == ["a:n", "b:n", "c:n"]
    # step a: its state (no commit kept it) and its merge; steps b and c: their merge only
    assert Counted.validations == 4


def test_a_state_written_since_the_commit_is_validated_from_the_store(tmp_path):
    runtime = runtime_for(tmp_path, graphs={"three": THREE})
    other = SqliteCheckpointStore(runtime.store.path)
    trace_id = runtime.start("three", {"note": "n"})
    runtime.bus.drain(limit=1)  # step a committed, b's lease handed over
    stored = other.get(f"traces/{trace_id}")
    assert stored is not None and stored["lease"] is not None
    other.set(f"traces/{trace_id}", {**stored, "state": {**stored["state"], "note": "repaired"}})
    runtime.bus.drain()
    assert runtime.store.get_trace(trace_id).state["seen"] == ["a:n", "b:repaired", "c:repaired"]

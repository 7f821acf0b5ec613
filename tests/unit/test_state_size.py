"""A step whose state would not fit in one checkpoint document ends at a human, with the reason."""

from __future__ import annotations

from pydantic import BaseModel

from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.runtime import MAX_STATE_BYTES
from inboxflow.engine.step import END, Step
from tests.harness.runtimes import runtime_for


class BlobState(BaseModel):
    schema_version: int = 1
    size: int = 0
    blob: str = ""


def grow(state: BlobState, ctx: NodeContext) -> Step:
    return Step(update={"blob": "é" * state.size}, goto=END)


BLOB = Graph.build("blob", "grow", BlobState, [Node("grow", grow, routes=(END,))])


def test_a_state_grown_past_a_checkpoint_by_a_node_is_refused_and_kept_as_it_was(tmp_path):
    runtime = runtime_for(tmp_path, graphs={"blob": BLOB})
    # "é" is two bytes of UTF-8: counted in bytes, this is over the limit, in characters not.
    too_big = runtime.start("blob", {"size": MAX_STATE_BYTES // 2 + 1024})
    fits = runtime.start("blob", {"size": MAX_STATE_BYTES // 2 - 1024})
    runtime.bus.drain()

    refused = runtime.store.get_trace(too_big)
    assert refused.status == "needs_review"
    assert refused.error is not None and refused.error.startswith("the state after grow is ")
    assert "a checkpoint holds at most 900 KB" in refused.error
    assert refused.state["blob"] == ""  # the state before the step
    assert runtime.store.get_trace(fits).status == "done"

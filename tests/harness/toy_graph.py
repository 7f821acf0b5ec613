"""A three-node graph for runtime tests: count -> act (one side effect) -> finish."""

from __future__ import annotations

import weakref
from typing import Any

from pydantic import BaseModel, Field

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.pause_kinds import APPROVE_REJECT
from inboxflow.engine.runtime import Runtime
from inboxflow.engine.step import END, Pause, Step
from inboxflow.errors import RetryableError
from inboxflow.ports.checkpoint import CheckpointStore
from tests.harness.runtimes import runtime_for


class ToyState(BaseModel):
    schema_version: int = 1
    text: str = Field(default="", frozen=True)
    mutate_input: bool = False
    count: int = Field(default=0, ge=0)
    flaky: int = 0
    pause: bool = False
    bad_route: bool = False
    receipt: dict[str, Any] | None = None
    decision: str | None = None


class Outbox:
    """A side-effect target that remembers every write and can be searched by key."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, key: str, text: str) -> dict[str, Any]:
        self.sent.append({"key": key, "text": text})
        return {"id": len(self.sent)}

    def find(self, key: str) -> dict[str, Any] | None:
        for index, item in enumerate(self.sent, start=1):
            if item["key"] == key:
                return {"id": index}
        return None


OUTBOXES: weakref.WeakKeyDictionary[CheckpointStore, Outbox] = weakref.WeakKeyDictionary()
"""The toy's side-effect target, by the store its runtime runs on (not a port of ``Ports``)."""
ATTEMPTS: weakref.WeakKeyDictionary[CheckpointStore, dict[str, int]] = weakref.WeakKeyDictionary()
"""How often ``count`` ran per trace, by store (the flaky upstream's memory)."""


def count(state: ToyState, ctx: NodeContext) -> Step:
    if state.flaky > 0:
        attempts = ATTEMPTS[ctx.store]
        attempts[ctx.trace_id] = attempts.get(ctx.trace_id, 0) + 1
        if attempts[ctx.trace_id] <= state.flaky:
            raise RetryableError("upstream 503")
    if state.mutate_input:
        return Step(update={"text": "changed"}, goto="act")
    if state.bad_route:
        return Step(update={"count": state.count + 1}, goto="nowhere")
    return Step(update={"count": state.count + 1}, goto="act")


def act(state: ToyState, ctx: NodeContext) -> Step:
    if state.pause:
        return Step(
            update={},
            goto=Pause(
                kind="approve",
                payload={"text": state.text},
                resume_node="finish",
                reviewers=("r@example.com",),
            ),
        )
    outbox = OUTBOXES[ctx.store]
    receipt = ctx.effect("send", lambda key: outbox.send(key, state.text), outbox.find)
    return Step(update={"receipt": receipt}, goto="finish")


def finish(state: ToyState, ctx: NodeContext) -> Step:
    if ctx.resume is not None:
        decision = ctx.resume["decision"]
        return Step(
            update={"decision": decision},
            goto=END,
            status="rejected" if decision == "reject" else "done",
        )
    return Step(update={"count": state.count + 1}, goto=END)


TOY = Graph.build(
    "toy",
    "count",
    ToyState,
    [
        Node("count", count, routes=("act",)),
        Node("act", act, routes=("finish",), timeout_s=10, pauses=True),
        Node("finish", finish, routes=(END,)),
    ],
    pause_kinds=[APPROVE_REJECT],
)


def make_runtime(
    tmp_path, clock: FakeClock | None = None, **bus_options: Any
) -> tuple[Runtime, InProcessBus, Outbox]:
    clock = clock or FakeClock()
    store = SqliteCheckpointStore(tmp_path / "toy.db")
    bus = InProcessBus(clock=clock, **bus_options)
    outbox = Outbox()
    runtime = runtime_for(
        tmp_path,
        clock=clock,
        graphs={"toy": TOY},
        store=store,
        bus=bus,
    )
    OUTBOXES[store] = outbox
    ATTEMPTS[store] = {}
    return runtime, bus, outbox

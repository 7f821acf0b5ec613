"""Stored step-log bytes of a conversation of N turns, appended vs rewritten (not a test).

An agent turn adds messages to the state's conversation (the model's turn, the tool
results). The step log keeps each step's change: the runtime stores a list that only
grew as its new items (``output_patch: {"append": [...]}``, issue 42), where a whole
list field in every step's delta would store the conversation again at each turn, so
bytes would grow with the square of the turns. This runs a conversation graph of one
node looping ``N`` turns (each adding an assistant message and a tool result of about
the agent's size) on the embedded default (SQLite, in-process bus) and prints the
step logs' stored bytes per trace, beside what whole-list deltas would have stored.

    .venv/bin/python bench/conversation_bytes.py [--turns 2 5 10]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.runtime import fold
from inboxflow.engine.step import END, Step
from inboxflow.services import build_runtime
from inboxflow.settings import Settings

REPLY = "Paralen 500 is in stock at Vinohrady (12 packs); I can reserve one for you. " * 3
RESULT = json.dumps({"results": [{"name": "Paralen 500", "stock": 12, "branch": "Vinohrady"}] * 4})


class Conversation(BaseModel):
    """A conversation that grows each turn."""

    schema_version: int = 1
    turns: int
    messages: list[dict[str, Any]]


def turn(state: Conversation, ctx: NodeContext) -> Step:
    """One turn: the model's message and a tool result."""
    added = [
        {"role": "assistant", "content": REPLY, "tool_calls": [{"id": "c1", "name": "search"}]},
        {"role": "tool", "tool_call_id": "c1", "name": "search", "content": RESULT},
    ]
    done = len(state.messages) // 2 + 1 >= state.turns
    return Step(update={"messages": [*state.messages, *added]}, goto=END if done else "turn")


GRAPH = Graph.build(
    "conversation", "turn", Conversation, [Node("turn", turn, routes=("turn", END))]
)


def measure(turns: int, home: Path) -> tuple[int, int]:
    """Stored step-log bytes of one trace of ``turns`` turns, and what whole lists would store."""
    settings = Settings(
        home=home,
        project="bench",
        store="sqlite",
        bus="inprocess",
        tasks="sqlite",
        workspace="store",
        environ=dict(os.environ),
    )
    runtime = build_runtime(settings, graphs={"conversation": GRAPH}, llm=OfflineModel())
    first = [{"role": "user", "content": "Do you have Paralen 500 at Vinohrady?"}]
    trace_id = runtime.start("conversation", {"turns": turns, "messages": first})
    runtime.bus.drain()  # type: ignore[attr-defined]
    logs = runtime.store.step_logs(trace_id)
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None
    state = checkpoint.state
    stored = rewritten = 0
    for log in logs:
        changes = {"delta": log.output_delta, "patch": log.output_patch}
        stored += _size(changes)
        if "messages" in log.output_patch:  # a whole-list delta: every message so far again
            whole = fold(logs, upto=log.step_order, checkpoint_state=state)["messages"]
            rewritten += _size({"delta": {**log.output_delta, "messages": whole}, "patch": {}})
        else:
            rewritten += _size(changes)
    return stored, rewritten


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")))


def main(argv: list[str]) -> int:
    """Print one row per turn count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[2, 5, 10])
    args = parser.parse_args(argv)
    print(f"{'turns':>5} {'stored KB':>10} {'KB per turn':>12} {'whole lists KB':>15}")
    for turns in args.turns:
        with tempfile.TemporaryDirectory() as home:
            stored, rewritten = measure(turns, Path(home))
        print(
            f"{turns:>5} {stored / 1024:>10.1f} {stored / 1024 / turns:>12.2f} {rewritten / 1024:>15.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The anchor of bench/runtime.py, measured on this machine (not a test).

LangGraph's StateGraph with its SqliteSaver on the same 7-node pipeline shape
(classify -> retrieve -> decide -> execute_tools -> generate -> review ->
dispatch), each node adding a state update of the size ours adds, for emails
with 2 KB bodies. Prints ms per step and bytes stored per email.

LangGraph is not a dependency of inboxflow; run it from a separate venv:

    python3 -m venv /tmp/lg && /tmp/lg/bin/pip install langgraph langgraph-checkpoint-sqlite
    /tmp/lg/bin/python bench/langgraph_anchor.py [--emails 300]
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

try:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
except ImportError:  # pragma: no cover - optional
    sys.exit(__doc__)


class PipelineState(TypedDict, total=False):
    email: dict[str, Any]
    classification: dict[str, Any]
    context: dict[str, Any]
    tool_plan: list[dict[str, Any]]
    tool_results: list[dict[str, Any]]
    draft: dict[str, Any]
    review: dict[str, Any]
    dispatch: dict[str, Any]


def classify(state: PipelineState) -> PipelineState:
    return {
        "classification": {
            "category": "inquiry",
            "confidence": 0.91,
            "evidence": ["question mark", "pricing", "known sender"],
        }
    }


def retrieve(state: PipelineState) -> PipelineState:
    return {
        "context": {
            "contact": {
                "name": "Dana Whitfield",
                "company": "Northwind",
                "tier": "gold",
                "email": "dana@northwind.example",
            },
            "similar": [{"subject": f"Re: pricing {i}", "snippet": "x" * 80} for i in range(3)],
        }
    }


def decide(state: PipelineState) -> PipelineState:
    return {
        "tool_plan": [
            {"name": "get_contact", "arguments": {"email": "dana@northwind.example"}},
            {"name": "create_draft", "arguments": {}},
        ]
    }


def execute_tools(state: PipelineState) -> PipelineState:
    return {
        "tool_results": [
            {"name": "get_contact", "result": {"name": "Dana Whitfield", "tier": "gold"}}
        ]
    }


def generate(state: PipelineState) -> PipelineState:
    return {
        "draft": {
            "subject": "Re: " + state["email"]["subject"],
            "tone": "professional",
            "body": "Dear Dana,\n\n" + "Thank you for your question about our plans. " * 15,
        }
    }


def review(state: PipelineState) -> PipelineState:
    return {
        "review": {"auto_dispatch": True, "reasons": ["confidence 0.91 >= 0.8", "not a complaint"]}
    }


def dispatch(state: PipelineState) -> PipelineState:
    return {"dispatch": {"action": "create_draft", "draft_id": "d-1", "trace_key": "t:7:dispatch"}}


def build(saver: SqliteSaver) -> Any:
    graph = StateGraph(PipelineState)
    nodes = [classify, retrieve, decide, execute_tools, generate, review, dispatch]
    for fn in nodes:
        graph.add_node(fn.__name__, fn)
    graph.add_edge(START, "classify")
    for a, b in itertools.pairwise(nodes):
        graph.add_edge(a.__name__, b.__name__)
    graph.add_edge("dispatch", END)
    return graph.compile(checkpointer=saver)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--emails", type=int, default=300)
    args = parser.parse_args()
    body = ("Hello team, I would like to understand the pricing of the enterprise plan. " * 40)[
        :2048
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "anchor.db"
        conn = sqlite3.connect(path, check_same_thread=False)
        app = build(SqliteSaver(conn))
        started = time.perf_counter()
        for index in range(args.emails):
            email = {
                "message_id": f"<a-{index}@x>",
                "subject": "Pricing question",
                "sender": "dana@northwind.example",
                "body_text": body,
            }
            app.invoke({"email": email}, {"configurable": {"thread_id": f"t-{index}"}})
        elapsed = time.perf_counter() - started
        conn.commit()
        stored = sum(
            conn.execute(
                f"SELECT COALESCE(SUM(LENGTH(checkpoint)+LENGTH(metadata)),0) FROM {t}"
            ).fetchone()[0]
            for t in ("checkpoints",)
        )
        stored += conn.execute("SELECT COALESCE(SUM(LENGTH(value)),0) FROM writes").fetchone()[0]
        conn.close()
        file_bytes = sum(p.stat().st_size for p in Path(folder).glob("anchor.db*"))
    steps = args.emails * 7
    print(f"langgraph anchor  {args.emails} emails, {steps} steps in {elapsed:.2f} s")
    print(f"mean per step     {elapsed * 1000 / steps:.3f} ms")
    print(
        f"stored per email  {stored / args.emails / 1024:.2f} KB of checkpoints+writes; "
        f"SQLite file {file_bytes / args.emails / 1024:.2f} KB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

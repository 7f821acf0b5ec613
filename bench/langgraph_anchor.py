"""The anchor of bench/runtime.py, measured on this machine (not a test).

LangGraph's StateGraph with its SqliteSaver running the same 7-node pipeline
(classify -> retrieve -> decide -> execute_tools -> generate -> review ->
dispatch) on the same emails (2 KB bodies). Prints ms per step and bytes
stored per email.

LangGraph is not a dependency of inboxflow; run it from a separate venv:

    python3 -m venv /tmp/lg && /tmp/lg/bin/pip install langgraph langgraph-checkpoint-sqlite
    PYTHONPATH=shared /tmp/lg/bin/python bench/langgraph_anchor.py [--emails 300] [--warmup 10]

(the venv also needs inboxflow's own dependencies: ``/tmp/lg/bin/pip install -e .``).
``--warmup`` emails run first and are not counted, as in bench/runtime.py; it
prints wall and process CPU time per step.

It runs the pipeline's own node functions (the offline model, the embedded
tools) so that both runtimes do the same work per step; only the runtime differs.
"""

from __future__ import annotations

import argparse
import os
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


class AnchorState(TypedDict, total=False):
    state: dict[str, Any]
    goto: str


def inboxflow_nodes() -> tuple[Any, Any]:
    """The pipeline's own node functions and a context for them (needs PYTHONPATH=shared)."""
    from inboxflow.adapters.offline_llm import OfflineModel
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
    from inboxflow.adapters.store_workspace import StoreWorkspace
    from inboxflow.clock import SystemClock
    from inboxflow.engine.context import NodeContext
    from inboxflow.engine.effects import EffectJournal
    from inboxflow.engine.tools import ToolRegistry
    from inboxflow.graphs import get_graph
    from inboxflow.graphs.pipeline.tools import pipeline_tools
    from inboxflow.services import build_ports
    from inboxflow.settings import Settings
    from inboxflow.workspace import seed_workspace

    graph = get_graph("pipeline")
    store = SqliteCheckpointStore(":memory:")
    clock = SystemClock()
    seed_workspace(store, clock.now())
    tools = ToolRegistry(pipeline_tools())
    settings = Settings(
        home=Path(tempfile.mkdtemp()),
        project="bench",
        store="sqlite",
        bus="inprocess",
        tasks="sqlite",
        environ=dict(os.environ),
        workspace="store",
    )
    ports = build_ports(
        settings, clock=clock, store=store, llm=OfflineModel(), workspace=StoreWorkspace(store)
    )

    def context(node: str, step: int) -> Any:
        return NodeContext(
            trace_id="anchor",
            graph="pipeline",
            node=node,
            step=step,
            clock=clock,
            store=store,
            tools=tools,
            journal=EffectJournal(store, clock),
            ports=ports,
        )

    return graph, context


def build(saver: SqliteSaver) -> Any:
    """The pipeline graph with LangGraph as its runtime: same nodes, same routes."""
    graph, context = inboxflow_nodes()
    model = graph.state_model
    workflow = StateGraph(AnchorState)
    for step, (name, node) in enumerate(graph.nodes.items(), start=1):

        def run(
            anchor: AnchorState, node: Any = node, name: str = name, step: int = step
        ) -> AnchorState:
            result = node.run(model.model_validate(anchor["state"]), context(name, step))
            merged = {
                **anchor["state"],
                **{
                    k: v.model_dump(mode="json")
                    if hasattr(v, "model_dump")
                    else (
                        [i.model_dump(mode="json") if hasattr(i, "model_dump") else i for i in v]
                        if isinstance(v, list)
                        else v
                    )
                    for k, v in result.update.items()
                },
            }
            goto = (
                result.goto if isinstance(result.goto, str) else END
            )  # a pause ends the anchor's run
            return {"state": model.model_validate(merged).model_dump(mode="json"), "goto": goto}

        workflow.add_node(name, run)
        targets = {target: (END if target == "__end__" else target) for target in node.routes}
        targets[END] = END
        workflow.add_conditional_edges(name, lambda anchor: anchor["goto"], targets)
    workflow.add_edge(START, graph.entry)
    return workflow.compile(checkpointer=saver)


def sample_emails(count: int, body_bytes: int) -> list[dict[str, Any]]:
    """The same emails bench/runtime.py pushes."""
    sys.path.insert(0, str(Path(__file__).parent))
    from runtime import make_emails  # bench/runtime.py

    return make_emails(count, body_bytes)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--emails", type=int, default=300)
    parser.add_argument("--body-bytes", type=int, default=2048)
    parser.add_argument("--warmup", type=int, default=10, help="emails run first, not counted")
    args = parser.parse_args()
    emails = sample_emails(args.warmup + args.emails, args.body_bytes)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "anchor.db"
        conn = sqlite3.connect(path, check_same_thread=False)
        app = build(SqliteSaver(conn))
        for index, email in enumerate(emails[: args.warmup]):
            app.invoke({"state": {"email": email}}, {"configurable": {"thread_id": f"w-{index}"}})
        emails = emails[args.warmup :]
        steps = 0
        started, cpu_started = time.perf_counter(), time.process_time()
        for index, email in enumerate(emails):
            config = {"configurable": {"thread_id": f"t-{index}"}}
            app.invoke({"state": {"email": email}}, config)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        for index in range(len(emails)):
            history = list(app.get_state_history({"configurable": {"thread_id": f"t-{index}"}}))
            steps += max(0, len(history) - 2)  # minus the input and START checkpoints
        conn.commit()
        stored = conn.execute(
            "SELECT COALESCE(SUM(LENGTH(checkpoint)+LENGTH(metadata)),0) FROM checkpoints "
            "WHERE thread_id LIKE 't-%'"
        ).fetchone()[0]
        stored += conn.execute(
            "SELECT COALESCE(SUM(LENGTH(value)),0) FROM writes WHERE thread_id LIKE 't-%'"
        ).fetchone()[0]
        conn.close()
        file_bytes = sum(p.stat().st_size for p in Path(folder).glob("anchor.db*"))
    print(
        f"langgraph anchor  {args.emails} emails, {steps} node steps in {elapsed:.2f} s "
        "(the pipeline's own node functions, LangGraph StateGraph + SqliteSaver as the runtime)"
    )
    print(f"mean per step     {elapsed * 1000 / steps:.3f} ms")
    print(f"cpu per step      {cpu * 1000 / steps:.3f} ms (process CPU time; wall above)")
    print(
        f"stored per email  {stored / args.emails / 1024:.2f} KB of checkpoints+writes; "
        f"SQLite file {file_bytes / args.emails / 1024:.2f} KB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

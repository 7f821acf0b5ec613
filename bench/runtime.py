"""Benchmark of the graph runtime on the embedded default (not a test).

Pushes N emails (default 300) through the email pipeline with the offline model
and prints emails/s, mean ms per hop and stored bytes per email.

    .venv/bin/python bench/runtime.py [--emails 300] [--body-bytes 2048] [--warmup 10] [--gate]

``--profile`` prints cProfile's 30 heaviest functions (cumulative) of the timed emails alone,
without the imports and warm-up a whole-process profile mixes in.

``--gate`` (CI, ``.ci/run``) exits 1 when the node code's mean time per hop is more than
``GATE_RATIO`` times the runtime's own time per hop, both measured in this run: a ratio of two
figures of one process, which a loaded or slower machine moves together, unlike a time limit.

Node code per hop is the step log's ``latency_ms``: the node's function, its retries and its
guards. The rest of a hop's time is the runtime's own: the lease, validating the state and
merging the node's update into it, the size check, the commit, the envelopes, and the approval
service's pause notifications (printed apart).

``--noop`` runs the runtime alone: a graph of six nodes that only count (``NOOP``) on a
state of about 6 KB (a 3 KB frozen input, like an email), so that node code is about nothing
and a hop's time is the runtime's own, without the pipeline's node code to blur it.

``--warmup`` emails run first and are not counted: the figures are per hop in a
warm process (first-use imports and caches are cold start, measured by
bench/cold_start.py). Besides wall time it prints the process's CPU time per
hop, which a loaded machine disturbs less; bench/langgraph_anchor.py prints both
the same way.

The anchor: LangGraph's StateGraph with SqliteSaver on the same 7-node pipeline
and node functions (bench/langgraph_anchor.py), on this machine on 2026-11-22
(load about 2, warm, 300 emails): about 4.0 ms per step and 80.8 KB stored per
email for a 2 KB email (issue 2 had measured 3 ms and 51 KB with older node
code). Targets: at most half the time per hop, a quarter of the bytes. The
constants below only label the output: compare with the anchor in alternating
runs on the same machine.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.cli.local import sample_inbox
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.step import END, Step
from inboxflow.mail import load_email_file
from inboxflow.services import build_runtime
from inboxflow.settings import Settings
from inboxflow.workspace import seed_workspace

ANCHOR_MS_PER_STEP = 4.0
ANCHOR_BYTES_PER_EMAIL = 80_800
GATE_RATIO = 2.0
"""The most node code per hop may cost, in runtime per hop (issue 42: the node code had become
15 times slower, 13.4 ms against 0.99 ms, and nothing failed)."""


class NoopState(BaseModel):
    """The state of ``NOOP``: a frozen input and what its nodes add."""

    schema_version: int = 1
    text: str = Field(default="", frozen=True)
    count: int = 0
    notes: dict[str, Any] = Field(default_factory=dict)


def _noop_node(index: int, names: list[str]) -> Node:
    goto = names[index + 1] if index + 1 < len(names) else END

    def run(state: NoopState, ctx: NodeContext) -> Step:
        notes = {**state.notes, f"n{index}": "note " * 40}
        return Step(update={"count": state.count + 1, "notes": notes}, goto=goto)

    return Node(names[index], run, routes=(goto,))


_NOOP_NAMES = [f"n{index}" for index in range(6)]
NOOP = Graph.build(
    "noop", "n0", NoopState, [_noop_node(i, _NOOP_NAMES) for i in range(len(_NOOP_NAMES))]
)
"""Six nodes that do nothing but count (``--noop``)."""


def make_emails(count: int, body_bytes: int) -> list[dict]:
    """``count`` distinct emails cycled from the sample inbox, bodies padded to ``body_bytes``."""
    samples = [load_email_file(path).model_dump(mode="json") for path in sample_inbox()]
    emails = []
    for index in range(count):
        email = dict(samples[index % len(samples)])
        email["message_id"] = f"<bench-{index}@bench.example>"
        body = email["body_text"]
        while len(body.encode()) < body_bytes:
            body += "\n" + email["body_text"]
        email["body_text"] = body.encode()[:body_bytes].decode(errors="ignore")
        emails.append(email)
    return emails


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--emails", type=int, default=300)
    parser.add_argument("--body-bytes", type=int, default=2048)
    parser.add_argument("--warmup", type=int, default=10, help="emails run first, not counted")
    parser.add_argument(
        "--profile", action="store_true", help="profile the timed emails (cumulative time)"
    )
    parser.add_argument(
        "--noop", action="store_true", help="the runtime alone: six nodes that do nothing"
    )
    parser.add_argument(
        "--gate",
        action="store_true",
        help=f"exit 1 when node code per hop is more than {GATE_RATIO:g}x the runtime's per hop",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as home:
        settings = Settings(
            home=Path(home),
            project="bench",
            store="sqlite",
            bus="inprocess",
            tasks="sqlite",
            environ=dict(os.environ),
        )
        runtime = (
            build_runtime(settings, graphs={"noop": NOOP}) if args.noop else build_runtime(settings)
        )
        store = runtime.store
        assert isinstance(store, SqliteCheckpointStore) and isinstance(runtime.bus, InProcessBus)
        seed_workspace(store, runtime.clock.now())
        emails = make_emails(args.warmup + args.emails, args.body_bytes)
        graph = "noop" if args.noop else "pipeline"
        inputs = [
            {"text": (e["body_text"] * 2)[:3072]} if args.noop else {"email": e} for e in emails
        ]
        for state in inputs[: args.warmup]:
            runtime.start(graph, state)
        runtime.bus.drain()
        inputs = inputs[args.warmup :]
        pause_s = _time_pauses(runtime)
        baseline = store.stored_bytes("traces") + store.stored_bytes("effects")

        profile = cProfile.Profile() if args.profile else None
        started, cpu_started = time.perf_counter(), time.process_time()
        if profile:
            profile.enable()
        trace_ids = [runtime.start(graph, state) for state in inputs]
        runtime.bus.drain()
        if profile:
            profile.disable()
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        if profile:
            pstats.Stats(profile).sort_stats("cumulative").print_stats(30)

        statuses = Counter(store.get_trace(t).status for t in trace_ids)
        logs = [entry for t in trace_ids for entry in store.step_logs(t) if entry.step_order > 0]
        node_ms = [entry.latency_ms for entry in logs]
        stored = store.stored_bytes("traces") + store.stored_bytes("effects") - baseline
        file_bytes = sum(p.stat().st_size for p in Path(home).glob("inboxflow.db*"))

    hops = len(logs)
    ms_per_hop = elapsed * 1000 / hops
    bytes_per_email = stored / args.emails
    print(
        f"emails            {args.emails} ({args.body_bytes} B bodies), statuses {dict(statuses)}"
    )
    print(f"hops              {hops} ({hops / args.emails:.2f} per email)")
    print(f"throughput        {args.emails / elapsed:.1f} emails/s ({elapsed:.2f} s)")
    node_mean = statistics.mean(node_ms)
    runtime_ms = ms_per_hop - node_mean
    print(
        f"mean per hop      {ms_per_hop:.3f} ms = runtime {runtime_ms:.3f} ms + node code "
        f"{node_mean:.3f} ms (target <= {ANCHOR_MS_PER_STEP / 2:.2f} ms; this machine's anchor: "
        f"bench/langgraph_anchor.py)"
    )
    print(
        f"of the runtime's  {pause_s[0] * 1000 / hops:.3f} ms per hop telling the approval service of "
        f"pauses (their reviewer notifications; LangGraph's anchor ends a run at a pause instead)"
    )
    print(f"cpu per hop       {cpu * 1000 / hops:.3f} ms (process CPU time; wall above)")
    print(
        f"stored per email  {bytes_per_email / 1024:.2f} KB of documents "
        f"(target <= {ANCHOR_BYTES_PER_EMAIL / 4 / 1024:.2f} KB); SQLite file {file_bytes / args.emails / 1024:.2f} KB"
    )
    ok = ms_per_hop <= ANCHOR_MS_PER_STEP / 2 and bytes_per_email <= ANCHOR_BYTES_PER_EMAIL / 4
    print("targets           " + ("met" if ok else "NOT met"))
    if args.gate:
        return gate(node_mean, runtime_ms)
    return 0


def _time_pauses(runtime: Any) -> list[float]:
    """Time spent in the runtime's ``on_pause`` (the approval service's notifications), in
    seconds, summed into the returned one-item list from now on."""
    spent = [0.0]
    on_pause = runtime.on_pause
    if on_pause is None:
        return spent

    def timed(approval: Any) -> None:
        started = time.perf_counter()
        try:
            on_pause(approval)
        finally:
            spent[0] += time.perf_counter() - started

    runtime.on_pause = timed
    return spent


def gate(node_ms: float, runtime_ms: float) -> int:
    """0 when the node code per hop is at most ``GATE_RATIO`` times the runtime's, else 1."""
    ratio = node_ms / runtime_ms if runtime_ms > 0 else float("inf")
    passed = ratio <= GATE_RATIO
    print(
        f"gate              {'passed' if passed else 'FAILED'}: node code {node_ms:.3f} ms per hop / "
        f"runtime {runtime_ms:.3f} ms per hop = {ratio:.2f}x (at most {GATE_RATIO:g}x)"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

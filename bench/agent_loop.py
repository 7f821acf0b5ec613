"""The agent loop per sample email: turns, steps, and milliseconds per agent hop (not a test).

Each Crisp sample of the agent graph runs ``--repeat`` times through the
pharmacy profile on the embedded default (SQLite, in-process bus), with the
offline model (``--llm offline``, the scripted policy) or through google-genai
against the local Gemini double (``--llm double``: the HTTP round trip and the
SDK's encoding, the double's canned text answers ending the loop at turn 1).
A hop is one step of the graph (``agent_turn``, ``agent_tools``, ...): its
latency as the step log records it (node run, not commit), and the wall time
per step including the checkpoint commit and the bus.

    .venv/bin/python bench/agent_loop.py [--repeat 5] [--llm offline|double]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import nullcontext
from pathlib import Path

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import SystemClock
from inboxflow.graphs.agent.graph import AGENT
from inboxflow.mail import load_email_file
from inboxflow.ports.llm import LanguageModel
from inboxflow.routing import RouteDecision
from inboxflow.services import build_runtime
from inboxflow.settings import Settings
from inboxflow.start import start_email_trace


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--llm", choices=("offline", "double"), default="offline")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    samples = sorted(p for p in (AGENT.samples or Path()).iterdir() if p.suffix == ".eml")
    hop_ms: dict[str, list[float]] = defaultdict(list)
    rows = []
    if args.llm == "double":
        from inboxflow.dev.doubles.gemini_api import gemini_double_environment

        context = gemini_double_environment()
    else:
        context = nullcontext()
    with context, tempfile.TemporaryDirectory() as home:
        clock = SystemClock()
        store = SqliteCheckpointStore(Path(home) / "bench.db")
        settings = Settings(
            home=Path(home),
            project="bench",
            store="sqlite",
            bus="inprocess",
            tasks="sqlite",
            environ=dict(os.environ),
        )
        runtime = build_runtime(
            settings,
            llm=_model(args.llm),
            clock=clock,
            store=store,
            bus=InProcessBus(clock=clock),
            workspace=StoreWorkspace(store, clock),
        )
        for path in samples:
            email = load_email_file(path)
            turns, steps, wall = [], [], []
            for n in range(args.repeat):
                decision = RouteDecision("agent", "pharmacy", "bench", mailbox=email.mailbox)
                started = time.perf_counter()
                trace_id = start_email_trace(
                    runtime, email, decision, trace_id=f"bench-{path.stem[:2]}-{n}"
                ).trace_id
                runtime.bus.drain()
                elapsed = (time.perf_counter() - started) * 1000
                checkpoint = runtime.store.get_trace(trace_id)
                logs = runtime.store.step_logs(trace_id)[1:]
                for log in logs:
                    hop_ms[log.step_name].append(log.latency_ms)
                turns.append(checkpoint.state["iteration"])
                steps.append(len(logs))
                wall.append(elapsed / max(1, len(logs)))
            rows.append((path.name, checkpoint.status, turns[0], steps[0], statistics.median(wall)))
    print(f"agent loop, pharmacy profile, llm={args.llm}, {args.repeat} runs per email")
    print(f"{'email':36} {'status':13} {'turns':>5} {'steps':>5} {'ms/step wall':>13}")
    for name, status, turns_n, steps_n, wall_ms in rows:
        print(f"{name:36} {status:13} {turns_n:>5} {steps_n:>5} {wall_ms:>13.2f}")
    print(f"\n{'hop':12} {'n':>4} {'median ms':>10} {'p95 ms':>8}")
    for hop, values in sorted(hop_ms.items()):
        values.sort()
        p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
        print(f"{hop:12} {len(values):>4} {statistics.median(values):>10.2f} {p95:>8.2f}")
    return 0


def _model(kind: str) -> LanguageModel:
    if kind == "offline":
        return OfflineModel()
    settings = GeminiSettings.from_env(os.environ)
    assert settings is not None, "the Gemini double's environment is not set"
    return GeminiModel(settings)


if __name__ == "__main__":
    sys.exit(main())

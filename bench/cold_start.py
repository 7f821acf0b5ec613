"""Cold start of every node function against the floor (not a test).

Each measurement is a fresh ``python`` process, timed from spawn to exit:

- a node: ``import main`` (``functions/main.py``, as functions-framework
  does) and build the runtime for ``INBOXFLOW_NODE=<graph>.<node>`` with the
  Firestore store and the Pub/Sub bus (what the first CloudEvent does);
  an LLM node also imports ``google.genai`` and the Gemini adapter it will
  build on its first model call (the adapter imports ``google.genai`` lazily);
- the floor: ``functions_framework``, ``google.cloud.firestore`` and
  ``google.cloud.pubsub_v1`` imported and their clients built; for LLM nodes
  the floor also imports ``google.genai``.

Runs alternate (floor, node, floor, node, ...) and the table shows medians
of ``--runs`` (after one untimed run of each, which writes the bytecode). The
emulator variables point at a closed port: clients are built but never
connect. Every process runs in the deployed layout: the source archive
(``dev/infra/archive.build_source_archive``: ``main.py``, the package, ``inboxflow.yaml``
and its compiled form) unpacked in a temporary folder; ``--checkout`` runs
``functions/`` of this checkout instead.

With ``--first-event`` a node run also does what its first CloudEvent does
before any I/O: import the node's own code (declared ``lazy``), its tools, and
build the validators of the models every first event validates (its state, the
envelope, the email, the checkpoint, its lease and step log; models built on
first use, ``defer_build``, are built here), import its guards' code, build the
safety screen's answer and report for a node that screens (a ``safety_screen``
guard: a graph's first node), the answer models of the LLM tasks its module names
(an ``LLMTask`` in the node's module) and the JSON schemas of the tools its
prompt lists (a ``ToolRegistry`` in the node's module: the planner's), so work moved out of the start-up
into the first event is not hidden (the floor is unchanged). ``--pydantic-floor`` adds
importing pydantic and building one model to the floor (what a node's state
model needs in any case; the LLM floor has it already through ``google.genai``).
``--state-floor`` adds importing the node's graph state module instead: the
contract's pydantic state model (with its email model), which every node of
the graph validates its state with, so the ratio shows what the runtime itself
adds.

    .venv/bin/python bench/cold_start.py [--runs 7] [--nodes pipeline.review ...] [--first-event]
        [--checkout] [--pydantic-floor | --state-floor] [--root OTHER_CHECKOUT]
    .venv/bin/python bench/cold_start.py --importtime pipeline.review   # what it pulls in
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS = ROOT / "functions"
GOAL = 1.15

FLOOR = """
import functions_framework
from google.cloud import firestore, pubsub_v1
firestore.Client(project="bench")
pubsub_v1.PublisherClient()
"""
FLOOR_LLM = FLOOR + "import google.genai\n"
PYDANTIC = """
import pydantic
class Probe(pydantic.BaseModel):
    name: str = pydantic.Field(default="", max_length=10)
"""

NODE = """
import main
from inboxflow.entry import runtime
runtime()
"""
NODE_LLM = NODE + "import google.genai\nimport inboxflow.adapters.gemini_llm\n"
FIRST_EVENT = """
def first_event(rt):
    graph_name, _, node_name = rt.options.only_node.partition(".")
    graph = rt.graphs[graph_name]
    run = graph.nodes[node_name].run
    resolve = getattr(run, "resolve", None)
    if resolve is not None:
        run = resolve()
    graph.node_tools(node_name)
    guards = graph.nodes[node_name].guards
    for guard in guards:  # a node's guards run on every step: their code is imported
        guard._check.get()
    if any(guard.name == "safety_screen" for guard in guards):  # the first node screens
        from inboxflow.graphs.screen import SCREEN, ScreenReport
        SCREEN.output_model.model_rebuild()
        ScreenReport.model_rebuild()
    import sys
    from inboxflow.engine.tools import ToolRegistry
    from inboxflow.ports.llm import LLMTask
    for value in list(vars(sys.modules[run.__module__]).values()):
        if isinstance(value, ToolRegistry):  # a prompt listing tools: their JSON schemas
            value.specs()
        if isinstance(value, LLMTask):  # a task the node asks its model: its answer's validator
            value.output_model.model_rebuild()
    graph.state_model.model_rebuild()
    from inboxflow.envelope import Envelope
    from inboxflow.mail.model import Email
    from inboxflow.ports.checkpoint import Checkpoint, Lease, StepLog
    for model in (Envelope, Email, Checkpoint, Lease, StepLog):
        model.model_rebuild()
first_event(runtime())
"""


def _env(node: str | None, home: str) -> dict[str, str]:
    # Bytecode is written by the untimed first run and read by the timed ones, in either layout.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INBOXFLOW_", "GOOGLE_CLOUD")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(
        GOOGLE_CLOUD_PROJECT="bench",
        FIRESTORE_EMULATOR_HOST="127.0.0.1:9",
        PUBSUB_EMULATOR_HOST="127.0.0.1:9",
        INBOXFLOW_STORE="firestore",
        INBOXFLOW_BUS="pubsub",
        INBOXFLOW_HOME=home,
    )
    if node:
        env["INBOXFLOW_NODE"] = node
    return env


def deployed_source(home: str) -> Path:
    """The source archive, unpacked in ``home``: what a deployed function runs from."""
    from inboxflow.dev.infra.archive import build_source_archive

    folder = Path(home) / "source"
    with zipfile.ZipFile(build_source_archive(Path(home) / "source.zip", ROOT)) as archive:
        archive.extractall(folder)
    return folder


def run_once(code: str, node: str | None, home: str, cwd: Path = FUNCTIONS) -> tuple[float, float]:
    """Seconds from spawning ``python -c code`` in ``cwd`` to its exit, and its CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=_env(node, home),
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{node or 'floor'} failed:\n{done.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed, cpu


def node_functions() -> list[tuple[str, bool]]:
    """Every ``graph.node`` of every registered graph, with whether it uses a model."""
    from inboxflow.graphs import graph_registry

    return [
        (f"{graph.name}.{node.name}", node.uses_llm)
        for graph in graph_registry().values()
        for node in graph.nodes.values()
    ]


def state_modules() -> dict[str, str]:
    """The module of each graph's state model, by graph name."""
    from inboxflow.graphs import graph_registry

    return {name: graph.state_model.__module__ for name, graph in graph_registry().items()}


def _import_profile(code: str, node: str | None, home: str, cwd: Path) -> dict[str, int]:
    """Self import time (us) of every module ``code`` imports, from ``-X importtime``."""
    run_once(code, node, home, cwd)  # bytecode written, as for the timed runs
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=cwd,
        env=_env(node, home),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{node or 'floor'} failed:\n{done.stderr}")
    profile: dict[str, int] = {}
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0].rpartition(":")[2].strip().isdigit():
            profile[parts[2].strip()] = int(parts[0].rpartition(":")[2])
    return profile


def _group(module: str) -> str:
    """``inboxflow.graphs.pipeline.state`` -> ``inboxflow.graphs.pipeline``; ``yaml.reader`` -> ``yaml``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "inboxflow" else parts[0]


def importtime(node: str, llm: bool, checkout: bool) -> None:
    """Print what one node function's cold start imports beyond its floor, by self time."""
    with tempfile.TemporaryDirectory() as home:
        cwd = FUNCTIONS if checkout else deployed_source(home)
        floor = _import_profile(FLOOR_LLM if llm else FLOOR, None, home, cwd)
        ours = _import_profile(NODE_LLM if llm else NODE, node, home, cwd)
    extra = {name: us for name, us in ours.items() if name not in floor}
    groups: dict[str, int] = {}
    for name, us in extra.items():
        groups[_group(name)] = groups.get(_group(name), 0) + us
    print(
        f"{node}: {len(extra)} modules beyond the floor, {sum(extra.values()) / 1000:.1f} ms "
        f"of import self time (-X importtime inflates it)"
    )
    print("  by package:")
    for name, us in sorted(groups.items(), key=lambda item: -item[1])[:25]:
        print(f"  {us / 1000:8.1f} ms  {name}")
    print("  slowest modules:")
    for name, us in sorted(extra.items(), key=lambda item: -item[1])[:25]:
        print(f"  {us / 1000:8.1f} ms  {name}")


def extra_floor(node: str, pydantic: bool, states: dict[str, str] | None) -> str:
    """What ``--pydantic-floor`` or ``--state-floor`` (``states`` given) add to the floor."""
    if pydantic:
        return PYDANTIC
    if states is None:
        return ""
    return f"import {states[node.partition('.')[0]]}\n"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7, help="runs of each (median shown)")
    parser.add_argument("--nodes", nargs="*", help="graph.node names (default: all)")
    parser.add_argument("--importtime", metavar="GRAPH.NODE", help="import profile of one node")
    parser.add_argument(
        "--first-event", action="store_true", help="node runs also do their first event's work"
    )
    parser.add_argument(
        "--checkout", action="store_true", help="run functions/ of this checkout, not the archive"
    )
    floor_kind = parser.add_mutually_exclusive_group()
    floor_kind.add_argument(
        "--pydantic-floor", action="store_true", help="the floor also imports pydantic"
    )
    floor_kind.add_argument(
        "--state-floor",
        action="store_true",
        help="the floor also imports the node's graph state model (pydantic included)",
    )
    parser.add_argument(
        "--root",
        type=Path,
        help="measure another checkout (its functions/, its package on PYTHONPATH) with this script",
    )
    args = parser.parse_args()
    if args.root:
        global ROOT, FUNCTIONS
        ROOT, FUNCTIONS = args.root.resolve(), args.root.resolve() / "functions"
    nodes = node_functions()
    if args.importtime:
        uses_llm = dict(nodes)
        if args.importtime not in uses_llm:
            raise SystemExit(f"no node function {args.importtime!r}")
        importtime(args.importtime, uses_llm[args.importtime], args.checkout)
        return 0

    if args.nodes:
        nodes = [(name, llm) for name, llm in nodes if name in args.nodes]
    # Each node is paired with floor runs made just before its own: the machine's load
    # drifts over a long run, and a ratio against a floor measured minutes apart drifts too.
    floors: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in nodes}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in nodes}
    with tempfile.TemporaryDirectory() as home:
        cwd = FUNCTIONS if args.checkout else deployed_source(home)
        states = state_modules()
        codes = {
            name: (
                (FLOOR_LLM if llm else FLOOR)
                + extra_floor(name, args.pydantic_floor, states if args.state_floor else None),
                (NODE_LLM if llm else NODE) + first_event,
            )
            for name, llm in nodes
            for first_event in [FIRST_EVENT if args.first_event else ""]
        }
        for name, (floor_code, code) in codes.items():  # untimed: writes the bytecode
            run_once(floor_code, None, home, cwd)
            run_once(code, name, home, cwd)
        for _ in range(args.runs):
            for name, (floor_code, code) in codes.items():
                floors[name].append(run_once(floor_code, None, home, cwd))
                times[name].append(run_once(code, name, home, cwd))
    print(
        f"cold start{' + first event (no I/O)' if args.first_event else ''} "
        f"({'checkout' if args.checkout else 'deployed layout'}), median of "
        f"{args.runs} alternating runs "
        f"(floor = functions_framework + firestore + pubsub clients"
        f"{' + pydantic' if args.pydantic_floor else ''}"
        f"{' + the graph state model' if args.state_floor else ''}; LLM floor + google.genai)"
    )
    # CPU seconds (user + system of the child) move less than wall time on a loaded machine.
    print(
        f"  {'node function':36} {'ms':>7} {'floor':>7} {'ratio':>6}"
        f"   {'cpu ms':>7} {'floor':>7} {'ratio':>6}"
    )
    worst = worst_cpu = 0.0
    for name, llm in nodes:
        wall, floor = (
            statistics.median(t[0] for t in runs) for runs in (times[name], floors[name])
        )
        cpu, cpu_floor = (
            statistics.median(t[1] for t in runs) for runs in (times[name], floors[name])
        )
        ratio, cpu_ratio = wall / floor, cpu / cpu_floor
        worst, worst_cpu = max(worst, ratio), max(worst_cpu, cpu_ratio)
        flag = "" if ratio <= GOAL else "  > goal"
        print(
            f"  {name + (' (llm)' if llm else ''):36} {wall * 1000:7.0f} {floor * 1000:7.0f} "
            f"{ratio:5.2f}x   {cpu * 1000:7.0f} {cpu_floor * 1000:7.0f} {cpu_ratio:5.2f}x{flag}"
        )
    print(f"worst {worst:.2f}x wall, {worst_cpu:.2f}x cpu (goal <= {GOAL}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

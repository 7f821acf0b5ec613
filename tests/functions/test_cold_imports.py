"""A node function imports its own graph and the adapters it is wired with, nothing more.

Each case is a fresh interpreter doing what a deployed node function does on
its first CloudEvent (``import main``, build the runtime for
``INBOXFLOW_NODE`` with Firestore and Pub/Sub), in the deployed layout (the
unpacked source archive, with the compiled ``inboxflow.yaml.json``), then
reporting ``sys.modules``: another graph's nodes, the in-process bus, the
embedded SQLite adapters, ``google.genai`` or a YAML parser there would only
slow every cold start.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import zipfile
from functools import cache
from pathlib import Path

import pytest

from inboxflow.dev.infra.archive import build_source_archive
from inboxflow.engine.graph import LazyNodeFunction, LazyToolRegistry
from inboxflow.graphs import BUILT_IN, graph_registry, load_graph

FUNCTIONS = Path(__file__).parent.parent.parent / "functions"

SCRIPT = """
import json, sys
import main
from inboxflow.entry import runtime
rt = runtime()
graph, _, node = rt.options.only_node.partition(".")
assert rt.graphs[graph].nodes[node].name == node
print(json.dumps(sorted(sys.modules)))
"""

NEVER = (
    "inboxflow.adapters.inprocess_bus",
    "inboxflow.adapters.sqlite_store",
    "inboxflow.adapters.sqlite_vectors",
    "inboxflow.adapters.sqlite_tasks",
    "inboxflow.approvals.app",
    "inboxflow.dev.infra.export",
    "inboxflow.dev.infra.archive",
    "google.genai",
    "inboxflow.knowledge",
    "yaml",  # the archive's compiled config is JSON
    "inboxflow.mail.mime",
    "inboxflow.mail.html_text",
    "inboxflow.mail.loaders",
    # Lazy parts of Ports, built on first read: the workspace, vectors, CRM, notifier
    "inboxflow.adapters.store_workspace",
    "inboxflow.adapters.firestore_vectors",
    "inboxflow.adapters.embedded_crm",
    "inboxflow.adapters.channels",
)
"""Modules no node function wired with Firestore and Pub/Sub needs at start-up."""


def _packages() -> dict[str, str]:
    """Each built-in graph's package (``inboxflow.graphs.agent``), by graph name."""
    return {
        load_graph(reference).name: reference.partition(":")[0].rsplit(".", 1)[0]
        for reference in BUILT_IN
    }


PACKAGES = _packages()
CASES = sorted(
    {"pipeline.review"}  # the node issue 17 measured
    | {
        f"{name}.{node}"
        for name, graph in graph_registry().items()
        if name in PACKAGES
        for node in list(graph.nodes)[:1]
        + [n for n, d in graph.nodes.items() if not d.uses_llm][:1]
    }
)


@cache
def _deployed() -> Path:
    """The source archive, unpacked (kept for the test session)."""
    folder = Path(tempfile.mkdtemp(prefix="cold-imports-"))
    with zipfile.ZipFile(build_source_archive(folder / "source.zip")) as archive:
        archive.extractall(folder / "source")
    return folder


@cache
def _modules(node: str) -> frozenset[str]:
    return frozenset(modules_of_node_function(node, _deployed()))


def modules_of_node_function(node: str, tmp_path: Path) -> set[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "GOOGLE_CLOUD_PROJECT": "cold-start",
        "FIRESTORE_EMULATOR_HOST": "127.0.0.1:9",  # clients are built, never connect
        "PUBSUB_EMULATOR_HOST": "127.0.0.1:9",
        "INBOXFLOW_STORE": "firestore",
        "INBOXFLOW_BUS": "pubsub",
        "INBOXFLOW_HOME": str(tmp_path),
        "INBOXFLOW_NODE": node,
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path / "source" if (tmp_path / "source" / "main.py").is_file() else FUNCTIONS,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    assert "inboxflow.engine.graph" in modules
    return modules


@pytest.mark.parametrize("node", CASES)
def test_a_node_function_imports_only_its_own_graph(node: str) -> None:
    modules = _modules(node)
    own = node.partition(".")[0]
    assert PACKAGES[own] + ".graph" in modules
    for name, package in PACKAGES.items():
        if name == own:
            continue
        # Graphs share helpers (``inboxflow.graphs.kit``), never another graph's nodes.
        loaded = sorted(
            m for m in modules if m == f"{package}.graph" or m.startswith(package + ".nodes")
        )
        if package.startswith("inboxflow.graphs."):
            loaded = sorted(m for m in modules if m == package or m.startswith(package + "."))
        assert loaded == [], f"{node} imports graph {name}: {loaded}"
    assert sorted(modules & set(NEVER)) == []
    # the offline model's heuristics: a node function on Gemini never needs them
    offline = sorted(m for m in modules if m.startswith(PACKAGES[own]) and m.endswith(".offline"))
    assert offline == []


def test_cases_cover_every_built_in_graph() -> None:
    assert {case.partition(".")[0] for case in CASES} == set(PACKAGES)


def _module(reference: str) -> str:
    return reference.partition(":")[0]


@pytest.mark.parametrize("node", CASES)
def test_a_node_function_imports_no_node_code_or_tools_before_its_first_event(node: str) -> None:
    """Node modules (its own too) load on the node's first call; the tools when a node uses them."""
    modules = _modules(node)
    graph = graph_registry()[node.partition(".")[0]]
    code = {
        _module(n.run.reference)
        for n in graph.nodes.values()
        if isinstance(n.run, LazyNodeFunction)
    }
    assert code, f"{graph.name} declares its nodes by reference"
    if isinstance(graph.tools, LazyToolRegistry):  # support has no tool registry
        code.add(_module(graph.tools.reference))
    assert sorted(modules & code) == []


@pytest.mark.parametrize("node", [case for case in CASES if not case.startswith("planner.")])
def test_only_the_planner_imports_the_quoting_service(node: str) -> None:
    assert "inboxflow.graphs.planner.quoting" not in _modules(node)


def test_the_cases_run_in_the_deployed_layout() -> None:
    modules = modules_of_node_function("pipeline.review", _deployed())
    assert "yaml" not in modules
    assert "yaml" in modules_of_node_function("pipeline.review", Path(tempfile.mkdtemp()))

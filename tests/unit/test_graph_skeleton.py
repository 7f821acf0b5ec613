"""A graph written from the skeleton ``inboxflow.graphs`` documents runs end to end.

The test writes a throwaway package (``graph.py``, ``state.py``, ``settings.py``,
``pauses.py``, ``tasks.py``, ``offline.py``, ``tools.py``, ``outcome.py``,
``summary.py``, ``nodes/``, ``samples/``) to a temporary folder, registers it the
documented way (``INBOXFLOW_GRAPHS``) and runs a trace on the embedded runtime
with the offline model: its LLM task is answered by its own ``offline.py``.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inboxflow import graphs as graphs_package
from inboxflow.engine.graph import Graph, LazyNodeFunction, LazyToolRegistry, StartContext
from inboxflow.graphs import get_graph, graph_registry
from inboxflow.ports.llm import LLMTask

FILES = {
    "__init__.py": '"""The tally graph: name the email\'s topic with a task, then count it."""\n',
    "state.py": """
        from pydantic import BaseModel, Field

        class TallyState(BaseModel):
            schema_version: int = 1
            subject: str = Field(default="", frozen=True)
            topic: str = ""
            counted: int | None = None
        """,
    "settings.py": """
        from pydantic import BaseModel

        class TallySettings(BaseModel):
            start_at: int = 100
        """,
    "pauses.py": """
        from inboxflow.engine.pause_kinds import Choice, PauseKind

        CONFIRM_TALLY = PauseKind(
            "confirm_tally", "Confirm a tally", (Choice("ok", "OK", "primary", ("OK", "Counted.")),)
        )
        """,
    "tasks.py": """
        from collections.abc import Mapping
        from typing import Any

        from pydantic import BaseModel

        from inboxflow.ports.llm import LLMTask

        class TopicAnswer(BaseModel):
            topic: str

        def _offline(inputs: Mapping[str, Any]) -> TopicAnswer:
            from .offline import name_topic

            return name_topic(inputs)

        NAME_TOPIC = LLMTask("name_topic", TopicAnswer, "Topic of: $subject", _offline)
        """,
    "offline.py": """
        from collections.abc import Mapping
        from typing import Any

        from .tasks import TopicAnswer

        TOPICS = {"invoice": "billing", "parcel": "errands"}

        def name_topic(inputs: Mapping[str, Any]) -> TopicAnswer:
            words = str(inputs.get("subject", "")).lower().split()
            return TopicAnswer(topic=next((TOPICS[w] for w in words if w in TOPICS), "other"))
        """,
    "tools.py": """
        from typing import Any

        from pydantic import BaseModel

        from inboxflow.engine.tools import Tool, ToolRegistry

        class CountParams(BaseModel):
            topic: str

        def count(params: CountParams, ctx: Any) -> dict[str, Any]:
            return {"count": len(params.topic)}

        TALLY_TOOLS = ToolRegistry([Tool("count", "Count a topic.", CountParams, count)])
        """,
    "outcome.py": """
        from typing import Any

        FIELDS = ("topic",)

        def outcome(checkpoint: Any) -> dict[str, Any]:
            return {"topic": checkpoint.state.get("topic")}
        """,
    "summary.py": """
        from inboxflow.engine.graph import TraceSummary

        def summary(checkpoint):
            return TraceSummary(label="tally", preview=checkpoint.state.get("topic", ""))
        """,
    "nodes/__init__.py": "",
    "nodes/tally.py": """
        from inboxflow.engine.graph import END, Step

        from ..settings import TallySettings
        from ..tasks import NAME_TOPIC

        def tally(state, ctx):
            answer = ctx.generate(NAME_TOPIC, {"subject": state.subject})
            counted = ctx.call_tool("count", {"topic": answer.topic})["count"]
            start_at = TallySettings().start_at
            return Step(update={"topic": answer.topic, "counted": start_at + counted}, goto=END)
        """,
    "samples/01-invoice.json": '{"subject": "Your invoice"}\n',
    "graph.py": """
        from pathlib import Path

        from inboxflow.engine.graph import END, Graph, Node, lazy

        from . import outcome
        from .pauses import CONFIRM_TALLY
        from .settings import TallySettings
        from .state import TallyState
        from .summary import summary

        def initial_state(email, start):
            return {"subject": str(email.get("subject", ""))}

        TALLY = Graph.build(
            "tally",
            "tally",
            TallyState,
            [
                Node(
                    "tally",
                    lazy(f"{__package__}.nodes.tally:tally"),
                    routes=(END,),
                    uses_llm=True,
                    tools=("count",),
                )
            ],
            description="Skeleton test: name the topic, count it.",
            pause_kinds=[CONFIRM_TALLY],
            initial_state=initial_state,
            summary=summary,
            outcome=outcome.outcome,
            outcome_fields=outcome.FIELDS,
            settings_model=TallySettings,
            tools=f"{__package__}.tools:TALLY_TOOLS",
            samples=Path(__file__).resolve().parent / "samples",
        )
        """,
}


@pytest.fixture
def tally_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    package = tmp_path / "code" / "tally_graph"
    for name, text in FILES.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    monkeypatch.setenv("INBOXFLOW_GRAPHS", "tally_graph.graph:TALLY")
    yield package
    for module in [m for m in sys.modules if m.split(".")[0] == "tally_graph"]:
        del sys.modules[module]


def test_the_skeleton_is_the_one_documented() -> None:
    documented = graphs_package.__doc__ or ""
    for name in FILES:
        if name != "__init__.py":
            assert name.split("/")[0] in documented, name


def test_a_throwaway_graph_built_from_the_skeleton_runs_on_the_embedded_runtime(
    tally_package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inboxflow import entry

    assert "tally" in graph_registry(os.environ)
    graph = get_graph("tally", os.environ)
    assert graph.node_tools("tally").names() == ["count"]
    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path / "home"))
    entry.reset()
    try:
        runtime = entry.runtime()
        state = dict(graph.initial_state({"subject": "Your invoice"}, StartContext(rule=None)))
        trace_id = runtime.start("tally", state)
        runtime.bus.drain()
        done = runtime.store.get_trace(trace_id)
        assert done.status == "done", done.error
        assert done.state["topic"] == "billing"  # the package's own offline heuristic
        assert done.state["counted"] == 100 + len("billing")
        assert graph.outcome(done) == {"topic": "billing"}
        assert graph.summary(done).preview == "billing"
    finally:
        entry.reset()


# --- every built-in graph has the skeleton -------------------------------------------------------

ALWAYS = ("graph.py", "state.py", "tasks.py", "offline.py", "outcome.py", "summary.py")
FOLDERS = ("nodes", "samples")


def _built_in() -> dict[str, tuple[Graph, str]]:
    """Each built-in graph and its package (``inboxflow.graphs.agent``), by name."""
    found = {}
    for reference in graphs_package.BUILT_IN:
        graph = graphs_package.load_graph(reference)
        found[graph.name] = (graph, reference.partition(":")[0].rpartition(".")[0])
    return found


BUILT_IN = _built_in()


def _folder(package: str) -> Path:
    return Path(importlib.import_module(package).__file__ or "").parent


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_every_built_in_graph_has_the_skeleton(name: str) -> None:
    graph, package = BUILT_IN[name]
    folder = _folder(package)
    missing = [f for f in ALWAYS if not (folder / f).is_file()]
    missing += [f"{d}/" for d in FOLDERS if not (folder / d).is_dir()]
    if not (folder / "tools.py").is_file() and not (folder / "tools" / "__init__.py").is_file():
        missing.append("tools.py")
    # settings.py and pauses.py are there exactly when the graph has settings or pause kinds
    if graph.settings_model is not None:
        assert graph.settings_model.__module__ == f"{package}.settings"
    elif (folder / "settings.py").is_file():
        missing.append("(a settings model in graph.py for settings.py)")
    if graph.pause_kinds and not (folder / "pauses.py").is_file():
        missing.append("pauses.py")
    assert missing == [], f"{package} lacks {missing}"
    assert graph.summary.__module__ == f"{package}.summary"
    assert graph.outcome.__module__ == f"{package}.outcome"


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_a_built_in_graphs_nodes_live_in_its_nodes_package(name: str) -> None:
    graph, package = BUILT_IN[name]
    for node in graph.nodes.values():
        assert isinstance(node.run, LazyNodeFunction), node.name
        assert node.run.reference.startswith(f"{package}.nodes."), node.run.reference
    if isinstance(graph.tools, LazyToolRegistry):
        assert graph.tools.reference.startswith(f"{package}.tools:")


LOADED = """
import json, sys
from inboxflow.graphs import load_graph
graph = load_graph(sys.argv[1])
graph.import_code()
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_a_built_in_graphs_tasks_are_in_tasks_py_and_its_code_leaves_offline_unloaded(
    name: str,
) -> None:
    """All of a graph's node code and tools import without the offline heuristics (what a
    Gemini deployment loads), and every ``LLMTask`` they define is declared in ``tasks.py``."""
    graph, package = BUILT_IN[name]
    reference = next(r for r in graphs_package.BUILT_IN if r.startswith(f"{package}.graph:"))
    done = subprocess.run(
        [sys.executable, "-c", LOADED, reference], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert f"{package}.tasks" in loaded
    assert f"{package}.offline" not in loaded
    own = [m for m in loaded if m == package or m.startswith(package + ".")]
    found = {
        value.name: module
        for module in own
        for value in vars(importlib.import_module(module)).values()
        if isinstance(value, LLMTask)
    }
    declared = vars(importlib.import_module(f"{package}.tasks")).values()
    in_tasks = {value.name for value in declared if isinstance(value, LLMTask)}
    assert in_tasks or graph.name in CHAT_ONLY
    assert {task: module for task, module in found.items() if task not in in_tasks} == {}


CHAT_ONLY = frozenset({"agent"})
"""Graphs whose one task is a chat turn (its prompt a profile's, its schema the tools)."""

"""Graph declarations name node functions and tool registries by reference: nothing of a
node's code is imported until it runs, every reference resolves, and a node's tools are
still checked against the registry (when it is imported)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import BaseModel

from inboxflow.engine.graph import Graph, LazyNodeFunction, LazyToolRegistry, Node, lazy
from inboxflow.engine.step import END, Step
from inboxflow.graphs import graph_registry
from inboxflow.lazy import import_reference


class Empty(BaseModel):
    pass


def _graph(tools: str, node_tools: tuple[str, ...]) -> Graph:
    return Graph.build(
        "lazy",
        "a",
        Empty,
        [Node("a", lazy("tests.plugin.errand:note"), routes=(END,), tools=node_tools)],
        tools=tools,
    )


def test_every_built_in_node_function_and_registry_resolves() -> None:
    for graph in graph_registry().values():
        graph.import_code()
        for node in graph.nodes.values():
            function = node.run
            if isinstance(function, LazyNodeFunction):
                assert function.loaded, f"{graph.name}.{node.name}"
                assert callable(function.resolve())
        assert all(tool in graph.tools for node in graph.nodes.values() for tool in node.tools)


def test_a_lazy_node_function_imports_its_module_on_first_call_only() -> None:
    script = (
        "import sys\n"
        "from inboxflow.engine.graph import lazy\n"
        "run = lazy('inboxflow.graphs.pipeline.nodes.review:review')\n"
        "print('inboxflow.graphs.pipeline.nodes.review' in sys.modules)\n"
        "run.resolve()\n"
        "print('inboxflow.graphs.pipeline.nodes.review' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "True"]


def test_a_lazy_node_function_runs_the_named_function() -> None:
    run = lazy("tests.unit.test_lazy_declarations:_answer")
    assert run({"n": 1}, None).update == {"answer": 1}  # type: ignore[arg-type]
    assert repr(run) == "lazy('tests.unit.test_lazy_declarations:_answer')"


def _answer(state: dict[str, int], ctx: object) -> Step:
    return Step(update={"answer": state["n"]})


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_colon", "expected module:function"),
        ("inboxflow.no_such_module:x", "cannot import inboxflow.no_such_module"),
        (
            "inboxflow.engine.graph:no_such_function",
            "inboxflow.engine.graph has no no_such_function",
        ),
        ("inboxflow.engine.graph:END", "is not callable"),
    ],
)
def test_a_bad_node_reference_is_a_clear_error(reference: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LazyNodeFunction(reference).resolve()


def test_import_reference_follows_a_dotted_attribute() -> None:
    assert import_reference("inboxflow.engine.graph:Graph.build", "test") == Graph.build


def test_a_lazy_registry_loads_on_first_use_and_checks_the_nodes_tools() -> None:
    graph = _graph("tests.plugin.errand:TOOLS", ("label",))
    assert isinstance(graph.tools, LazyToolRegistry)
    assert not graph.tools.loaded
    assert graph.node_tools("a").names() == ["label"]
    assert graph.tools.loaded


def test_a_node_declaring_a_tool_the_lazy_registry_lacks_fails_when_it_loads() -> None:
    graph = _graph("tests.plugin.errand:TOOLS", ("label", "shred"))
    with pytest.raises(ValueError, match=r"a declares tools \['shred'\]"):
        graph.import_code()


def test_a_node_without_tools_does_not_load_the_registry() -> None:
    graph = _graph("tests.plugin.errand:TOOLS", ())
    assert graph.node_tools("a").names() == []
    assert not graph.tools.loaded  # type: ignore[attr-defined]


def test_a_registry_may_be_a_function_returning_tools() -> None:
    graph = _graph("inboxflow.graphs.pipeline.tools:pipeline_tools", ("send_email",))
    assert "send_email" in graph.tools
    assert "get_contact" in graph.tools.names()


def _modules_at_start(tmp_path, node: str, wanted: str) -> list[str]:
    """The modules ``wanted`` (a Python test on ``m``) a node function's start has imported."""
    script = (
        "import sys\n"
        "from inboxflow.entry import runtime\n"
        "runtime()\n"
        f"print(sorted(m for m in sys.modules if {wanted}))\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": ":".join(sys.path),
        "INBOXFLOW_HOME": str(tmp_path),
        "INBOXFLOW_NODE": node,
    }
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.split()


def test_wiring_a_node_function_imports_no_approval_service(tmp_path) -> None:
    # Cold start (issue 42): the approval service and its pages, sessions and digests load on a
    # node's first pause or in the approval function, not when a node function starts.
    wanted = "m.startswith('inboxflow.approvals.service')"
    assert _modules_at_start(tmp_path, "pipeline.classify", wanted) == ["[]"]


def test_wiring_a_node_function_imports_no_task_embedder_or_notifier_port(tmp_path) -> None:
    # The composition root names them in annotations only: a node that schedules no task
    # imports no ScheduledTask model (nor the embedder and notifier ports) at start.
    ports = "{'inboxflow.ports.tasks', 'inboxflow.ports.embeddings', 'inboxflow.ports.notifier'}"
    assert _modules_at_start(tmp_path, "planner.planner", f"m in {ports}") == ["[]"]

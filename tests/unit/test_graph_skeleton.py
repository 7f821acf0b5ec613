"""A graph written from the skeleton ``inboxflow.graphs`` documents runs end to end.

The test writes a throwaway package (``graph.py``, ``state.py``, ``settings.py``,
``pauses.py``, ``tasks.py``, ``offline.py``, ``tools.py``, ``outcome.py``,
``summary.py``, ``nodes/``, ``samples/``) to a temporary folder, registers it the
documented way (``INBOXFLOW_GRAPHS``) and runs a trace on the embedded runtime
with the offline model: its LLM task is answered by its own ``offline.py``.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from inboxflow import graphs as graphs_package
from inboxflow.graph import StartContext
from inboxflow.graphs import get_graph, graph_registry

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
        from inboxflow.pauses import Choice, PauseKind

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

        from inboxflow.tools import Tool, ToolRegistry

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
        from inboxflow.graph import TraceSummary

        def summary(checkpoint):
            return TraceSummary(label="tally", preview=checkpoint.state.get("topic", ""))
        """,
    "nodes/__init__.py": "",
    "nodes/tally.py": """
        from inboxflow.graph import END, Step

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

        from inboxflow.graph import END, Graph, Node, lazy

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

    assert "tally" in graph_registry()
    graph = get_graph("tally")
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

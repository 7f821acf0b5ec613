"""A graph defined only in tests/ runs like a built-in one: embedded, on the emulators, in the
approval function with its own pause kind, in the Terraform export and in ``inboxflow traces``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from inboxflow.engine.graph import StartContext
from inboxflow.graphs import get_graph, graph_registry
from inboxflow.services import build_runtime
from inboxflow.settings import Settings

PLUGIN = "tests.plugin.errand:ERRAND"
ROOT = Path(__file__).resolve().parents[2]
EMAIL = {
    "message_id": "<errand-1@errands.test>",
    "subject": "Pick up the Keynes parcel",
    "sender": {"address": "ana@errands.test", "name": "Ana"},
    "to": [{"address": "owner@errands.test"}],
    "body_text": "Could you pick up the parcel at the desk?",
    "received_at": "2026-11-20T09:00:00Z",
    "mailbox": "owner@errands.test",
}


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INBOXFLOW_GRAPHS", PLUGIN)


def _first_state() -> dict:
    graph = get_graph("errand", os.environ)
    return dict(graph.initial_state(EMAIL, StartContext(rule="errands")))


def _token(link: str) -> str:
    return parse_qs(urlsplit(link).query)["t"][0]


def test_the_registry_takes_a_graph_named_in_the_environment(plugin: None) -> None:
    built_in = {"pipeline", "agent", "assistant", "support", "planner"}
    assert set(graph_registry(os.environ)) == {*built_in, "errand"}
    assert set(graph_registry({})) == built_in
    with pytest.raises(ValueError, match="cannot import"):
        graph_registry({"INBOXFLOW_GRAPHS": "tests.plugin.nowhere:X"})
    with pytest.raises(ValueError, match="not a Graph"):
        graph_registry({"INBOXFLOW_GRAPHS": "tests.plugin.errand:TOOLS"})


def test_a_node_calls_only_the_tools_it_declares(plugin: None) -> None:
    graph = get_graph("errand", os.environ)
    assert graph.node_tools("note").names() == ["label"]
    assert graph.node_tools("file").names() == []


def test_it_runs_pauses_with_its_own_kind_and_files_once_on_the_embedded_default(
    plugin: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from functions_framework import create_app

    from inboxflow import entry

    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path))
    entry.reset()
    runtime = entry.runtime()
    app = create_app("approve", str(ROOT / "functions" / "main.py"), "http").test_client()
    trace_id = runtime.start("errand", _first_state())
    runtime.bus.drain()
    waiting = runtime.store.get_trace(trace_id)
    assert waiting.status == "waiting", waiting.error
    assert waiting.pause["kind"] == "confirm_errand"
    assert waiting.state["errand"] == "errand: pick up the keynes parcel"
    assert waiting.state["rule"] == "errands"
    note_log = runtime.store.step_logs(trace_id)[1]
    assert [call["name"] for call in note_log.tool_calls] == ["label"]

    service = runtime.ports.approvals
    approval = service.get(waiting.pause["approval_id"])
    link = service.tokens.issue_link(approval, "owner@errands.test")
    page = app.get(urlsplit(link).path + "?" + urlsplit(link).query)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Confirm an errand" in html and "File it" in html and "Drop it" in html
    assert "Pick up the Keynes parcel" in html

    service.decisions.decide(
        approval.approval_id, _token(link), "file", edit={"errand": "collect parcel"}
    )
    runtime.bus.drain()
    done = runtime.store.get_trace(trace_id)
    assert done.status == "done", done.error
    assert done.state["filed"]["errand"] == "collect parcel"
    assert done.state["decided_by"] == "owner@errands.test"
    assert [doc["errand"] for _, doc in runtime.store.list("errands")] == ["collect parcel"]
    entry.reset()


def test_its_functions_get_their_own_topics_and_least_privilege(plugin: None) -> None:
    from inboxflow.dev.infra.export import export_graph_tfvars

    exported = export_graph_tfvars()
    nodes = exported["node_functions"]
    errand = {key: node for key, node in nodes.items() if node["graph"] == "errand"}
    assert sorted(errand) == ["errand.confirm", "errand.file", "errand.note"]
    assert errand["errand.note"]["publishes_to"] == [errand["errand.confirm"]["topic"]]
    assert errand["errand.confirm"]["publishes_to"] == [errand["errand.file"]["topic"]]
    assert errand["errand.file"]["publishes_to"] == []
    assert not any(node["uses_llm"] for node in errand.values())
    assert [key for key, node in errand.items() if node["uses_gmail"]] == ["errand.confirm"]
    assert [key for key, node in errand.items() if node["pauses"]] == ["errand.confirm"]
    assert errand["errand.note"]["is_entry"]
    assert "inboxflow-errand-note" in exported["entry_topics"]
    assert "inboxflow-errand-file" in exported["resume_topics"]
    assert len({node["service_account_id"] for node in nodes.values()}) == len(nodes)


def test_inboxflow_traces_shows_its_traces(plugin: None, tmp_path: Path) -> None:
    runtime = build_runtime(
        Settings(
            home=tmp_path,
            project="p",
            store="sqlite",
            bus="inprocess",
            tasks="sqlite",
            environ=dict(os.environ),
        )
    )
    trace_id = runtime.start("errand", _first_state())
    runtime.bus.drain()
    runtime.store.close()
    env = {
        **os.environ,
        "INBOXFLOW_HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "200",
    }
    cli = Path(sys.executable).parent / "inboxflow"
    result = subprocess.run(
        [str(cli), "traces"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert trace_id in result.stdout
    assert "waiting" in result.stdout and "note → confirm" in result.stdout


@pytest.mark.emulator
@pytest.mark.slow
def test_it_runs_as_separate_functions_on_the_emulators(
    plugin: None, firestore_emulator, pubsub_emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.harness.emulated_cloud import graph_functions

    extra = {"INBOXFLOW_GRAPHS": PLUGIN, "PYTHONPATH": str(ROOT)}
    with graph_functions("errand", firestore_emulator, pubsub_emulator, monkeypatch, **extra) as (
        _,
        runtime,
    ):
        trace_id = runtime.start("errand", _first_state())
        waiting = _wait(runtime, trace_id, lambda cp: cp.status != "running")
        assert waiting.status == "waiting", waiting.error
        service = runtime.ports.approvals
        approval = service.get(waiting.pause["approval_id"])
        link = service.tokens.issue_link(approval, "owner@errands.test")
        service.decisions.decide(
            approval.approval_id, _token(link), "file", edit={"errand": "on the emulators"}
        )
        done = _wait(runtime, trace_id, lambda cp: cp.status not in ("running", "waiting"))
        assert done.status == "done", done.error
        workers = {
            e.step_name: e.worker.rsplit(":", 1)[0] for e in runtime.store.step_logs(trace_id)[1:]
        }
        assert set(workers) == {"note", "confirm", "file"}
        assert len(set(workers.values())) == 3, workers
        filed = [doc for _, doc in runtime.store.list("errands") if doc["trace_id"] == trace_id]
        assert [doc["errand"] for doc in filed] == ["on the emulators"]


def _wait(runtime, trace_id: str, until, timeout_s: float = 90.0):
    deadline = time.monotonic() + timeout_s
    checkpoint = None
    while time.monotonic() < deadline:
        checkpoint = runtime.store.get_trace(trace_id)
        if checkpoint is not None and until(checkpoint):
            return checkpoint
        time.sleep(0.25)
    raise AssertionError(f"trace {trace_id}: {checkpoint and (checkpoint.status, checkpoint.node)}")


def test_the_runtime_refuses_a_tool_the_node_does_not_declare(tmp_path: Path) -> None:
    from pydantic import BaseModel

    from inboxflow.engine.graph import Graph, Node
    from inboxflow.engine.step import END, Step
    from tests.harness.runtimes import runtime_for
    from tests.plugin.errand import TOOLS

    class Empty(BaseModel):
        schema_version: int = 1
        result: dict | None = None

    def sneaky(state: Empty, ctx) -> Step:
        return Step(update={"result": ctx.call_tool("label", {"text": "x"})}, goto=END)

    graph = Graph.build(
        "sneaky", "sneak", Empty, [Node("sneak", sneaky, routes=(END,))], tools=TOOLS
    )
    runtime = runtime_for(tmp_path, graphs={"sneaky": graph})
    trace_id = runtime.start("sneaky", {})
    runtime.bus.drain()
    done = runtime.store.get_trace(trace_id)
    assert done.status == "done"
    assert done.state["result"] == {"error": "unknown tool 'label'"}

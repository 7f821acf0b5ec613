"""Through the runtime: llm_calls and tool_calls on the step log, and Gemini failures
ending the trace in needs_review with the reason, without multiplying retries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.gemini_api import GeminiDouble, Reply, start_gemini_double
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.runtime import Runtime
from inboxflow.engine.step import END, Step
from inboxflow.engine.tools import Tool, ToolRegistry
from inboxflow.errors import RetryableError
from inboxflow.graphs.pipeline.tasks import CLASSIFY_INTENT
from inboxflow.mail import email_from_json, prompt_fields
from inboxflow.ports.llm import LanguageModel
from tests.harness.runtimes import runtime_for


class AskState(BaseModel):
    schema_version: int = 1
    body: str = ""
    category: str | None = None
    results: list[dict[str, Any]] = []


def ask(state: AskState, ctx: NodeContext) -> Step:
    email = email_from_json(
        {"from": "a@b.example", "to": ["me@c.example"], "subject": "Pricing", "body": state.body}
    )
    answer = ctx.generate(CLASSIFY_INTENT, prompt_fields(email))
    return Step(update={"category": answer.category}, goto=END)


def use_tools(state: AskState, ctx: NodeContext) -> Step:
    results = [
        ctx.call_tool(name, arguments)
        for name, arguments in [
            ("echo", {"text": "hi"}),
            ("broken", {"text": "x"}),
            ("flaky", {"text": "x"}),
            ("echo", {"wrong": 1}),
            ("nope", {}),
            ("echo", {"text": "after"}),
        ]
    ]
    return Step(update={"results": results}, goto=END)


GRAPH = Graph.build("ask", "ask", AskState, [Node("ask", ask, routes=(END,), uses_llm=True)])


class Text(BaseModel):
    text: str


def _broken(params: Text, ctx: NodeContext) -> dict[str, Any]:
    return {"missing": {}["key"]}  # a KeyError inside a handler is not an "unknown tool"


def _flaky(params: Text, ctx: NodeContext) -> dict[str, Any]:
    raise RetryableError("calendar 503 after 3 attempts")


TOOLS = ToolRegistry(
    [
        Tool("echo", "Echo the text.", Text, lambda params, ctx: {"echo": params.text}),
        Tool("broken", "Always fails.", Text, _broken),
        Tool("flaky", "Transiently down.", Text, _flaky),
    ]
)
TOOLS_GRAPH = Graph.build(
    "tools",
    "tools",
    AskState,
    [Node("tools", use_tools, routes=(END,), tools=("echo", "broken", "flaky"))],
    tools=TOOLS,
)


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double() as running:
        yield running


def runtime_with(tmp_path: Path, llm: LanguageModel) -> tuple[Runtime, InProcessBus]:
    clock = FakeClock()
    bus = InProcessBus(clock=clock)
    runtime = runtime_for(
        tmp_path,
        clock=clock,
        graphs={"ask": GRAPH, "tools": TOOLS_GRAPH},
        store=SqliteCheckpointStore(tmp_path / "ask.db"),
        bus=bus,
        llm=llm,
    )
    return runtime, bus


def gemini(double: GeminiDouble) -> GeminiModel:
    settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
    return GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))


def run(runtime: Runtime, bus: InProcessBus, graph: str = "ask", body: str = "") -> str:
    body = body or "Hi, could you tell me about pricing for 10 seats?"
    trace_id = runtime.start(graph, {"body": body})
    bus.drain()
    return trace_id


def test_llm_call_is_logged_with_model_tokens_latency_and_outcome(tmp_path, double):
    runtime, bus = runtime_with(tmp_path, gemini(double))
    trace_id = run(runtime, bus)

    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done" and checkpoint.state["category"] == "inquiry"
    (call,) = runtime.store.step_logs(trace_id)[1].llm_calls
    assert call["task"] == "classify_intent" and call["model"] == "gemini-3.5-flash-lite"
    assert call["outcome"] == "ok" and call["attempts"] == 1
    assert call["input_tokens"] > 50 and call["output_tokens"] > 5
    assert call["latency_ms"] > 0
    assert "error" not in call


def test_retried_call_records_what_was_retried(tmp_path, double):
    double.script(Reply.error(503))
    runtime, bus = runtime_with(tmp_path, gemini(double))
    trace_id = run(runtime, bus)

    (call,) = runtime.store.step_logs(trace_id)[1].llm_calls
    assert call["outcome"] == "retried" and call["attempts"] == 2
    assert call["retried_errors"][0].startswith("503 UNAVAILABLE")


def test_gemini_down_puts_the_trace_in_needs_review_after_three_requests(tmp_path, double):
    double.script(*[Reply.error(500)] * 9)
    runtime, bus = runtime_with(tmp_path, gemini(double))
    trace_id = run(runtime, bus)

    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "needs_review"
    assert checkpoint.error.startswith(
        "classify_intent: Gemini unavailable after 3 attempts: 500 INTERNAL"
    )
    assert len(double.calls()) == 3  # the runtime does not retry a NodeFailed
    entry = runtime.store.step_logs(trace_id)[1]
    assert entry.attempt == 1 and entry.error == checkpoint.error
    (call,) = entry.llm_calls
    assert call["outcome"] == "failed" and call["attempts"] == 3
    assert call["error"] == checkpoint.error


def test_schema_violation_twice_is_a_step_error(tmp_path, double):
    double.script(Reply.json({"category": "urgent"}), Reply.raw("not json"))
    runtime, bus = runtime_with(tmp_path, gemini(double))
    trace_id = run(runtime, bus)

    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "needs_review"
    assert checkpoint.error.startswith(
        "classify_intent: output did not match schema: not valid JSON"
    )
    (call,) = runtime.store.step_logs(trace_id)[1].llm_calls
    assert call["outcome"] == "failed" and call["attempts"] == 2
    assert call["retried_errors"][0].startswith("schema: category: Input should be")


def test_offline_model_calls_are_logged_too(tmp_path):
    runtime, bus = runtime_with(tmp_path, OfflineModel())
    trace_id = run(runtime, bus)
    (call,) = runtime.store.step_logs(trace_id)[1].llm_calls
    assert call["model"] == "offline-heuristics" and call["outcome"] == "ok"
    assert call["attempts"] == 1 and "input_tokens" not in call


def test_each_tool_call_is_recorded_and_a_failure_stays_with_its_tool(tmp_path):
    runtime, bus = runtime_with(tmp_path, OfflineModel())
    trace_id = run(runtime, bus, graph="tools")

    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done"
    results = checkpoint.state["results"]
    assert results[0] == {"echo": "hi"} and results[5] == {"echo": "after"}
    assert results[1] == {"error": "KeyError: 'key'"}
    assert results[2] == {"error": "RetryableError: calendar 503 after 3 attempts"}
    assert results[3]["error"].startswith("invalid arguments for echo:")
    assert results[4] == {"error": "unknown tool 'nope'"}

    calls = runtime.store.step_logs(trace_id)[1].tool_calls
    assert [c["name"] for c in calls] == ["echo", "broken", "flaky", "echo", "nope", "echo"]
    assert calls[0]["arguments"] == {"text": "hi"} and calls[0]["result"] == {"echo": "hi"}
    assert all(("result" in c) != ("error" in c) for c in calls)
    assert calls[2]["retryable"] is True
    assert all(c["latency_ms"] >= 0 for c in calls)

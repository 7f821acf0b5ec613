"""The pipeline on Gemini: google-genai against the local Gemini double, end to end."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.dev.doubles.gemini_api import GeminiDouble, Reply, start_gemini_double
from inboxflow.engine.runtime import Runtime
from tests.harness.pipeline import build, sample_emails

LLM_STEPS = {
    "classify": "classify_intent",
    "decide": "decide_tools",
    "generate": "generate_response",
}


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double() as running:
        yield running


def gemini_runtime(tmp_path: Path, double: GeminiDouble) -> Runtime:
    runtime = build(tmp_path)
    settings = GeminiSettings(
        mode="api_key",
        api_key="double-key",
        base_url=double.base_url,
        task_models=(("generate_response", "gemini-3.8-flash"),),
    )
    runtime.llm = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))
    return runtime


def run_all(runtime: Runtime, emails: list[dict[str, Any]]) -> list[str]:
    trace_ids = []
    for email in emails:
        trace_ids.append(runtime.start("pipeline", {"email": email}))
        runtime.bus.drain()  # type: ignore[attr-defined]
    return trace_ids


def outcome(runtime: Runtime, trace_id: str) -> tuple[Any, ...]:
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None
    state = checkpoint.state
    return (
        checkpoint.status,
        (state.get("classification") or {}).get("category"),
        (state.get("draft") or {}).get("body"),
    )


def test_samples_through_gemini_match_the_offline_run_and_log_every_call(tmp_path, double):
    emails = sample_emails()[:6]
    gemini = gemini_runtime(tmp_path / "gemini", double)
    offline = build(tmp_path / "offline")

    gemini_ids = run_all(gemini, emails)
    offline_ids = run_all(offline, emails)

    assert [outcome(gemini, t) for t in gemini_ids] == [outcome(offline, t) for t in offline_ids]
    statuses = {outcome(gemini, t)[0] for t in gemini_ids}
    assert statuses <= {"done", "waiting"}

    logged = 0
    for trace_id in gemini_ids:
        for entry in gemini.store.step_logs(trace_id):
            if entry.step_name not in LLM_STEPS:
                assert entry.llm_calls == []
                continue
            calls = entry.llm_calls
            if entry.step_name == "classify":  # the safety screen reads each email there, once
                screen = calls[-1]
                assert screen["task"] == "screen" and screen["model"] == "gemini-3.5-flash-lite"
                calls = calls[:-1]
                logged += 1
            (call,) = calls
            assert call["task"] == LLM_STEPS[entry.step_name]
            expected = (
                "gemini-3.8-flash"
                if call["task"] == "generate_response"
                else "gemini-3.5-flash-lite"
            )
            assert call["model"] == expected
            assert call["input_tokens"] > 0 and call["output_tokens"] > 0
            assert call["outcome"] == "ok" and call["attempts"] == 1
            logged += 1
    requests = double.calls()
    assert logged == len(requests) >= 2 * len(emails)
    assert {r.model for r in requests} == {"gemini-3.5-flash-lite", "gemini-3.8-flash"}


def test_gemini_outage_sends_that_trace_to_review_with_the_reason(tmp_path, double):
    runtime = gemini_runtime(tmp_path, double)
    first, second = sample_emails()[:2]
    double.script(*[Reply.error(503)] * 3)

    failed = run_all(runtime, [first])[0]
    fine = run_all(runtime, [second])[0]

    checkpoint = runtime.store.get_trace(failed)
    assert checkpoint is not None and checkpoint.status == "needs_review"
    assert checkpoint.error == (
        "classify_intent: Gemini unavailable after 3 attempts: "
        "503 UNAVAILABLE: The model is overloaded. Please try again later."
    )
    assert outcome(runtime, fine)[0] in {"done", "waiting"}


def test_demo_with_gemini_double_runs_through_google_genai(tmp_path, monkeypatch):
    from inboxflow.dev.cli import app

    monkeypatch.setenv("COLUMNS", "200")

    result = CliRunner().invoke(app, ["demo", "--home", str(tmp_path / "home"), "--gemini-double"])

    assert result.exit_code == 0, result.output
    assert "model: gemini-3.5-flash-lite" in result.output
    # The one trace a person must pick up is the pharmacy's medical question, escalated by
    # the profile's escalation_cues guard whatever the double's agent answers (issue 30).
    assert "needs_review: 1" in result.output
    assert "escalated by the agent: a" in result.output
    assert "failed" not in result.output
    assert "done:" in result.output and "waiting:" in result.output
    assert "INBOXFLOW_GEMINI_BASE_URL" not in os.environ  # the double's settings are undone

"""``inboxflow check`` against the strict Gemini double: passes on the defaults, fails
clearly (exit 1, the fix named) on a shut-down model ID."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from inboxflow.dev.cli import app
from inboxflow.dev.doubles.gemini_api import (
    GeminiDouble,
    Reply,
    double_environment,
    start_gemini_double,
)


@pytest.fixture
def double(monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiDouble]:
    with start_gemini_double() as running:
        for name, value in double_environment(running).items():
            monkeypatch.setenv(name, value)
        yield running


def check() -> tuple[int, str]:
    result = CliRunner().invoke(app, ["check"], terminal_width=200)
    return result.exit_code, result.output


def test_check_passes_on_the_defaults_and_makes_every_promised_call(double):
    code, output = check()

    assert code == 0, output
    assert "all 6 checks passed" in output
    assert "gemini-3.8-flash" in output and "gemini-3.5-flash-lite" in output
    assert "with thought signature" in output
    generated = double.calls("generateContent")
    # Two models: one structured call and a two-request round trip each.
    assert [r.status for r in generated] == [200] * 6
    round_trips = [r for r in generated if r.body.get("tools")]
    answers = [
        r
        for r in round_trips
        if any("functionResponse" in p for c in r.body["contents"] for p in c["parts"])
    ]
    assert len(round_trips) == 4 and len(answers) == 2
    assert len(double.calls("batchEmbedContents")) == 1


def test_check_fails_clearly_on_a_shut_down_model(double, monkeypatch):
    monkeypatch.setenv("INBOXFLOW_GEMINI_TASK_MODEL", "gemini-2.5-flash")

    code, output = check()

    assert code == 1
    assert "FAIL gemini-2.5-flash (role task) exists" in output
    assert "gemini-2.5-flash is shut down; use gemini-3.5-flash-lite" in output
    assert "INBOXFLOW_GEMINI_TASK_MODEL" in output
    assert "1 of 5 checks failed" in output


def test_check_reports_a_failed_call_with_the_reason(double):
    double.script(Reply.error(403, "Permission denied: API key has no access"))
    double.script(Reply.error(403, "Permission denied: API key has no access"))

    code, output = check()

    assert code == 1
    assert "FAIL gemini-3.5-flash-lite (role task) structured output" in output
    assert "403" in output and "fix: the key or credentials are refused" in output


def test_check_without_gemini_says_what_to_set(monkeypatch):
    code, output = check()
    assert code == 1 and "set GEMINI_API_KEY" in output


def test_check_is_skipped_saying_so_on_the_offline_model(monkeypatch):
    """An llm = "offline" deployment has no key and calls no Gemini (issue 38)."""
    monkeypatch.setenv("INBOXFLOW_LLM", "offline")
    monkeypatch.setenv("GEMINI_API_KEY", "a-key-that-must-not-be-used")
    code, output = check()
    assert code == 0 and "skipped: INBOXFLOW_LLM=offline" in output

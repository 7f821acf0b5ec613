"""The assistant learning end to end on Gemini through google-genai and the Gemini REST double:
the triage and the memory updates are real structured calls (answered by the double's task
oracle), the agent turns are scripted function calls; the learnt sign-off is in what the model
is told next time, and a sender ignored twice on notify is triaged ignore."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.dev.doubles.gemini_api import (
    FunctionCallReply,
    GeminiDouble,
    Reply,
    start_gemini_double,
)
from inboxflow.memory import read_memory
from tests.agent_harness import build
from tests.assistant_harness import OWNER, decide, pending, sample, sent, start, state

MEMORY_SYSTEM = "You keep an email assistant's memory"


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double(api_key="test-key") as running:
        yield running


@pytest.fixture
def runtime(double, tmp_path):
    settings = GeminiSettings(mode="api_key", api_key="test-key", base_url=double.base_url)
    model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None, jitter=lambda: 0.5))
    return build(tmp_path, llm=model)


def _system(call) -> str:
    return " ".join(p.get("text", "") for p in call.body["systemInstruction"]["parts"])


def test_a_sender_ignored_twice_is_triaged_ignore_on_gemini(runtime, double):
    for n in (1, 2):
        trace_id = start(runtime, sample("32", message_id=f"<g{n}@test>", thread_id=f"g{n}"))
        assert state(runtime, trace_id)["classification"] == "notify"
        decide(runtime, trace_id, "ignore")
    third = start(runtime, sample("32", message_id="<g3@test>", thread_id="g3"))
    assert state(runtime, third)["classification"] == "ignore"
    triage = read_memory(runtime.store, OWNER, "triage_preferences")
    assert triage.profile["ignore_senders"] == ["billing@acme-hosting.example"]
    learnt = [c for c in double.calls() if _system(c).startswith(MEMORY_SYSTEM)]
    assert len(learnt) == 2  # both updates were model calls through google-genai


def test_the_edited_sign_off_is_what_gemini_is_told_next_time(runtime, double):
    draft = "Hi Sam,\n\nThey will be ready Wednesday.\n\nBest regards"
    write = (
        "write_email",
        {"to": "sam.ortiz@brightlane.io", "subject": "Re: Slides", "content": draft},
    )
    double.script(
        Reply(),  # triage: the task oracle answers
        FunctionCallReply.of(write),
        Reply(),  # the memory update: the task oracle answers
        FunctionCallReply.of(("Done", {"done": True})),
        Reply(),  # the next email's triage
        FunctionCallReply.of(write),
    )
    first = start(runtime, sample("34"))
    decide(runtime, first, "edit", edit={"content": draft.replace("Best regards", "Cheers,\nAlex")})
    assert state(runtime, first)["status"] == "completed", runtime.store.get_trace(first).error
    assert sent(runtime, first)[0]["body"].rstrip().endswith("Cheers,\nAlex")
    memory = read_memory(runtime.store, OWNER, "response_preferences")
    assert memory.profile["sign_off"] == "Cheers,\nAlex"

    second = start(runtime, sample("34", message_id="<g-again@test>", thread_id="g-again"))
    assert pending(runtime, second).kind == "tool_review"
    told = _system(double.calls()[-1])
    assert '"sign_off": "Cheers,\\nAlex"' in told

"""The assistant on Gemini through google-genai and the Gemini REST double. Learning end to
end: the triage and the memory updates are real structured calls (answered by the double's
task oracle), the agent turns scripted function calls; the learnt sign-off is in what the model
is told next time, and a sender ignored twice on notify is triaged ignore. Unscripted: the
double plays the assistant's policy on each request's conversation, so a whole meeting request
runs through function declarations, Gemini's call ids and function responses."""

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
from inboxflow.memory import PreferenceMemory
from tests.harness.agent import build
from tests.harness.assistant import OWNER, decide, pending, sample, sent, start, state

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
    triage = PreferenceMemory(runtime.store, runtime.clock).read(OWNER, "triage_preferences")
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
        Reply(),  # the safety screen: the task oracle answers (nothing found)
        FunctionCallReply.of(write),
        Reply(),  # the memory update: the task oracle answers
        FunctionCallReply.of(("Done", {"done": True})),
        Reply(),  # the next email's triage
        Reply(),  # its safety screen
        FunctionCallReply.of(write),
    )
    first = start(runtime, sample("34"))
    decide(runtime, first, "edit", edit={"content": draft.replace("Best regards", "Cheers,\nAlex")})
    assert state(runtime, first)["status"] == "completed", runtime.store.get_trace(first).error
    assert sent(runtime, first)[0]["body"].rstrip().endswith("Cheers,\nAlex")
    memory = PreferenceMemory(runtime.store, runtime.clock).read(OWNER, "response_preferences")
    assert memory.profile["sign_off"] == "Cheers,\nAlex"

    second = start(runtime, sample("34", message_id="<g-again@test>", thread_id="g-again"))
    assert pending(runtime, second).kind == "tool_review"
    told = _system(double.calls()[-1])
    assert '"sign_off": "Cheers,\\nAlex"' in told


def test_the_response_agent_runs_on_gemini_function_calling_unscripted(tmp_path):
    """No scripted replies: the double plays the assistant's policy on the conversation each
    request carries (read back from Gemini's contents), so every turn goes through the real
    declarations, Gemini's function calls with their ids, and the function responses."""
    from inboxflow.dev.doubles.gemini_api import playing
    from inboxflow.graphs.assistant.offline import assistant_policy
    from inboxflow.graphs.assistant.tools import ASSISTANT_TOOLS

    with start_gemini_double(api_key="test-key", functions=playing(assistant_policy)) as double:
        settings = GeminiSettings(mode="api_key", api_key="test-key", base_url=double.base_url)
        model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None, jitter=lambda: 0.5))
        runtime = build(tmp_path, llm=model)
        trace_id = start(runtime, sample("33"))
        review = pending(runtime, trace_id)
        assert review.payload["tool"] == "schedule_meeting"
        decide(runtime, trace_id, "accept")
        assert pending(runtime, trace_id).payload["tool"] == "write_email"
        decide(runtime, trace_id, "accept")
        final = state(runtime, trace_id)
        assert final["status"] == "completed", runtime.store.get_trace(trace_id).error
        turns = [c for c in double.calls() if c.body.get("tools")]
    tools = [t["name"] for t in turns[0].body["tools"][0]["functionDeclarations"]]
    assert sorted(tools) == sorted(ASSISTANT_TOOLS.names())
    assert [e["tool"] for e in final["tool_log"]] == [
        "check_calendar_availability",
        "schedule_meeting",
        "write_email",
        "Done",
    ]
    assert len(turns) == 4  # one Gemini turn per tool call
    calls = [m["tool_calls"][0] for m in final["messages"] if m.get("tool_calls")]
    assert all(c["id"].startswith("call-") for c in calls)  # Gemini's ids, not the policy's
    answered = [
        part["functionResponse"]
        for content in turns[-1].body["contents"]
        for part in content["parts"]
        if "functionResponse" in part
    ]
    assert [(r["id"], r["name"]) for r in answered] == [
        (c["id"], c["name"]) for c in calls[:-1]
    ]  # each result answers its call by id
    assert answered[1]["response"]["scheduled"] is True
    (event,) = [doc for _, doc in runtime.store.list("calendar_events") if not doc.get("seeded")]
    assert event["attendees"] == ["dana.lee@partnerco.example"]
    assert len(sent(runtime, trace_id)) == 1 and final["marked_read"]

"""Issue 27: what a real key would refuse, one test per finding, against the strict double.

Every test goes through the selection a deployed function uses (``choose_llm`` /
``choose_embedder`` reading the environment) and the real google-genai client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from google.oauth2.credentials import Credentials

from inboxflow.dev.doubles.gemini_api import (
    FunctionCallReply,
    GeminiDouble,
    Reply,
    start_gemini_double,
)
from inboxflow.graphs.agent.tools import AGENT_TOOLS
from inboxflow.graphs.pipeline.tasks import CLASSIFY_INTENT
from inboxflow.llm_selection import choose_embedder, choose_llm
from inboxflow.mail import email_from_json, prompt_fields
from inboxflow.ports.llm import ChatSettings, LLMFailed

SPECS = AGENT_TOOLS.only(["search_drugs", "create_draft"]).openai_specs()
CONVERSATION = [
    {"role": "system", "content": "You are a pharmacy assistant."},
    {"role": "user", "content": "Is Paralen 500 in stock?"},
]
INPUTS = prompt_fields(
    email_from_json(
        {"from": "Priya <priya@kestrel-logistics.com>", "subject": "Pricing", "body": "Hi, price?"}
    )
)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double(api_key="test-key") as running:
        yield running


def gemini(double: GeminiDouble, sleeps: Sleeps | None = None, **env: str) -> Any:
    """The model a deployed function builds from its environment, pointed at ``double``."""
    llm = choose_llm(
        {"GEMINI_API_KEY": "test-key", "INBOXFLOW_GEMINI_BASE_URL": double.base_url, **env}
    )
    if sleeps is not None:
        llm.retry.sleep = sleeps
        llm.retry.jitter = lambda: 0.5
    return llm


# --- 1. model IDs at end of life -----------------------------------------------------------------


def test_1_the_default_models_answer_a_first_call(double):
    answer, usage = gemini(double).generate(CLASSIFY_INTENT, INPUTS)
    assert answer.category and usage.outcome == "ok"
    turn = gemini(double).chat(CONVERSATION, SPECS, ChatSettings(profile="pharmacy"))
    assert turn.usage.outcome == "ok"
    assert [r.status for r in double.calls()] == [200, 200]


def test_1_inboxflow_gemini_model_reaches_both_chat_roles(double):
    llm = gemini(double, INBOXFLOW_GEMINI_MODEL="gemini-3.6-flash")
    llm.generate(CLASSIFY_INTENT, INPUTS)
    # A profile that names its own model, and the assistant: the deployment's choice wins.
    llm.chat(CONVERSATION, SPECS, ChatSettings(model="gemini-3.8-flash", profile="pharmacy"))
    llm.chat(CONVERSATION, SPECS, ChatSettings(profile="assistant", role="assistant"))
    assert [r.model for r in double.calls()] == ["gemini-3.6-flash"] * 3


def test_1_a_shut_down_model_fails_with_its_replacement_named(double):
    with pytest.raises(LLMFailed, match=r"404 NOT_FOUND.*gemini-2\.5-pro is shut down; use"):
        gemini(double).chat(CONVERSATION, SPECS, ChatSettings(model="gemini-2.5-pro"))


# --- 2. thought signatures ---------------------------------------------------------------------


def test_2_a_gemini_3_loop_sends_each_call_back_with_its_signature(double):
    double.script(
        FunctionCallReply.of(("search_drugs", {"query": "paralen"})),
        Reply.raw("Paralen 500 is in stock."),
    )
    llm = gemini(double)
    settings = ChatSettings(model="gemini-3.8-flash", profile="pharmacy")
    first = llm.chat(CONVERSATION, SPECS, settings)
    (call,) = first.tool_calls
    # The conversation is checkpointed as JSON between the two turns.
    stored = json.loads(
        json.dumps({"role": "assistant", "content": "", "tool_calls": [call.as_dict()]})
    )
    result = {"role": "tool", "tool_call_id": call.id, "name": "search_drugs", "content": "{}"}

    second = llm.chat([*CONVERSATION, stored, result], SPECS, settings)

    assert second.text == "Paralen 500 is in stock."
    assert [r.status for r in double.calls()] == [200, 200]


def test_2_the_strict_double_refuses_a_call_without_its_signature(double):
    double.script(FunctionCallReply.of(("search_drugs", {"query": "paralen"})))
    llm = gemini(double)
    settings = ChatSettings(model="gemini-3.8-flash", profile="pharmacy")
    (call,) = llm.chat(CONVERSATION, SPECS, settings).tool_calls
    unsigned = {k: v for k, v in call.as_dict().items() if k != "thought_signature"}
    history = [
        *CONVERSATION,
        {"role": "assistant", "content": "", "tool_calls": [unsigned]},
        {"role": "tool", "tool_call_id": call.id, "name": "search_drugs", "content": "{}"},
    ]
    with pytest.raises(LLMFailed, match="missing a `thought_signature`"):
        llm.chat(history, SPECS, settings)


# --- 3. API version ----------------------------------------------------------------------------


def test_3_requests_go_to_the_version_that_has_their_fields(double):
    gemini(double).generate(CLASSIFY_INTENT, INPUTS)
    (request,) = double.calls()
    assert request.path.startswith("/v1beta/models/") and request.status == 200
    assert {"systemInstruction", "generationConfig"} <= request.body.keys()
    assert "responseSchema" in request.body["generationConfig"]


def test_3_the_strict_double_refuses_fields_v1_does_not_have(double):
    import urllib.request
    from urllib.error import HTTPError

    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {"responseMimeType": "application/json"},
    }
    request = urllib.request.Request(
        f"{double.base_url}/v1/models/gemini-3.8-flash:generateContent",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "x-goog-api-key": "test-key"},
    )
    with pytest.raises(HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 400
    assert 'Unknown name "responseMimeType"' in json.loads(refused.value.read())["error"]["message"]


# --- 4. timeouts and budgets -------------------------------------------------------------------


def test_4_max_tokens_without_content_is_asked_again_with_a_larger_budget(double):
    double.script(Reply.max_tokens(), FunctionCallReply.of(("search_drugs", {"query": "x"})))
    settings = ChatSettings(model="gemini-3.8-flash", max_tokens=1024, profile="pharmacy")

    turn = gemini(double).chat(CONVERSATION, SPECS, settings)

    assert [c.name for c in turn.tool_calls] == ["search_drugs"]
    budgets = [r.body["generationConfig"]["maxOutputTokens"] for r in double.calls()]
    assert budgets == [1024, 4096]
    assert "MAX_TOKENS" in turn.usage.errors[0]


def test_4_max_tokens_twice_is_a_failure_not_an_empty_answer(double):
    double.script(Reply.max_tokens(), Reply.max_tokens())
    settings = ChatSettings(model="gemini-3.8-flash", max_tokens=1024, profile="pharmacy")
    with pytest.raises(LLMFailed, match=r"MAX_TOKENS with no answer.*max_output_tokens"):
        gemini(double).chat(CONVERSATION, SPECS, settings)


def test_4_chat_turns_get_time_for_thinking(double):
    gemini(double).chat(CONVERSATION, SPECS, ChatSettings(profile="pharmacy"))
    gemini(double).generate(CLASSIFY_INTENT, INPUTS)
    chat, task = double.calls()
    assert int(chat.headers["x-server-timeout"]) >= 60
    assert int(task.headers["x-server-timeout"]) >= 25
    configured = gemini(double, INBOXFLOW_GEMINI_AGENT_TIMEOUT_S="90")
    configured.chat(CONVERSATION, SPECS, ChatSettings(profile="pharmacy"))
    assert double.calls()[-1].headers["x-server-timeout"] == "90"


# --- 5. empty text parts -----------------------------------------------------------------------


def test_5_the_schema_retry_after_an_empty_answer_sends_no_empty_part(double):
    double.script(Reply.raw(""))

    answer, usage = gemini(double).generate(CLASSIFY_INTENT, INPUTS)

    assert answer.category and usage.outcome == "schema_retry"
    retry = double.calls()[1]
    assert retry.status == 200
    assert all(p.get("text") for c in retry.body["contents"] for p in c["parts"] if "text" in p)


def test_5_an_empty_assistant_message_is_left_out_of_the_conversation(double):
    history = [
        *CONVERSATION,
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "?"},
    ]
    turn = gemini(double).chat(history, SPECS, ChatSettings(profile="pharmacy"))
    assert turn.usage.outcome == "ok" and double.calls()[0].status == 200


# --- 6. 429 and RetryInfo ----------------------------------------------------------------------


def test_6_a_429_waits_the_retry_delay_gemini_asks_for():
    sleeps = Sleeps()
    with start_gemini_double(api_key="test-key") as double:
        double.script(Reply.quota(retry_after_s=7))
        answer, usage = gemini(double, sleeps).generate(CLASSIFY_INTENT, INPUTS)
    assert answer.category and usage.attempts == 2
    assert sleeps == [7.0]


def test_6_a_retry_delay_beyond_the_deadline_fails_at_once_as_a_quota_error():
    sleeps = Sleeps()
    with start_gemini_double(api_key="test-key") as double:
        double.script(Reply.quota(retry_after_s=300))
        with pytest.raises(LLMFailed, match=r"quota exhausted.*retry after 300s") as failed:
            gemini(double, sleeps).generate(CLASSIFY_INTENT, INPUTS)
    assert failed.value.usage.attempts == 1 and sleeps == []


# --- 7. Vertex embeddings ----------------------------------------------------------------------


def test_7_vertex_embeddings_go_to_a_region_when_generation_is_global(double, monkeypatch):
    monkeypatch.setattr("google.auth.default", lambda *a, **k: (Credentials(token="t"), "p"))
    env = {
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_PROJECT": "inboxflow-prod",
        "GOOGLE_CLOUD_LOCATION": "global",
        "INBOXFLOW_GEMINI_BASE_URL": double.base_url,
    }
    embedder = choose_embedder(env)
    assert embedder is not None

    vectors = embedder.embed(["refund for order 1234"])

    assert len(vectors) == 1
    (request,) = [r for r in double.requests if r.action]
    assert request.status == 200
    assert "/locations/us-central1/" in request.path


# --- and what the issue adds: SAFETY, blocked prompts, thinking --------------------------------


@pytest.mark.parametrize(
    ("reply", "reason"),
    [(Reply.safety(), "finish reason SAFETY"), (Reply.blocked(), r"blocked the prompt \(SAFETY\)")],
)
def test_safety_stops_and_blocked_prompts_fail_clearly_without_retrying(double, reply, reason):
    double.script(reply)
    with pytest.raises(LLMFailed, match=reason) as failed:
        gemini(double).generate(CLASSIFY_INTENT, INPUTS)
    assert failed.value.usage.attempts == 1 and len(double.calls()) == 1


def test_the_thinking_level_is_a_setting(double):
    gemini(double, INBOXFLOW_GEMINI_TASK_THINKING_LEVEL="low").generate(CLASSIFY_INTENT, INPUTS)
    (request,) = double.calls()
    thinking = request.body["generationConfig"]["thinkingConfig"]
    # google-genai writes this one under its proto name; Google's JSON parser takes both.
    assert {k.replace("_l", "L"): v for k, v in thinking.items()} == {"thinkingLevel": "LOW"}
    with pytest.raises(ValueError, match="thinking_level 'lots' is not one of"):
        gemini(double, INBOXFLOW_GEMINI_TASK_THINKING_LEVEL="lots")

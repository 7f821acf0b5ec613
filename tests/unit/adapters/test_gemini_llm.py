"""GeminiModel through the real google-genai client against the local Gemini double."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from google.oauth2.credentials import Credentials

from inboxflow.adapters.gemini_llm import (
    DEFAULT_MODEL,
    GeminiModel,
    GeminiSettings,
    RetryPolicy,
    SchemaMismatch,
    parse_answer,
)
from inboxflow.adapters.gemini_roles import DEFAULTS
from inboxflow.dev.cli.local import sample_inbox
from inboxflow.dev.doubles.gemini_api import GeminiDouble, Reply, start_gemini_double
from inboxflow.graphs.pipeline.offline import classify_offline
from inboxflow.graphs.pipeline.tasks import CLASSIFY_INTENT, IntentAnswer
from inboxflow.mail import email_from_json, load_email_file, prompt_fields
from inboxflow.ports.llm import LLMFailed


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double(api_key="test-key") as running:
        yield running


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def model(double: GeminiDouble, sleeps: Sleeps, **settings: Any) -> GeminiModel:
    options: dict[str, Any] = {
        "mode": "api_key",
        "api_key": "test-key",
        "base_url": double.base_url,
    }
    options.update(settings)
    return GeminiModel(
        GeminiSettings(**options), retry=RetryPolicy(sleep=sleeps, jitter=lambda: 0.5)
    )


@pytest.fixture
def inputs() -> dict[str, str]:
    return prompt_fields(load_email_file(sample_inbox()[0]))


def test_good_answer_is_validated_and_usage_reported(double, sleeps, inputs):
    answer, usage = model(double, sleeps).generate(CLASSIFY_INTENT, inputs)

    assert isinstance(answer, IntentAnswer)
    assert answer == classify_offline(inputs)  # the double's oracle runs the task's heuristic
    assert usage.model == DEFAULT_MODEL
    assert usage.outcome == "ok" and usage.attempts == 1 and sleeps == []
    assert usage.input_tokens and usage.input_tokens > 100
    assert usage.output_tokens and usage.output_tokens > 5


def test_request_carries_system_instruction_schema_and_key(double, sleeps, inputs):
    model(double, sleeps).generate(CLASSIFY_INTENT, inputs)

    (request,) = double.calls()
    assert request.model == DEFAULT_MODEL and not request.vertex
    assert request.headers["x-goog-api-key"] == "test-key"
    body = request.body
    assert body["systemInstruction"]["parts"][0]["text"] == CLASSIFY_INTENT.system
    assert body["contents"][0]["parts"][0]["text"] == CLASSIFY_INTENT.render(inputs)
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    schema = config["responseSchema"]
    assert schema["required"] == ["category", "confidence"]
    assert schema["properties"]["needs_reply"]["type"] == "BOOLEAN"
    assert "needs_reply is false only for a courtesy message" in CLASSIFY_INTENT.render(inputs)
    assert schema["properties"]["category"]["enum"] == [
        "inquiry",
        "meeting_request",
        "complaint",
        "follow_up",
        "spam",
        "other",
    ]
    assert "tools" not in body


def test_gemini_can_say_a_courtesy_message_needs_no_reply(double, sleeps):
    thanks = email_from_json(
        {"from": "a@kestrel-logistics.com", "subject": "Re: Pricing", "body": "Thanks, all set!"}
    )
    answer, _ = model(double, sleeps).generate(CLASSIFY_INTENT, prompt_fields(thanks))
    assert answer.needs_reply is False  # through google-genai's schema and parsing


def test_429_then_success_is_retried_with_backoff(double, sleeps, inputs):
    double.script(Reply.error(429))

    answer, usage = model(double, sleeps).generate(CLASSIFY_INTENT, inputs)

    assert answer.category == "inquiry"
    assert usage.outcome == "retried" and usage.attempts == 2
    assert usage.errors and usage.errors[0].startswith("429 RESOURCE_EXHAUSTED")
    assert sleeps == [0.75]  # base 1 s, jitter 0.5 -> 1 * (0.5 + 0.25)
    assert [r.status for r in double.calls()] == [429, 200]


def test_500_three_times_fails_with_the_reason_after_three_attempts(double, sleeps, inputs):
    double.script(Reply.error(500), Reply.error(503), Reply.error(500))

    with pytest.raises(LLMFailed) as failure:
        model(double, sleeps).generate(CLASSIFY_INTENT, inputs)

    message = str(failure.value)
    assert message.startswith("classify_intent: Gemini unavailable after 3 attempts: 500 INTERNAL")
    assert failure.value.usage.attempts == 3 and failure.value.usage.outcome == "failed"
    assert len(double.calls()) == 3
    assert sleeps == [0.75, 1.5]  # exponential: 1 s then 2 s, each scaled by the jitter


def test_jitter_spreads_the_backoff_between_half_and_full_delay():
    low = RetryPolicy(base_s=1.0, jitter=lambda: 0.0)
    high = RetryPolicy(base_s=1.0, jitter=lambda: 0.999)
    assert [low.delay(n) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert [round(high.delay(n), 2) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert RetryPolicy(base_s=4.0, max_s=5.0, jitter=lambda: 0.999).delay(3) < 5.0


def test_timeout_is_retried(double, sleeps, inputs):
    double.script(Reply.slow(1.5))

    roles = {**DEFAULTS, "task": replace(DEFAULTS["task"], timeout_s=0.3)}
    answer, usage = model(double, sleeps, roles=roles).generate(CLASSIFY_INTENT, inputs)

    assert answer.category == "inquiry"
    assert usage.attempts == 2 and usage.outcome == "retried"
    assert usage.errors[0].startswith("timeout")


def test_network_error_is_retried_then_reported(sleeps, inputs):
    with start_gemini_double() as gone:
        url = gone.base_url
    settings = GeminiSettings(mode="api_key", api_key="k", base_url=url)
    llm = GeminiModel(settings, retry=RetryPolicy(sleep=sleeps, jitter=lambda: 0.5))

    with pytest.raises(LLMFailed, match="unavailable after 3 attempts: network error"):
        llm.generate(CLASSIFY_INTENT, inputs)
    assert len(sleeps) == 2


def test_client_error_is_not_retried(double, sleeps, inputs):
    llm = model(double, sleeps, api_key="wrong-key")

    with pytest.raises(
        LLMFailed, match="refused the request: 400 INVALID_ARGUMENT: API key not valid"
    ):
        llm.generate(CLASSIFY_INTENT, inputs)
    assert len(double.calls()) == 1 and sleeps == []


def test_invalid_json_is_fixed_on_the_schema_retry(double, sleeps, inputs):
    double.script(Reply.raw('{"category": "inquiry", "confidence": '))

    answer, usage = model(double, sleeps).generate(CLASSIFY_INTENT, inputs)

    assert answer == classify_offline(inputs)
    assert usage.outcome == "schema_retry" and usage.attempts == 2
    retry = double.calls()[1].body["contents"]
    assert [turn["role"] for turn in retry] == ["user", "model", "user"]
    assert retry[1]["parts"][0]["text"] == '{"category": "inquiry", "confidence": '
    correction = retry[2]["parts"][0]["text"]
    assert "did not match the required JSON schema: not valid JSON" in correction
    prompt_tokens = len(CLASSIFY_INTENT.render(inputs)) // 4
    assert usage.input_tokens and usage.input_tokens >= 2 * prompt_tokens  # both calls counted


def test_schema_violation_twice_is_a_step_error(double, sleeps, inputs):
    bad = {"category": "urgent", "confidence": 1.7}
    double.script(Reply.json(bad), Reply.json(bad))

    with pytest.raises(LLMFailed) as failure:
        model(double, sleeps).generate(CLASSIFY_INTENT, inputs)

    message = str(failure.value)
    assert message.startswith(
        "classify_intent: output did not match schema: category: Input should be"
    )
    assert "confidence: Input should be less than or equal to 1" in message
    assert failure.value.usage.attempts == 2
    correction = double.calls()[1].body["contents"][2]["parts"][0]["text"]
    assert "category: Input should be 'inquiry'" in correction


def test_per_task_model_override(double, sleeps, inputs):
    settings = GeminiSettings.from_env(
        {
            "GEMINI_API_KEY": "test-key",
            "INBOXFLOW_GEMINI_BASE_URL": double.base_url,
            "INBOXFLOW_GEMINI_MODEL": "gemini-flash-latest",
            "INBOXFLOW_GEMINI_MODEL_CLASSIFY_INTENT": "gemini-2.5-flash-lite",
        }
    )
    assert settings is not None
    llm = GeminiModel(settings, retry=RetryPolicy(sleep=sleeps))

    _, usage = llm.generate(CLASSIFY_INTENT, inputs)

    assert usage.model == "gemini-2.5-flash-lite"
    assert double.calls()[0].model == "gemini-2.5-flash-lite"
    assert llm.name == "gemini-flash-latest"
    assert settings.model_for("generate_response") == "gemini-flash-latest"


def test_vertex_mode_goes_to_the_vertex_path_with_a_bearer_token(double, sleeps, inputs):
    settings = GeminiSettings.from_env(
        {
            "GOOGLE_GENAI_USE_VERTEXAI": "true",
            "GOOGLE_CLOUD_PROJECT": "inboxflow-prod",
            "GOOGLE_CLOUD_LOCATION": "europe-west1",
            "INBOXFLOW_GEMINI_BASE_URL": double.base_url,
        }
    )
    assert settings is not None and settings.mode == "vertex"
    llm = GeminiModel(
        settings, retry=RetryPolicy(sleep=sleeps), credentials=Credentials(token="t0k")
    )

    answer, usage = llm.generate(CLASSIFY_INTENT, inputs)

    (request,) = double.calls()
    assert request.vertex
    assert request.path == (
        "/v1/projects/inboxflow-prod/locations/europe-west1/publishers/google/models/"
        f"{DEFAULT_MODEL}:generateContent"
    )
    assert request.headers["authorization"] == "Bearer t0k"
    assert "x-goog-api-key" not in request.headers
    assert answer.category == "inquiry" and usage.input_tokens


def test_settings_from_env_select_the_mode():
    assert GeminiSettings.from_env({}) is None
    assert GeminiSettings.from_env({"GOOGLE_CLOUD_PROJECT": "p"}) is None  # Vertex needs the switch
    assert GeminiSettings.from_env({"GOOGLE_GENAI_USE_VERTEXAI": "true"}) is None  # and a project
    key = GeminiSettings.from_env({"GEMINI_API_KEY": " abc "})
    assert key is not None and key.mode == "api_key" and key.api_key == "abc"
    preferred = GeminiSettings.from_env({"GEMINI_API_KEY": "a", "GOOGLE_API_KEY": "b"})
    assert preferred is not None and preferred.api_key == "b"  # as the SDK does
    vertex = GeminiSettings.from_env(
        {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_CLOUD_PROJECT": "p", "GEMINI_API_KEY": "a"}
    )
    assert vertex is not None and vertex.mode == "vertex" and vertex.location == "global"
    assert "abc" not in key.describe()


def test_parse_answer_accepts_fenced_json_and_explains_failures():
    fenced = '```json\n{"category": "spam", "confidence": 0.9}\n```'
    assert parse_answer(IntentAnswer, fenced).category == "spam"
    with pytest.raises(SchemaMismatch, match=r"empty answer \(finish reason SAFETY\)"):
        parse_answer(IntentAnswer, None, "SAFETY")
    with pytest.raises(SchemaMismatch, match="confidence: Field required"):
        parse_answer(IntentAnswer, json.dumps({"category": "spam"}))

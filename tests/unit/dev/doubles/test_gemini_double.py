"""The Gemini double itself: routes, auth, error bodies, and the task oracle."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from urllib.error import HTTPError

import pytest

from inboxflow.dev.cli.local import sample_inbox
from inboxflow.dev.doubles.gemini_api import (
    GeminiDouble,
    GenerateCall,
    Reply,
    TaskOracle,
    known_tasks,
    minimal_answer,
    start_gemini_double,
    template_pattern,
)
from inboxflow.graphs.pipeline.tasks import (
    CLASSIFY_INTENT,
    DECIDE_TOOLS,
    IntentAnswer,
    ToolDecision,
)
from inboxflow.mail import load_email_file, prompt_fields


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double(api_key="k") as running:
        yield running


def post(url: str, body: dict, headers: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except HTTPError as error:
        return error.code, json.loads(error.read())


def generate_body(prompt: str = "hi") -> dict:
    return {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}


def test_errors_use_googles_format(double):
    url = f"{double.base_url}/v1beta/models/gemini-3.8-flash:generateContent"
    assert post(url, generate_body()) == (
        403,
        {
            "error": {
                "code": 403,
                "message": "Method doesn't allow unregistered callers (callers without "
                "established identity). Please use API Key or other form of API consumer "
                "identity to call this API.",
                "status": "PERMISSION_DENIED",
            }
        },
    )
    status, body = post(url, generate_body(), {"x-goog-api-key": "nope"})
    assert status == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
    status, body = post(
        f"{double.base_url}/v1beta/models/x:countTokens", {}, {"x-goog-api-key": "k"}
    )
    assert status == 404 and body["error"]["status"] == "NOT_FOUND"
    double.script(Reply.error(429))
    status, body = post(url, generate_body(), {"x-goog-api-key": "k"})
    assert (status, body["error"]["status"]) == (429, "RESOURCE_EXHAUSTED")
    assert [r.status for r in double.requests] == [403, 400, 404, 429]


def test_generate_response_shape(double):
    status, body = post(
        f"{double.base_url}/v1beta/models/gemini-3.8-flash:generateContent",
        generate_body("an unknown prompt"),
        {"x-goog-api-key": "k"},
    )
    assert status == 200
    (candidate,) = body["candidates"]
    assert candidate["finishReason"] == "STOP" and candidate["content"]["role"] == "model"
    usage = body["usageMetadata"]
    assert usage["totalTokenCount"] == (
        usage["promptTokenCount"] + usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
    )
    assert usage["thoughtsTokenCount"] > 0  # a Gemini 3 model thinks
    assert body["modelVersion"] == "gemini-3.8-flash"


def test_template_pattern_reads_every_field_back():
    for path in sample_inbox():
        fields = prompt_fields(load_email_file(path))
        match = template_pattern(CLASSIFY_INTENT.template).fullmatch(CLASSIFY_INTENT.render(fields))
        assert match is not None, path.name
        recovered = match.groupdict()
        assert recovered == {k: v for k, v in fields.items() if k in recovered}, path.name
        assert {"body", "headers", "subject", "sender"} <= recovered.keys()


def test_oracle_knows_every_pipeline_task():
    names = {task.name for task in known_tasks()}
    assert {"classify_intent", "decide_tools", "generate_response"} <= names


def test_oracle_answers_unknown_prompts_with_a_minimal_schema_answer():
    oracle = TaskOracle([CLASSIFY_INTENT, DECIDE_TOOLS])
    call = GenerateCall(
        model="m",
        system="something else",
        prompt="Summarise this.",
        turns=[("user", "Summarise this.")],
        schema={
            "type": "OBJECT",
            "properties": {
                "title": {"type": "STRING"},
                "score": {"type": "INTEGER", "minimum": 1},
                "kind": {"type": "STRING", "enum": ["a", "b"]},
                "tags": {"type": "ARRAY", "items": {"type": "STRING"}},
            },
            "required": ["title", "score", "kind"],
        },
        body={},
    )
    assert oracle(call) == {"title": "", "score": 1, "kind": "a"}


def test_minimal_answer_validates_against_the_task_schemas():
    from google.genai import _transformers

    for model in (IntentAnswer, ToolDecision):
        schema = _transformers.t_schema(None, model).model_dump(exclude_none=True, mode="json")
        minimal = minimal_answer(schema)
        if model is IntentAnswer:
            model.model_validate(minimal)
        else:
            assert ToolDecision.model_validate(minimal).tools == []

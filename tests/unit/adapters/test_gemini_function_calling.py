"""Gemini function calling through google-genai against the Gemini REST double: tool specs
become function declarations, calls come back with ids (two in one turn), malformed calls
are sent back once, and the whole pharmacy loop runs on it."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.dev.doubles.gemini_api import (
    FunctionCallReply,
    GeminiDouble,
    Reply,
    start_gemini_double,
)
from inboxflow.graphs.agent.tools import AGENT_TOOLS
from inboxflow.ports.llm import ChatSettings, LLMFailed
from tests.harness.agent import build, reply_writes, sample, start

SETTINGS = ChatSettings(
    model="gemini-3.8-flash", temperature=0.3, max_tokens=512, profile="pharmacy"
)
SPECS = AGENT_TOOLS.only(["search_drugs", "create_draft"]).openai_specs()


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double(api_key="test-key") as running:
        yield running


def _model(double: GeminiDouble) -> GeminiModel:
    settings = GeminiSettings(mode="api_key", api_key="test-key", base_url=double.base_url)
    return GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None, jitter=lambda: 0.5))


CONVERSATION = [
    {"role": "system", "content": "You are a pharmacy assistant."},
    {"role": "user", "content": "Is Paralen 500 in stock?"},
]


def test_two_parallel_calls_come_back_in_order_with_ids(double):
    double.script(
        FunctionCallReply.of(
            ("search_drugs", {"query": "paralen"}),
            ("search_drugs", {"query": "ibalgin", "limit": 2}),
        )
    )
    turn = _model(double).chat(CONVERSATION, SPECS, SETTINGS)
    assert [(c.name, json.loads(c.arguments_json)) for c in turn.tool_calls] == [
        ("search_drugs", {"query": "paralen"}),
        ("search_drugs", {"query": "ibalgin", "limit": 2}),
    ]
    assert len({c.id for c in turn.tool_calls}) == 2 and all(
        c.id.startswith("call-") for c in turn.tool_calls
    )
    assert turn.usage.input_tokens and turn.usage.output_tokens and turn.usage.outcome == "ok"
    (request,) = double.calls()
    body = request.body
    assert request.model == "gemini-3.8-flash"
    declared = body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declared] == ["create_draft", "search_drugs"]
    assert declared[1]["parameters_json_schema"]["required"] == ["query"]
    assert body["systemInstruction"]["parts"][0]["text"] == "You are a pharmacy assistant."
    assert (
        body["generationConfig"]["temperature"] == 0.3
        and body["generationConfig"]["maxOutputTokens"] == 512
    )


def test_tool_results_of_parallel_calls_go_back_as_one_turn_with_their_ids(double):
    double.script(
        FunctionCallReply.of(("search_drugs", {"query": "paralen"}), ("search_drugs", {"q": 1})),
        Reply.raw("Paralen is in stock in Praha 2."),
    )
    first = _model(double).chat(CONVERSATION, SPECS, SETTINGS)
    a1, a2 = (call.as_dict() for call in first.tool_calls)
    history = [
        *CONVERSATION,
        {"role": "assistant", "content": "", "tool_calls": [a1, {**a2, "arguments_json": "{x"}]},
        {
            "role": "tool",
            "tool_call_id": a1["id"],
            "name": "search_drugs",
            "content": '{"drugs": []}',
        },
        {
            "role": "tool",
            "tool_call_id": a2["id"],
            "name": "search_drugs",
            "content": '{"error": "x"}',
        },
    ]
    turn = _model(double).chat(history, SPECS, SETTINGS)
    assert turn.tool_calls == () and turn.text == "Paralen is in stock in Praha 2."
    contents = double.calls()[1].body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    calls = [p["functionCall"] for p in contents[1]["parts"]]
    assert [(c["id"], c["args"]) for c in calls] == [
        (a1["id"], {"query": "paralen"}),
        (a2["id"], {}),
    ]
    # Gemini 3 signs the first call of a step; it goes back on that part, the same bytes.
    sent = contents[1]["parts"][0]["thoughtSignature"]  # google-genai writes URL-safe base64
    assert base64.urlsafe_b64decode(sent) == base64.b64decode(a1["thought_signature"])
    assert "thought_signature" not in a2 and "thoughtSignature" not in contents[1]["parts"][1]
    responses = [p["functionResponse"] for p in contents[2]["parts"]]
    assert [(r["id"], r["response"]) for r in responses] == [
        (a1["id"], {"drugs": []}),
        (a2["id"], {"error": "x"}),
    ]


@pytest.mark.parametrize(
    "malformed", [FunctionCallReply.malformed(), FunctionCallReply.of(("search_drugs", "{bad"))]
)
def test_a_malformed_call_is_sent_back_once_then_the_good_one_is_used(double, malformed):
    double.script(malformed, FunctionCallReply.of(("search_drugs", {"query": "paralen"})))
    turn = _model(double).chat(CONVERSATION, SPECS, SETTINGS)
    assert [c.name for c in turn.tool_calls] == ["search_drugs"]
    assert turn.usage.attempts == 2 and turn.usage.outcome == "schema_retry"
    assert "malformed function call" in turn.usage.errors[0]
    retry = double.calls()[1].body["contents"][-1]["parts"][0]["text"]
    assert retry.startswith("Your last function call was malformed")


def test_two_malformed_calls_fail_the_turn(double):
    double.script(FunctionCallReply.malformed(), FunctionCallReply.malformed())
    with pytest.raises(LLMFailed, match=r"malformed function call.*twice"):
        _model(double).chat(CONVERSATION, SPECS, SETTINGS)


def test_unavailable_gemini_fails_after_its_retries(double):
    double.script(Reply.error(503), Reply.error(503), Reply.error(503))
    with pytest.raises(LLMFailed, match="unavailable after 3 attempts") as caught:
        _model(double).chat(CONVERSATION, SPECS, SETTINGS)
    assert caught.value.usage.attempts == 3


def test_the_pharmacy_loop_on_gemini_through_the_double(double, tmp_path):
    patient = "jana.novakova@seznam.cz"
    double.script(
        Reply(),  # the safety screen at preprocess: the task oracle answers (nothing found)
        FunctionCallReply.of(
            ("search_drugs", {"query": "Paralen 500"}),
            ("manage_reservation", {"action": "check", "drug_name": "Paralen 500"}),
        ),
        FunctionCallReply.of(
            ("manage_reservation", {"action": "create", "drug_name": "Paralen 500"})
        ),
        FunctionCallReply.of(
            ("create_draft", {"to": patient, "subject": "Re: Paralen", "body": "Reserved."})
        ),
        Reply.raw("Reserved one pack and drafted a reply."),
    )
    runtime = build(tmp_path, llm=_model(double))
    trace_id = start(runtime, sample("21"))
    runtime.bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done", checkpoint.error
    state = checkpoint.state
    assert (
        state["iteration"] == 4
        and state["final_message"] == "Reserved one pack and drafted a reply."
    )
    assert [e["tool"] for e in state["tool_log"]] == [
        "search_drugs",
        "manage_reservation",
        "manage_reservation",
        "create_draft",
    ]
    assert [e["iteration"] for e in state["tool_log"]] == [1, 1, 2, 3]
    (draft,) = reply_writes(runtime.store, trace_id)
    assert draft["to"] == patient
    turns = sorted((d["iteration"], d["model"]) for _, d in runtime.store.list("llm_calls"))
    assert turns == [(i, "gemini-3.8-flash") for i in (1, 2, 3, 4)]
    assert all(d["input_tokens"] > 0 for _, d in runtime.store.list("llm_calls"))
    # Each later request carries the earlier calls' results, answered by id.
    last = double.calls()[-1].body["contents"]
    ids = [p["functionResponse"]["id"] for c in last for p in c["parts"] if "functionResponse" in p]
    assert len(ids) == 4 and all(i.startswith("call-") for i in ids)

"""The planner's guard ``not_a_quote`` (``graphs/planner/guards.py``): a claim or a cancellation
goes to the agency whatever the model plans. Driven by the Gemini REST double answering the
unsafe plan (a quote questionnaire to the customer), through google-genai."""

from __future__ import annotations

import json

import pytest

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.dev.cli.inspect import trace as trace_command
from inboxflow.dev.doubles.gemini_api import Reply, start_gemini_double
from inboxflow.graphs.planner.request_kind import not_a_quote
from inboxflow.services import make_store
from tests.harness.planner import build, checkpoint, sample, sent, start
from tests.harness.runtimes import embedded_settings

ASK_EVERYTHING = {
    "reasoning": "the customer wants insurance: ask for the quote's details",
    "customer_info": {},
    "action": "call_tool",
    "tool_name": "ask_customer",
    "args_json": json.dumps({"fields": ["license_number", "vin"]}),
    "request_review": False,
}


def _claim(body: str, subject: str = "Help please"):
    return sample("41").model_copy(
        update={"subject": subject, "body_text": body, "message_id": "claim-1@test"}
    )


@pytest.fixture
def gemini(tmp_path):
    with start_gemini_double(api_key="k") as double:
        settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
        model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))
        store = make_store(embedded_settings(tmp_path))  # where ``inboxflow trace`` looks
        yield double, build(tmp_path, store=store, llm=model)


def test_a_claim_reaches_the_agency_although_the_model_plans_a_questionnaire(
    gemini, tmp_path, capsys, monkeypatch
):
    double, runtime = gemini
    double.script(Reply.json(ASK_EVERYTHING))
    trace_id = start(
        runtime,
        _claim(
            "Somebody reversed into my car in the supermarket car park this morning. "
            "What do I need to send you to open a claim? Policy PA-77110."
        ),
    )
    done = checkpoint(runtime, trace_id)
    assert done.status == "needs_review", done.error
    assert done.state["planned_tool_inputs"]["tool_name"] == "request_human_review"
    assert sent(runtime, trace_id) == []  # no questionnaire went to the customer
    assert runtime.ports.approvals.pending() == []
    [planned] = [log for log in runtime.store.step_logs(trace_id) if log.step_name == "planner"]
    assert [g["guard"] for g in planned.guards] == ["not_a_quote"]
    assert "the model planned ask_customer" in planned.guards[0]["reason"]
    monkeypatch.setenv("COLUMNS", "300")
    trace_command(trace_id, at=None, as_json=False, dev=False, home=tmp_path)
    assert "guard not_a_quote" in capsys.readouterr().out


def test_a_quote_request_is_left_to_the_models_plan(gemini):
    double, runtime = gemini
    double.script(Reply.json(ASK_EVERYTHING))
    trace_id = start(
        runtime,
        _claim("Could you quote my 2016 Subaru Outback? I had one claim in 2021.", "Quote"),
    )
    done = checkpoint(runtime, trace_id)
    assert done.status == "waiting"
    assert done.state["planned_tool_inputs"]["tool_name"] == "ask_customer"
    assert all(log.guards == [] for log in runtime.store.step_logs(trace_id))


@pytest.mark.parametrize(
    "text",
    [
        "My car got stolen last night from the driveway. What happens now?",
        "I'd like to cancel my policy at the end of the month.",
        "Chci nahlásit škodu, včera mi někdo naboural auto.",
        "Ich möchte einen Schaden melden: Hagel auf dem Dach.",
        "Je voudrais déclarer un sinistre pour ma voiture.",
        "Necesito presentar un reclamo, me chocaron ayer.",
        "昨日の事故の報告をしたいです。",
    ],
)
def test_claims_and_cancellations_in_several_languages_are_not_quote_requests(text):
    assert not_a_quote(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Please quote my 2019 Kia Soul; one accident in 2022 (someone hit my bumper).",
        "Necesito una cotización para mi auto, tuve un siniestro hace 3 años.",
        "Could you insure my car? Details below.",
    ],
)
def test_a_quote_request_that_mentions_a_past_accident_is_a_quote_request(text):
    assert not_a_quote(text) is None


OPEN_THE_QUOTE = {
    "reasoning": "the customer has a car: open a quote",
    "customer_info": {"first_name": "Sam", "last_name": "Okafor", "zip_code": "60647"},
    "action": "call_tool",
    "tool_name": "quote_initiate",
    "args_json": json.dumps(
        {
            "first_name": "Sam",
            "last_name": "Okafor",
            "email": "sam@example.com",
            "date_of_birth": "1980-01-02",
            "zip_code": "60647",
        }
    ),
    "request_review": False,
}
FINISH = {
    "reasoning": "nothing to do",
    "customer_info": {},
    "action": "finish",
    "request_review": False,
}


@pytest.mark.parametrize(
    "plan", [OPEN_THE_QUOTE, ASK_EVERYTHING, FINISH], ids=lambda p: p["action"]
)
@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("We sold the Camry, take it off the policy please.", "cover change"),
        ("Wir haben den Golf verkauft, bitte aus dem Vertrag DE-554120 streichen.", "cover change"),
        ("Ontem bateram no meu Fiat Uno estacionado.", "claim"),
        ("Chci vypovědět smlouvu 7781230.", "cancellation"),
        ("Mi avete addebitato due volte la rata della polizza IT-99812.", "billing"),
    ],
)
def test_a_model_that_plans_a_quote_cannot_route_past_the_guard(gemini, plan, body, kind):
    double, runtime = gemini
    double.script(Reply.json(plan))
    trace_id = start(runtime, _claim(body))
    done = checkpoint(runtime, trace_id)
    assert done.status == "needs_review", done.error
    assert done.state["planned_tool_inputs"]["tool_name"] == "request_human_review"
    assert kind in done.state["planned_tool_inputs"]["args"]["reason"]
    assert done.state["quote_session"] is None  # no quote was opened
    assert sent(runtime, trace_id) == []
    [planned] = [log for log in runtime.store.step_logs(trace_id) if log.step_name == "planner"]
    assert [g["guard"] for g in planned.guards] == ["not_a_quote"]

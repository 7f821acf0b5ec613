"""The planner through google-genai (the Gemini API double): its structured decision fits
Gemini's response schema, and a full quote runs with every planning step through the API."""

from __future__ import annotations

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.dev.doubles.gemini_api import GenerateCall, TaskOracle, start_gemini_double
from inboxflow.graphs.planner.tasks import PLAN_TASK
from tests.harness.planner import approve_all, build, checkpoint, sample, sent, start


class Recorder:
    """The task oracle, keeping the planner's prompts."""

    def __init__(self) -> None:
        self.oracle = TaskOracle()
        self.prompts: list[str] = []

    def __call__(self, call: GenerateCall) -> object:
        if call.system.strip() == PLAN_TASK.system:
            self.prompts.append(call.prompt)
        return self.oracle(call)


def test_a_full_quote_with_the_planner_on_gemini(tmp_path):
    recorder = Recorder()
    with start_gemini_double(responder=recorder) as double:
        settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
        model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))
        runtime = build(tmp_path, llm=model)
        trace_id = start(runtime, sample("42"))
        assert approve_all(runtime, trace_id) == [
            "add_vehicle",
            "get_rate",
            "prepare_final_summary",
        ]
    done = checkpoint(runtime, trace_id)
    assert done.status == "done", done.error
    assert len(recorder.prompts) == 6  # one planning step per action, then finish
    assert '"quote_initiate"' in recorder.prompts[0]  # the tools' schemas are in the prompt
    assert "Priya Shah" in recorder.prompts[0]
    [summary] = sent(runtime, trace_id)
    assert "Premium:" in summary["body"]
    calls = [c for log in runtime.store.step_logs(trace_id) for c in log.llm_calls]
    assert [c["task"] for c in calls].count("screen") == 1  # the first email, once
    assert {c["task"] for c in calls} == {"planner_next_action", "screen"}
    assert all(c["model"] != "offline-heuristics" for c in calls)


def test_the_model_s_customer_info_meets_the_same_checks(tmp_path):
    """Gemini's structured answer gives a VIN whose check digit fails, a state by its name and
    a four-digit ZIP: the VIN is refused (never taken, asked for again), the state becomes its
    code, the ZIP is not taken."""
    import json

    from inboxflow.dev.doubles.gemini_api import Reply
    from tests.harness.planner import BAD_VIN, state

    answer = {
        "reasoning": "the customer gave a VIN",
        "customer_info": {"vin": BAD_VIN, "license_state": "Illinois", "zip_code": "6064"},
        "action": "call_tool",
        "tool_name": "ask_customer",
        "args_json": json.dumps({"fields": ["vin"]}),
        "request_review": False,
    }
    with start_gemini_double(api_key="k") as double:
        double.script(Reply.json(answer))
        settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
        model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))
        runtime = build(tmp_path, llm=model)
        trace_id = start(runtime, sample("41"))
    info = state(runtime, trace_id)["customer_info"]
    assert info["vin"] is None and info["rejected"] == {"vin": [BAD_VIN]}
    assert (info["license_state"], info["zip_code"]) == ("IL", None)

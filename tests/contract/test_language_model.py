"""Contract of the LanguageModel port, run against every adapter.

The inputs are the ones the pipeline really sends: the sample inbox is run
once on the offline model with every task call recorded, then each adapter
answers each recorded call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.harness.pipeline import build, sample_emails

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.dev.doubles.gemini_api import known_tasks, start_gemini_double
from inboxflow.ports.llm import LanguageModel, LLMTask, LLMUsage, Out

PIPELINE_TASKS = {"classify_intent", "decide_tools", "generate_response", "screen"}
"""The pipeline's tasks, and the safety screen every graph runs at its first node."""

Call = tuple[LLMTask[Any], dict[str, Any]]


class RecordingModel(OfflineModel):
    """The offline model, remembering each task call it answers."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        self.calls.append((task, dict(inputs)))
        return super().generate(task, inputs)


@pytest.fixture(scope="module")
def pipeline_calls(tmp_path_factory: pytest.TempPathFactory) -> list[Call]:
    runtime = build(Path(tmp_path_factory.mktemp("contract")))
    recorder = RecordingModel()
    runtime.llm = recorder
    for email in sample_emails():
        runtime.start("pipeline", {"email": email})
        runtime.bus.drain()  # type: ignore[attr-defined]
    return recorder.calls


@pytest.fixture(params=["offline", "gemini-double"])
def language_model(request: pytest.FixtureRequest) -> Iterator[LanguageModel]:
    if request.param == "offline":
        yield OfflineModel()
        return
    with start_gemini_double() as double:
        settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
        yield GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))


def test_the_samples_exercise_every_pipeline_task(pipeline_calls):
    assert {task.name for task, _ in pipeline_calls} == PIPELINE_TASKS
    assert {task.name for task in known_tasks()} >= PIPELINE_TASKS


def test_every_offline_fallback_validates_against_its_schema(pipeline_calls):
    for task, inputs in pipeline_calls:
        answer = task.offline(inputs)
        assert isinstance(answer, task.output_model), task.name
        as_json = answer.model_dump_json()
        assert task.output_model.model_validate_json(as_json) == answer, task.name
        assert task.offline(inputs) == answer, f"{task.name} is not deterministic"


def test_every_task_declares_what_a_real_model_needs():
    for task in known_tasks():
        assert task.system, f"{task.name} has no system instruction"
        assert task.output_model.model_json_schema()["type"] == "object", task.name
        assert "$" in task.template, f"{task.name} has no inputs in its template"


def test_answers_validate_and_report_usage(language_model, pipeline_calls):
    for task, inputs in pipeline_calls:
        answer, usage = language_model.generate(task, inputs)
        assert isinstance(answer, task.output_model), task.name
        assert usage.model and usage.outcome == "ok" and usage.attempts == 1
        assert answer == task.offline(inputs)  # the double answers as the heuristics would

"""The support graph through google-genai (the Gemini API double): translated for the agents,
answered in the customer's own language."""

from __future__ import annotations

from typing import Any

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.dev.doubles.gemini_api import GenerateCall, TaskOracle, start_gemini_double
from inboxflow.graphs.support.language import TRANSLATE
from inboxflow.graphs.support.specialist import SPECIALIST
from tests.support_harness import build, run, sample

ENGLISH = "How can I export a dashboard to PDF? I want to send it to my team every Monday."
SPANISH_REPLY = "Hola Lucía: en el panel, abra Compartir > Exportar a PDF y programe el envío."


class SupportDesk:
    """The task oracle, with a model that translates and writes Spanish for two tasks."""

    def __init__(self) -> None:
        self.oracle = TaskOracle()
        self.specialist_prompts: list[str] = []

    def __call__(self, call: GenerateCall) -> Any:
        if call.system.strip() == TRANSLATE.system:
            return {"text": ENGLISH, "translated": True, "note": ""}
        answer = self.oracle(call)
        if call.system.strip() == SPECIALIST.system:
            self.specialist_prompts.append(call.prompt)
            answer = answer.model_copy(
                update={"suggested_response": SPANISH_REPLY, "confidence": 0.92}
            )
        return answer


def test_a_spanish_question_is_translated_for_the_agents_and_answered_in_spanish(tmp_path):
    desk = SupportDesk()
    with start_gemini_double(responder=desk) as double:
        settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
        model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))
        runtime = build(tmp_path, llm=model)
        state = run(runtime, sample("02"))

    translation = state["translation"]
    assert translation["original_language"] == "es" and not translation["is_english"]
    assert translation["translated_messages"] == [ENGLISH]
    assert "¿Cómo puedo exportar" in translation["original_messages"][0]
    [prompt] = desk.specialist_prompts
    assert "customer's language (es)" in prompt and ENGLISH in prompt
    assert state["status"] == "done" and state["act"]["status"] == "drafted"
    [draft] = runtime.services["workspace"].drafts()
    assert draft["body"] == SPANISH_REPLY
    runtime.store.close()

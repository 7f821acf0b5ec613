"""The support graph through google-genai (the Gemini API double): Spanish and Thai messages are
translated for the agents and answered in the customer's own language."""

from __future__ import annotations

from typing import Any

import pytest

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.dev.doubles.gemini_api import GenerateCall, TaskOracle, start_gemini_double
from inboxflow.graphs.support.tasks import SPECIALIST, TRANSLATE
from tests.harness.support import build, run, sample

SPANISH = (
    "How can I export a dashboard to PDF? I want to send it to my team every Monday.",
    "Hola Lucía: en el panel, abra Compartir > Exportar a PDF y programe el envío.",
)
THAI = (
    "We need to add 20 more seats to our account before the end of this month. How do we do "
    "that, and how will it change our next invoice?",
    "เรียนทีม Siam Retail Group: เพิ่มที่นั่งได้ที่ การตั้งค่า > การเรียกเก็บเงิน > ที่นั่ง "
    "ค่าใช้จ่ายจะคิดตามสัดส่วนในใบแจ้งหนี้รอบถัดไปครับ",
)


class SupportDesk:
    """The task oracle, with a model that translates and writes the customer's language."""

    def __init__(self, english: str, reply: str) -> None:
        self.oracle = TaskOracle()
        self.english, self.reply = english, reply
        self.specialist_prompts: list[str] = []
        self.translated: list[str] = []

    def __call__(self, call: GenerateCall) -> Any:
        if call.system.strip() == TRANSLATE.system:
            self.translated.append(call.prompt)
            return {"text": self.english, "translated": True, "note": ""}
        answer = self.oracle(call)
        if call.system.strip() == SPECIALIST.system:
            self.specialist_prompts.append(call.prompt)
            answer = answer.model_copy(
                update={
                    "suggested_response": self.reply,
                    "confidence": 0.92,
                    "recommended_action": "auto_respond",
                }
            )
        return answer


@pytest.mark.parametrize(
    ("prefix", "language", "original", "english", "reply", "specialist", "answered"),
    [
        ("02", "es", "¿Cómo puedo exportar", *SPANISH, "technical", True),
        # the model is sure (0.92), but the nearest pricing article is not relevant enough
        ("07", "th", "เราต้องการเพิ่มที่นั่งอีก 20 ที่นั่ง", *THAI, "billing", False),
    ],
    ids=["spanish", "thai"],
)
def test_a_foreign_message_is_translated_for_the_agents_and_answered_in_its_language(
    tmp_path, prefix, language, original, english, reply, specialist, answered
):
    desk = SupportDesk(english, reply)
    with start_gemini_double(responder=desk) as double:
        settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
        model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))
        runtime = build(tmp_path, llm=model)
        state = run(runtime, sample(prefix))

    translation = state["translation"]
    assert translation["original_language"] == language and not translation["is_english"]
    assert translation["translated_messages"] == [english]
    assert original in translation["original_messages"][0]
    assert f"from {language} into English" in desk.translated[0] and original in desk.translated[0]
    [prompt] = desk.specialist_prompts
    assert f"customer's language ({language})" in prompt and english in prompt
    steps = [log.step_name for log in runtime.store.step_logs(state["trace_id"])]
    assert specialist in steps  # the agents routed on the English text
    if answered:
        assert state["status"] == "done" and state["act"]["status"] == "drafted"
        [draft] = runtime.ports.workspace.drafts()
        assert draft["body"] == reply
    else:
        assert state["status"] == "waiting" and runtime.ports.workspace.drafts() == []
        pause = runtime.store.get_trace(state["trace_id"]).pause
        approval = runtime.ports.approvals.get(pause["approval_id"])
        assert any("not relevant enough" in r for r in approval.context["reasons"])
        assert approval.payload["reply"] == reply  # the reviewer sees the model's reply
    runtime.store.close()

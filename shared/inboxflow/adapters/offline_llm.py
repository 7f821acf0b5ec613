"""The offline deterministic model: each task's own heuristic, no network."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..ports.llm import (
    AgentTurn,
    ChatMessage,
    ChatSettings,
    LanguageModel,
    LLMTask,
    LLMUsage,
    Out,
)


class OfflineModel(LanguageModel):
    """Runs ``task.offline``; same inputs, same answer, every time."""

    name = "offline-heuristics"

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        output = task.offline(inputs)
        return task.output_model.model_validate(output.model_dump()), LLMUsage(model=self.name)

    def chat(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], settings: ChatSettings
    ) -> AgentTurn:
        """Play the profile's scripted policy (``settings.offline``); without one, just answer."""
        usage = LLMUsage(model=self.name)
        if settings.offline is None:
            return AgentTurn(
                text=f"(offline model: no scripted policy for profile {settings.profile!r})",
                usage=usage,
            )
        turn = settings.offline(list(messages), list(tools))
        return replace(turn, usage=usage)

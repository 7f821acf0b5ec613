"""The offline deterministic model: each task's own heuristic, no network."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ports.llm import LanguageModel, LLMTask, LLMUsage, Out


class OfflineModel(LanguageModel):
    """Runs ``task.offline``; same inputs, same answer, every time."""

    name = "offline-heuristics"

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        output = task.offline(inputs)
        return task.output_model.model_validate(output.model_dump()), LLMUsage(model=self.name)

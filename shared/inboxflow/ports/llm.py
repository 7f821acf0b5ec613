"""The LLM port: each task the graphs use is one object, run by a model adapter."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from string import Template
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

Out = TypeVar("Out", bound=BaseModel)


@dataclass(frozen=True)
class LLMTask(Generic[Out]):
    """One LLM task: prompt template, output schema, offline fallback.

    Attributes:
        name: task name as logged on the step (``classify_intent``...).
        output_model: pydantic model the answer must validate against.
        template: ``string.Template`` prompt; ``$field`` placeholders from the inputs.
        offline: deterministic heuristic producing the same schema without a model.
        system: system instruction for real models.
    """

    name: str
    output_model: type[Out]
    template: str
    offline: Callable[[Mapping[str, Any]], Out]
    system: str = ""

    def render(self, inputs: Mapping[str, Any]) -> str:
        """The prompt for ``inputs`` (missing placeholders are left as they are)."""
        return Template(self.template).safe_substitute({k: str(v) for k, v in inputs.items()})


@dataclass
class LLMUsage:
    """What one call cost, as far as the model reports it."""

    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class LanguageModel(ABC):
    """A model that answers LLM tasks with validated, structured output."""

    name: str = "model"

    @abstractmethod
    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        """Answer ``task`` for ``inputs``.

        Raises:
            RetryableError: a transient failure (timeout, 429, 5xx).
            NodeFailed: the output cannot be made to fit the schema.
        """

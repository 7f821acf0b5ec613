"""The LLM port: each task the graphs use is one object, run by a model adapter."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from string import Template
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from ..errors import NodeFailed

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


def offline_heuristic(reference: str) -> Callable[..., Any]:
    """The offline heuristic (or scripted chat policy) at ``reference``
    (``"package.module:function"``), imported on its first call.

    A graph's ``tasks.py`` names its heuristics this way, as the graph registry names
    graphs: the task module never imports ``offline.py`` (which imports the task's
    output schemas), so a deployment on Gemini never loads the heuristics' tables and
    the two modules form no import cycle.
    """
    module_name, _, attribute = reference.partition(":")

    def run(*args: Any) -> Any:
        return getattr(importlib.import_module(module_name), attribute)(*args)

    run.__qualname__ = run.__name__ = attribute
    return run


LLMOutcome = str
"""``ok``, ``retried`` (transient errors, then an answer), ``schema_retry`` (an answer
that failed validation, then a valid one) or ``failed``."""


@dataclass
class LLMUsage:
    """What one task call cost and how it went, as far as the model reports it.

    Attributes:
        model: model that answered (``gemini-3.8-flash``, ``offline-heuristics``).
        input_tokens: prompt tokens over all attempts, when reported.
        output_tokens: answer tokens over all attempts, when reported.
        attempts: requests sent (transient retries and the schema retry included).
        outcome: see ``LLMOutcome``.
        errors: what went wrong on the attempts that were retried, oldest first.
        extra: anything else the adapter reports (thinking tokens...).
    """

    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    attempts: int = 1
    outcome: LLMOutcome = "ok"
    errors: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class LLMFailed(NodeFailed):
    """A task call failed for good; ``usage`` says what was tried (logged on the step).

    Raised when the output still fails its schema after the one schema retry,
    when transient failures outlast the retries, and on permanent API errors.
    """

    def __init__(self, message: str, usage: LLMUsage) -> None:
        super().__init__(message)
        self.usage = usage


class LanguageModel(ABC):
    """A model that answers LLM tasks with validated, structured output."""

    name: str = "model"

    @abstractmethod
    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        """Answer ``task`` for ``inputs``.

        Returns:
            The validated answer and what the call cost.

        Raises:
            LLMFailed: the output cannot be made to fit the schema, or the model
                stayed unavailable through the adapter's own retries (the step
                fails and the trace goes to ``needs_review`` with the reason).
            RetryableError: a transient failure the adapter leaves to the runtime.
        """

    def chat(
        self,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]],
        settings: ChatSettings,
    ) -> AgentTurn:
        """One agent turn with function calling.

        Args:
            messages: the conversation so far (see ``ChatMessage``).
            tools: the tools offered, in the OpenAI function-calling format
                (``{"type": "function", "function": {name, description, parameters}}``).
            settings: model, temperature, token budget, profile.

        Returns:
            The model's text and the tool calls it asks for.

        Raises:
            LLMFailed: the model failed for good (after the adapter's retries),
                or it does not support function calling.
            RetryableError: a transient failure the adapter leaves to the caller.
        """
        raise chat_unsupported(self)


# --- function calling (the agent graph) ------------------------------------------------

ChatMessage = Mapping[str, Any]
"""One message of an agent conversation, OpenAI style: ``role`` (``system``, ``user``,
``assistant``, ``tool``), ``content``; an assistant's ``tool_calls`` (``[{id, name,
arguments_json, thought_signature?}]``); a tool result's ``tool_call_id`` and ``name``."""


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for.

    Attributes:
        id: the call's id (the model's, or one the adapter made up): results answer it.
        name: the tool's name.
        arguments_json: the arguments as the model wrote them (may not be valid JSON).
        thought_signature: the model's opaque signature of its reasoning for this call
            (base64), when it gave one: part of the conversation, sent back with the
            call on the next turn (Gemini 3 refuses a turn without it).
    """

    id: str
    name: str
    arguments_json: str
    thought_signature: str | None = None

    def as_dict(self) -> dict[str, str]:
        """``{id, name, arguments_json}`` (and ``thought_signature``), as kept in the conversation."""
        kept = {"id": self.id, "name": self.name, "arguments_json": self.arguments_json}
        if self.thought_signature:
            kept["thought_signature"] = self.thought_signature
        return kept


@dataclass(frozen=True)
class AgentTurn:
    """The model's answer in one turn: text, and the tool calls to run (none: it is done).

    Attributes:
        text: what the model said.
        tool_calls: the calls to run, in order (parallel calls of one turn).
        usage: what the call cost.
    """

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: LLMUsage = field(default_factory=lambda: LLMUsage(model="unknown"))


ChatPolicy = Callable[[list[ChatMessage], list[dict[str, Any]]], AgentTurn]
"""A deterministic stand-in for a model in one agent profile (the offline model plays it)."""


@dataclass(frozen=True)
class ChatSettings:
    """How to ask for one agent turn.

    Attributes:
        model: the model the caller's configuration names ("": its role's model).
        temperature: sampling temperature.
        max_tokens: answer budget, thinking included (None: its role's).
        profile: the agent profile asking (for logs and the offline policy).
        offline: the profile's scripted policy, played by the offline model.
        role: ``agent`` (agent profiles) or ``assistant``: which role's settings apply.
    """

    model: str = ""
    temperature: float = 0.3
    max_tokens: int | None = None
    profile: str = ""
    offline: ChatPolicy | None = None
    role: Literal["agent", "assistant"] = "agent"


def chat_unsupported(model: LanguageModel) -> LLMFailed:
    """The error a model without function calling raises from ``chat``."""
    return LLMFailed(
        f"model {model.name} does not support function calling",
        LLMUsage(model=model.name, outcome="failed"),
    )

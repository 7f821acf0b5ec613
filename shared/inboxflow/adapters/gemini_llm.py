"""Gemini through ``google-genai``: structured output into each task's pydantic schema.

Configuration (environment, read by ``GeminiSettings.from_env``):

- API-key mode: ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` (the SDK prefers the latter).
- Vertex mode: ``GOOGLE_GENAI_USE_VERTEXAI=true`` with ``GOOGLE_CLOUD_PROJECT`` and
  ``GOOGLE_CLOUD_LOCATION`` (default ``global``); credentials from ADC.
- Models, locations, timeouts, budgets and thinking per role (``task``, ``assistant``,
  ``agent``, ``embedding``): see ``gemini_roles``. ``INBOXFLOW_GEMINI_MODEL`` sets every
  role but the embedder; ``INBOXFLOW_GEMINI_MODEL_<TASK>`` one task
  (``INBOXFLOW_GEMINI_MODEL_GENERATE_RESPONSE=gemini-3.8-flash``).
- ``INBOXFLOW_GEMINI_BASE_URL``: send requests there instead (the local Gemini double).

Requests go to ``v1beta`` (Gemini API) or ``v1`` (Vertex), named explicitly: see
``gemini_roles.DEVELOPER_API_VERSION``.

``google.genai`` is imported when a ``GeminiModel`` is built, never when this
module is imported: node functions that never call a model do not pay for it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from ..ports.llm import (
    AgentTurn,
    ChatMessage,
    ChatSettings,
    LanguageModel,
    LLMFailed,
    LLMTask,
    LLMUsage,
    Out,
)
from .built_per_key import BuiltPerKey
from .gemini_roles import (
    DEFAULTS,
    DEVELOPER_API_VERSION,
    TASK_MODEL,
    VERTEX_API_VERSION,
    Role,
    RoleSettings,
    resolve_roles,
)
from .gemini_transport import (
    GeminiCallFailed,
    GeminiQuotaExceeded,
    RetryPolicy,
    StopProblem,
    add_usage,
    budget_for_retry,
    finish_reason,
    larger_budget,
    request_options,
    retry_delay,
    send_with_retries,
    stop_problem,
    thinking_config,
    transient_reason,
)

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.genai import Client

log = logging.getLogger("inboxflow.llm")

DEFAULT_MODEL = TASK_MODEL
"""The tasks' model unless configured (``gemini_roles`` holds every default)."""


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class GeminiSettings:
    """How to reach Gemini and what each role asks for.

    Attributes:
        mode: ``api_key`` (Gemini Developer API) or ``vertex`` (Vertex AI).
        api_key: the key in API-key mode.
        project: Google Cloud project in Vertex mode.
        location: Vertex location of the generating roles without their own.
        base_url: endpoint override (the local double); None for Google's.
        task_models: per-task model overrides, by task name.
        roles: each role's model, location, timeouts, budget and thinking.
    """

    mode: Literal["api_key", "vertex"]
    api_key: str | None = None
    project: str | None = None
    location: str | None = None
    base_url: str | None = None
    task_models: tuple[tuple[str, str], ...] = ()
    roles: Mapping[Role, RoleSettings] = field(default_factory=lambda: dict(DEFAULTS))

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str], configured: Mapping[str, Any] | None = None
    ) -> GeminiSettings | None:
        """The settings ``environ`` configures, or None when it configures no Gemini.

        Args:
            environ: the process environment.
            configured: ``gemini:`` of ``inboxflow.yaml`` by role, if any.

        Raises:
            ValueError: a malformed role setting (see ``gemini_roles.resolve_roles``).
        """
        project = environ.get("GOOGLE_CLOUD_PROJECT") or None
        vertex = _truthy(environ.get("GOOGLE_GENAI_USE_VERTEXAI")) and project is not None
        api_key = (environ.get("GOOGLE_API_KEY") or environ.get("GEMINI_API_KEY") or "").strip()
        if not vertex and not api_key:
            return None
        common: dict[str, Any] = {
            "base_url": environ.get("INBOXFLOW_GEMINI_BASE_URL") or None,
            "task_models": tuple(
                sorted(
                    (name.removeprefix("INBOXFLOW_GEMINI_MODEL_").lower(), value)
                    for name, value in environ.items()
                    if name.startswith("INBOXFLOW_GEMINI_MODEL_") and value
                )
            ),
            "roles": resolve_roles(environ, configured, vertex=vertex),
        }
        if vertex:
            location = environ.get("GOOGLE_CLOUD_LOCATION") or "global"
            return cls(mode="vertex", project=project, location=location, **common)
        return cls(mode="api_key", api_key=api_key, **common)

    @property
    def default_model(self) -> str:
        """The model of every task without its own."""
        return self.role("task").model

    def role(self, name: Role) -> RoleSettings:
        """What role ``name`` asks for."""
        return self.roles.get(name) or DEFAULTS[name]

    def model_for(self, task_name: str) -> str:
        """The model that answers ``task_name``."""
        return dict(self.task_models).get(task_name.lower(), self.default_model)

    def describe(self) -> str:
        """One line for the logs (never the key)."""
        where = (
            f"Vertex AI project {self.project} in {self.location}"
            if self.mode == "vertex"
            else "Gemini API (API key)"
        )
        via = f" via {self.base_url}" if self.base_url else ""
        overrides = ", ".join(f"{task}={model}" for task, model in self.task_models)
        chat = {self.role("assistant").model, self.role("agent").model}
        return (
            f"Gemini {self.default_model} on {where}{via}"
            + (f" (per task: {overrides})" if overrides else "")
            + f"; chat {', '.join(sorted(chat))}"
        )


def make_client(
    settings: GeminiSettings, credentials: Credentials | None = None, location: str | None = None
) -> Client:
    """A ``google.genai.Client`` for ``settings``; the SDK's own retries stay off (we retry).

    Args:
        settings: where and how to connect.
        credentials: Vertex mode only; default Application Default Credentials.
        location: Vertex location (default ``settings.location``).
    """
    from google import genai
    from google.genai import types

    if settings.mode == "vertex":
        return genai.Client(
            vertexai=True,
            project=settings.project,
            location=location or settings.location,
            credentials=credentials,
            http_options=types.HttpOptions(
                base_url=settings.base_url, api_version=VERTEX_API_VERSION
            ),
        )
    return genai.Client(
        vertexai=False,
        api_key=settings.api_key,
        http_options=types.HttpOptions(
            base_url=settings.base_url, api_version=DEVELOPER_API_VERSION
        ),
    )


class ClientPool:
    """One client per Vertex location (one in all for the Gemini API), built on first use."""

    def __init__(
        self, settings: GeminiSettings, credentials: Any = None, client: Any = None
    ) -> None:
        """Args:
        settings: where to connect.
        credentials: Vertex credentials (default ADC).
        client: a ready client used for every location (tests).
        """
        self.settings = settings
        self.credentials = credentials
        self.given = client
        self._clients: BuiltPerKey[str, Any] = BuiltPerKey(
            lambda location: make_client(self.settings, self.credentials, location or None)
        )

    def for_role(self, role: RoleSettings) -> Any:
        """The client that reaches ``role``'s location."""
        if self.given is not None:
            return self.given
        return self._clients.get((role.location or "") if self.settings.mode == "vertex" else "")


# --- retries -----------------------------------------------------------------------------------


# --- the model ---------------------------------------------------------------------------------


class SchemaMismatch(ValueError):
    """The answer is not JSON matching the task's schema; the message says where."""


SCHEMA_RETRY_PROMPT = (
    "Your answer did not match the required JSON schema: {error}\n"
    "Answer again with only a JSON object that matches the schema."
)

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_answer(model: type[Out], text: str | None, finish_reason: str | None = None) -> Out:
    """Validate a model's text answer against ``model``.

    Args:
        model: the task's output schema.
        text: the answer as the model wrote it.
        finish_reason: why the model stopped, quoted when the answer is empty.

    Raises:
        SchemaMismatch: empty, not JSON, or not matching the schema.
    """
    if text is None or not text.strip():
        why = f" (finish reason {finish_reason})" if finish_reason else ""
        raise SchemaMismatch(f"empty answer{why}")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise SchemaMismatch(f"not valid JSON: {exc}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SchemaMismatch(validation_summary(exc)) from None


def validation_summary(exc: ValidationError, limit: int = 5) -> str:
    """The first ``limit`` errors of ``exc`` as ``field: message (got value)``."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        got = json.dumps(error.get("input"), default=str)[:60]
        parts.append(f"{where}: {error['msg']} (got {got})")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


@dataclass
class GeminiModel(LanguageModel):
    """Answers LLM tasks with Gemini structured output, validated into the task's schema.

    One task call: the rendered prompt with ``task.system`` as system
    instruction, ``response_mime_type="application/json"`` and the task's
    pydantic model as ``response_schema``, the task role's budget, thinking
    setting and timeout. 408/429/5xx, timeouts and network errors are retried
    within the role's deadline (``retry``: 3 attempts, exponential backoff with
    jitter; a 429's ``retryDelay`` when it carries one). An answer that is not
    valid JSON for the schema is sent back once with the validation error; a
    second bad answer fails the step. ``MAX_TOKENS`` without an answer is asked
    again once with four times the budget; a blocked prompt or a safety stop
    fails the step at once with the reason.

    Attributes:
        settings: where to connect and what each role asks for.
        retry: the transient-failure policy.
        credentials: Vertex mode only (default: Application Default Credentials).
        client: a ready client for every location (default: built from ``settings``).
    """

    settings: GeminiSettings
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    credentials: Any = None
    client: Any = None

    def __post_init__(self) -> None:
        self.clients = ClientPool(self.settings, self.credentials, self.client)
        if self.client is None and self.settings.mode == "api_key":
            self.client = self.clients.for_role(self.settings.role("task"))
        self.name = self.settings.default_model

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        """Answer ``task`` for ``inputs``.

        Returns:
            The validated answer and its usage (tokens summed over attempts).

        Raises:
            LLMFailed: the answer failed the schema twice ("<task>: output did not
                match schema: ..."), Gemini stayed unavailable through the retries,
                the quota ran out, it refused the request (4xx), blocked the prompt,
                stopped for safety, or ran out of budget twice.
        """
        from google.genai import types

        role = self.settings.role("task")
        model = self.settings.model_for(task.name)
        usage = LLMUsage(model=model, attempts=0)
        prompt = task.render(inputs)
        budget = role.max_output_tokens

        def config(budget: int | None) -> Any:
            return types.GenerateContentConfig(
                system_instruction=task.system or None,
                response_mime_type="application/json",
                response_schema=task.output_model,
                max_output_tokens=budget,
                thinking_config=thinking_config(role),
                http_options=request_options(role),
                automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            )

        contents: list[Any] = [types.UserContent(parts=[types.Part(text=prompt)])]
        schema_attempt, budget_retried = 1, False
        while True:
            response = self._send(task, role, model, contents, config(budget), usage)
            text = _answer_text(response)
            problem = stop_problem(response, bool(text and text.strip()), role, budget)
            if problem is None and finish_reason(response) == "MAX_TOKENS":
                # Cut off mid-answer: the JSON is incomplete, a schema retry would be cut too.
                problem = StopProblem(
                    "max_tokens",
                    f"Gemini stopped at MAX_TOKENS mid-answer (budget {budget}); raise "
                    f"gemini.{role.role}.max_output_tokens or lower its thinking_level",
                )
            if problem is not None:
                bigger = budget_for_retry(problem, budget, budget_retried, usage)
                if bigger is None:
                    raise LLMFailed(f"{task.name}: {problem}", usage)
                budget, budget_retried = bigger, True
                continue
            try:
                output = parse_answer(task.output_model, text, finish_reason(response))
            except SchemaMismatch as exc:
                usage.errors.append(f"schema: {exc}")
                if schema_attempt == 2:
                    usage.outcome = "failed"
                    raise LLMFailed(
                        f"{task.name}: output did not match schema: {exc}", usage
                    ) from None
                schema_attempt = 2
                answered = [types.ModelContent(parts=[types.Part(text=text)])] if text else []
                contents = [
                    *contents,
                    *answered,  # never an empty text part: Gemini answers 400
                    types.UserContent(
                        parts=[types.Part(text=SCHEMA_RETRY_PROMPT.format(error=exc))]
                    ),
                ]
                continue
            if schema_attempt == 2:
                usage.outcome = "schema_retry"
            else:
                usage.outcome = "retried" if usage.attempts > 1 else "ok"
            return output, usage

    def role_settings(self, name: Role) -> RoleSettings:
        """What role ``name`` asks for (``GeminiSettings.role``)."""
        return self.settings.role(name)

    def client_for(self, role: RoleSettings) -> Any:
        """The client that reaches ``role``'s location."""
        return self.clients.for_role(role)

    def chat(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], settings: ChatSettings
    ) -> AgentTurn:
        """One agent turn with Gemini function calling (see ``gemini_chat``).

        A malformed function call (``MALFORMED_FUNCTION_CALL``, or arguments that are
        not an object) is sent back once with a correction; a second one fails the turn.

        Raises:
            LLMFailed: Gemini stayed unavailable, refused the request, ran out of
                quota or budget, stopped for safety, or twice answered with a
                malformed function call.
        """
        from .gemini_chat import chat_turn

        return chat_turn(self, messages, tools, settings)

    def _send(
        self,
        task: LLMTask[Any],
        role: RoleSettings,
        model: str,
        contents: list[Any],
        config: Any,
        usage: LLMUsage,
    ) -> Any:
        client = self.clients.for_role(role)

        def once() -> Any:
            usage.attempts += 1
            return client.models.generate_content(model=model, contents=contents, config=config)

        try:
            response = send_with_retries(once, self.retry, usage.errors, role.deadline_s, model)
        except GeminiCallFailed as exc:
            usage.outcome = "failed"
            raise LLMFailed(f"{task.name}: {exc}", usage) from exc
        add_usage(usage, response)
        return response


def _answer_text(response: Any) -> str | None:
    candidates = response.candidates or []
    if not candidates or candidates[0].content is None:
        return None
    parts = candidates[0].content.parts or []
    return "".join(p.text for p in parts if p.text and not p.thought) or None


__all__ = [
    "DEFAULT_MODEL",
    "ClientPool",
    "GeminiCallFailed",
    "GeminiModel",
    "GeminiQuotaExceeded",
    "GeminiSettings",
    "RetryPolicy",
    "SchemaMismatch",
    "StopProblem",
    "larger_budget",
    "make_client",
    "parse_answer",
    "request_options",
    "retry_delay",
    "send_with_retries",
    "stop_problem",
    "thinking_config",
    "transient_reason",
]

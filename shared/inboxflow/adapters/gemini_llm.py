"""Gemini through ``google-genai``: structured output into each task's pydantic schema.

Configuration (environment, read by ``GeminiSettings.from_env``):

- API-key mode: ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY`` (the SDK prefers the latter).
- Vertex mode: ``GOOGLE_GENAI_USE_VERTEXAI=true`` with ``GOOGLE_CLOUD_PROJECT`` and
  ``GOOGLE_CLOUD_LOCATION`` (default ``global``); credentials from ADC.
- ``INBOXFLOW_GEMINI_MODEL``: the model of every task (default ``DEFAULT_MODEL``);
  ``INBOXFLOW_GEMINI_MODEL_<TASK>`` overrides it for one task
  (``INBOXFLOW_GEMINI_MODEL_GENERATE_RESPONSE=gemini-2.5-pro``).
- ``INBOXFLOW_GEMINI_TIMEOUT_S``: per-request timeout (default 20 s).
- ``INBOXFLOW_GEMINI_BASE_URL``: send requests there instead (the local Gemini double).

``google.genai`` is imported when a ``GeminiModel`` is built, never when this
module is imported: node functions that never call a model do not pay for it.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

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

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.genai import Client

log = logging.getLogger("inboxflow.llm")

DEFAULT_MODEL = "gemini-2.5-flash"
DEFAULT_TIMEOUT_S = 20.0
"""Per request. Three attempts and their backoff (~63 s at worst) fit in a node's lease (timeout + 30 s)."""
TRANSIENT_STATUS = frozenset({408, 429})
"""Besides every 5xx: the HTTP statuses worth another attempt."""

R = TypeVar("R")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class GeminiSettings:
    """How to reach Gemini, read from the environment.

    Attributes:
        mode: ``api_key`` (Gemini Developer API) or ``vertex`` (Vertex AI).
        api_key: the key in API-key mode.
        project: Google Cloud project in Vertex mode.
        location: Vertex location in Vertex mode.
        base_url: endpoint override (the local double); None for Google's.
        default_model: model of every task without an override.
        task_models: per-task model overrides, by task name.
        timeout_s: per-request timeout.
    """

    mode: Literal["api_key", "vertex"]
    api_key: str | None = None
    project: str | None = None
    location: str | None = None
    base_url: str | None = None
    default_model: str = DEFAULT_MODEL
    task_models: tuple[tuple[str, str], ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> GeminiSettings | None:
        """The settings ``environ`` configures, or None when it configures no Gemini.

        Raises:
            ValueError: a malformed ``INBOXFLOW_GEMINI_TIMEOUT_S``.
        """
        common: dict[str, Any] = {
            "base_url": environ.get("INBOXFLOW_GEMINI_BASE_URL") or None,
            "default_model": environ.get("INBOXFLOW_GEMINI_MODEL") or DEFAULT_MODEL,
            "task_models": tuple(
                sorted(
                    (name.removeprefix("INBOXFLOW_GEMINI_MODEL_").lower(), value)
                    for name, value in environ.items()
                    if name.startswith("INBOXFLOW_GEMINI_MODEL_") and value
                )
            ),
            "timeout_s": float(environ.get("INBOXFLOW_GEMINI_TIMEOUT_S") or DEFAULT_TIMEOUT_S),
        }
        project = environ.get("GOOGLE_CLOUD_PROJECT") or None
        if _truthy(environ.get("GOOGLE_GENAI_USE_VERTEXAI")) and project:
            location = environ.get("GOOGLE_CLOUD_LOCATION") or "global"
            return cls(mode="vertex", project=project, location=location, **common)
        api_key = (environ.get("GOOGLE_API_KEY") or environ.get("GEMINI_API_KEY") or "").strip()
        if api_key:
            return cls(mode="api_key", api_key=api_key, **common)
        return None

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
        return f"Gemini {self.default_model} on {where}{via}" + (
            f" (per task: {overrides})" if overrides else ""
        )


def make_client(settings: GeminiSettings, credentials: Credentials | None = None) -> Client:
    """A ``google.genai.Client`` for ``settings``; the SDK's own retries stay off (we retry).

    Args:
        settings: where and how to connect.
        credentials: Vertex mode only; default Application Default Credentials.
    """
    from google import genai
    from google.genai import types

    http_options = types.HttpOptions(
        base_url=settings.base_url, timeout=int(settings.timeout_s * 1000)
    )
    if settings.mode == "vertex":
        return genai.Client(
            vertexai=True,
            project=settings.project,
            location=settings.location,
            credentials=credentials,
            http_options=http_options,
        )
    return genai.Client(vertexai=False, api_key=settings.api_key, http_options=http_options)


# --- retries -----------------------------------------------------------------------------------


@dataclass
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter.

    Attributes:
        attempts: requests in all, the first one included.
        base_s: backoff before the second attempt (doubles each time, capped at ``max_s``).
        max_s: longest backoff.
        sleep: how to wait (tests pass a recorder).
        jitter: a number in [0, 1); the delay is scaled by ``0.5 + jitter / 2``.
    """

    attempts: int = 3
    base_s: float = 1.0
    max_s: float = 8.0
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = random.random

    def delay(self, failed_attempt: int) -> float:
        """Seconds to wait after attempt number ``failed_attempt`` (1-based) failed."""
        ceiling = min(self.max_s, self.base_s * 2 ** (failed_attempt - 1))
        return ceiling * (0.5 + self.jitter() / 2)


class GeminiCallFailed(Exception):
    """A request failed for good: a permanent API error, or transient ones past the retries."""


def transient_reason(exc: BaseException) -> str | None:
    """Why ``exc`` is worth another attempt (408, 429, 5xx, timeout, network), else None."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        code = int(exc.code or 0)
        if code in TRANSIENT_STATUS or code >= 500:
            return _api_error_text(exc)
        return None
    timeouts, network = _transport_errors()
    if isinstance(exc, timeouts):
        return f"timeout: {type(exc).__name__}"
    if isinstance(exc, network):
        return f"network error: {type(exc).__name__}: {exc}"
    return None


@cache
def _transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """Timeout and network exception classes of the transports google-genai may use.

    The SDK sends through ``httpx2`` (or ``httpx``) and, for Vertex with mTLS
    certificates, through google-auth's ``requests`` session.
    """
    import importlib

    timeouts: list[type[BaseException]] = []
    network: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        timeouts.append(module.TimeoutException)
        network.append(module.TransportError)
    try:
        import requests
        from google.auth.exceptions import TransportError
    except ImportError:  # pragma: no cover - google-auth ships with requests support
        pass
    else:
        timeouts.append(requests.Timeout)
        network.extend((requests.ConnectionError, TransportError))
    return tuple(timeouts), tuple(network)


def _api_error_text(exc: Any) -> str:
    message = re.sub(r"\s+", " ", str(exc.message or "")).strip()[:300]
    return f"{exc.code} {exc.status or ''}: {message}".replace("  ", " ")


def send_with_retries(send: Callable[[], R], policy: RetryPolicy, errors: list[str]) -> R:
    """Call ``send`` until it succeeds, retrying transient failures under ``policy``.

    Args:
        send: one request.
        policy: how many attempts and how long to wait between them.
        errors: receives the reason of every failed attempt, oldest first.

    Raises:
        GeminiCallFailed: a permanent API error (4xx other than 408/429), or the
            last transient failure once the attempts are used up.
    """
    from google.genai import errors as genai_errors

    attempts = max(1, policy.attempts)
    for attempt in range(1, attempts + 1):
        try:
            return send()
        except Exception as exc:
            reason = transient_reason(exc)
            if reason is None:
                if isinstance(exc, genai_errors.APIError):
                    errors.append(_api_error_text(exc))
                    raise GeminiCallFailed(
                        f"Gemini refused the request: {_api_error_text(exc)}"
                    ) from exc
                raise
            errors.append(reason)
            if attempt == attempts:
                raise GeminiCallFailed(
                    f"Gemini unavailable after {attempts} attempts: {reason}"
                ) from exc
            delay = policy.delay(attempt)
            log.info("Gemini attempt %d failed (%s); retrying in %.2fs", attempt, reason, delay)
            policy.sleep(delay)
    raise AssertionError("unreachable")


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
    pydantic model as ``response_schema``. 408/429/5xx, timeouts and network
    errors are retried (``retry``: 3 attempts, exponential backoff with
    jitter). An answer that is not valid JSON for the schema is sent back once
    with the validation error; a second bad answer fails the step.

    Attributes:
        settings: where to connect and which model answers which task.
        retry: the transient-failure policy.
        credentials: Vertex mode only (default: Application Default Credentials).
        client: a ready client (default: built from ``settings``).
    """

    settings: GeminiSettings
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    credentials: Any = None
    client: Any = None

    def __post_init__(self) -> None:
        if self.client is None:
            self.client = make_client(self.settings, self.credentials)
        self.name = self.settings.default_model

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        """Answer ``task`` for ``inputs``.

        Returns:
            The validated answer and its usage (tokens summed over attempts).

        Raises:
            LLMFailed: the answer failed the schema twice ("<task>: output did not
                match schema: ..."), Gemini stayed unavailable through the retries,
                or refused the request (4xx).
        """
        from google.genai import types

        model = self.settings.model_for(task.name)
        usage = LLMUsage(model=model, attempts=0)
        prompt = task.render(inputs)
        config = types.GenerateContentConfig(
            system_instruction=task.system or None,
            response_mime_type="application/json",
            response_schema=task.output_model,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        contents: list[Any] = [types.UserContent(parts=[types.Part(text=prompt)])]
        for schema_attempt in (1, 2):
            response = self._send(task, model, contents, config, usage)
            text = _answer_text(response)
            try:
                output = parse_answer(task.output_model, text, _finish_reason(response))
            except SchemaMismatch as exc:
                usage.errors.append(f"schema: {exc}")
                if schema_attempt == 2:
                    usage.outcome = "failed"
                    raise LLMFailed(
                        f"{task.name}: output did not match schema: {exc}", usage
                    ) from None
                contents = [
                    *contents,
                    types.ModelContent(parts=[types.Part(text=text or "")]),
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
        raise AssertionError("unreachable")

    def chat(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], settings: ChatSettings
    ) -> AgentTurn:
        """One agent turn with Gemini function calling (see ``gemini_chat``).

        A malformed function call (``MALFORMED_FUNCTION_CALL``, or arguments that are
        not an object) is sent back once with a correction; a second one fails the turn.

        Raises:
            LLMFailed: Gemini stayed unavailable, refused the request, or twice
                answered with a malformed function call.
        """
        from .gemini_chat import chat_turn

        return chat_turn(self, messages, tools, settings)

    def _send(
        self, task: LLMTask[Any], model: str, contents: list[Any], config: Any, usage: LLMUsage
    ) -> Any:
        def once() -> Any:
            usage.attempts += 1
            return self.client.models.generate_content(
                model=model, contents=contents, config=config
            )

        try:
            response = send_with_retries(once, self.retry, usage.errors)
        except GeminiCallFailed as exc:
            usage.outcome = "failed"
            raise LLMFailed(f"{task.name}: {exc}", usage) from exc
        _add_usage(usage, response)
        return response


def _answer_text(response: Any) -> str | None:
    candidates = response.candidates or []
    if not candidates or candidates[0].content is None:
        return None
    parts = candidates[0].content.parts or []
    return "".join(p.text for p in parts if p.text and not p.thought) or None


def _finish_reason(response: Any) -> str | None:
    candidates = response.candidates or []
    if candidates and candidates[0].finish_reason is not None:
        return str(getattr(candidates[0].finish_reason, "value", candidates[0].finish_reason))
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        return f"prompt blocked: {getattr(feedback.block_reason, 'value', feedback.block_reason)}"
    return None


def _add_usage(usage: LLMUsage, response: Any) -> None:
    metadata = response.usage_metadata
    if metadata is None:
        return
    if metadata.prompt_token_count is not None:
        usage.input_tokens = (usage.input_tokens or 0) + metadata.prompt_token_count
    if metadata.candidates_token_count is not None:
        usage.output_tokens = (usage.output_tokens or 0) + metadata.candidates_token_count
    if metadata.thoughts_token_count:
        usage.extra["thinking_tokens"] = (
            int(usage.extra.get("thinking_tokens", 0)) + metadata.thoughts_token_count
        )


__all__ = [
    "DEFAULT_MODEL",
    "GeminiCallFailed",
    "GeminiModel",
    "GeminiSettings",
    "RetryPolicy",
    "SchemaMismatch",
    "make_client",
    "parse_answer",
    "send_with_retries",
    "transient_reason",
]

"""Calling Gemini: request options, retries and their budget, stop reasons and usage.

Shared by the structured-output tasks (``gemini_llm``) and the agent turns
(``gemini_chat``); neither imports the other's calls through here.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..ports.llm import (
    LLMUsage,
)
from .gemini_roles import (
    MAX_OUTPUT_CAP,
    RoleSettings,
    retired_hint,
)

if TYPE_CHECKING:
    pass

log = logging.getLogger("inboxflow.llm")


TRANSIENT_STATUS = frozenset({408, 429})
"""Besides every 5xx: the HTTP statuses worth another attempt."""


R = TypeVar("R")


def request_options(role: RoleSettings) -> Any:
    """The per-request ``HttpOptions``: the role's timeout (also ``X-Server-Timeout``)."""
    from google.genai import types

    return types.HttpOptions(timeout=int(role.timeout_s * 1000))


def thinking_config(role: RoleSettings) -> Any:
    """The role's ``ThinkingConfig``, or None to leave the model's default."""
    from google.genai import types

    if role.thinking_level is not None:
        return types.ThinkingConfig(thinking_level=types.ThinkingLevel(role.thinking_level.upper()))
    if role.thinking_budget is not None:
        return types.ThinkingConfig(thinking_budget=role.thinking_budget)
    return None


@dataclass
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter, within a deadline.

    Attributes:
        attempts: requests in all, the first one included.
        base_s: backoff before the second attempt (doubles each time, capped at ``max_s``).
        max_s: longest backoff.
        sleep: how to wait (tests pass a recorder).
        jitter: a number in [0, 1); the delay is scaled by ``0.5 + jitter / 2``.
        clock: seconds, monotonic (tests pass a fake that ``sleep`` advances).
    """

    attempts: int = 3
    base_s: float = 1.0
    max_s: float = 8.0
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = random.random
    clock: Callable[[], float] = time.monotonic

    def delay(self, failed_attempt: int) -> float:
        """Seconds to wait after attempt number ``failed_attempt`` (1-based) failed."""
        ceiling = min(self.max_s, self.base_s * 2 ** (failed_attempt - 1))
        return ceiling * (0.5 + self.jitter() / 2)


class GeminiCallFailed(Exception):
    """A request failed for good: a permanent API error, or transient ones past the retries."""


class GeminiQuotaExceeded(GeminiCallFailed):
    """429 RESOURCE_EXHAUSTED that the call cannot wait out: the quota is the problem."""


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


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def retry_delay(exc: BaseException) -> float | None:
    """The ``google.rpc.RetryInfo.retryDelay`` an API error carries, in seconds, else None."""
    details = getattr(exc, "details", None)
    error = details.get("error", details) if isinstance(details, Mapping) else None
    for detail in (error or {}).get("details") or [] if isinstance(error, Mapping) else []:
        if not isinstance(detail, Mapping):
            continue
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
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


def _refusal(exc: Any, model: str | None) -> str:
    text = f"Gemini refused the request: {_api_error_text(exc)}"
    if int(exc.code or 0) == 404 and model:
        hint = retired_hint(model)
        text += (
            f" ({hint})"
            if hint
            else f" (is {model} a model this key can use? `inboxflow check` lists them)"
        )
    return text


def send_with_retries(
    send: Callable[[], R],
    policy: RetryPolicy,
    errors: list[str],
    deadline_s: float | None = None,
    model: str | None = None,
) -> R:
    """Call ``send`` until it succeeds, retrying transient failures under ``policy``.

    A 429 carrying ``RetryInfo`` waits its ``retryDelay`` (not the backoff) when
    that fits before the deadline; when it does not, or the attempts run out on
    429s, the call fails as a quota error.

    Args:
        send: one request.
        policy: how many attempts and how long to wait between them.
        errors: receives the reason of every failed attempt, oldest first.
        deadline_s: every attempt and wait together (None: no limit).
        model: the model asked, named when Gemini answers 404.

    Raises:
        GeminiQuotaExceeded: 429s that cannot be waited out.
        GeminiCallFailed: a permanent API error (4xx other than 408/429), or the
            last transient failure once the attempts or the deadline are used up.
    """
    from google.genai import errors as genai_errors

    started = policy.clock()
    attempts = max(1, policy.attempts)
    for attempt in range(1, attempts + 1):
        try:
            return send()
        except Exception as exc:
            reason = transient_reason(exc)
            if reason is None:
                if isinstance(exc, genai_errors.APIError):
                    errors.append(_api_error_text(exc))
                    raise GeminiCallFailed(_refusal(exc, model)) from exc
                raise
            errors.append(reason)
            quota = isinstance(exc, genai_errors.APIError) and int(exc.code or 0) == 429
            advised = retry_delay(exc) if quota else None
            delay = advised if advised is not None else policy.delay(attempt)
            left = None if deadline_s is None else deadline_s - (policy.clock() - started)
            if quota and (attempt == attempts or (left is not None and delay >= left)):
                wait = f"; Gemini asks to retry after {advised:g}s" if advised is not None else ""
                budget = (
                    f" ({left:.0f}s left of the call's {deadline_s:g}s)" if left is not None else ""
                )
                raise GeminiQuotaExceeded(
                    f"Gemini quota exhausted after {attempt} attempt(s){wait}{budget}: {reason}. "
                    "Raise the project's quota or lower the rate."
                ) from exc
            if attempt == attempts or (left is not None and delay >= left):
                raise GeminiCallFailed(
                    f"Gemini unavailable after {attempt} attempts: {reason}"
                ) from exc
            log.info("Gemini attempt %d failed (%s); retrying in %.2fs", attempt, reason, delay)
            policy.sleep(delay)
    raise AssertionError("unreachable")


STOPPED_FOR_SAFETY = frozenset(
    {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "LANGUAGE", "OTHER"}
)
"""Finish reasons after which asking again the same way gets the same refusal."""


class StopProblem(Exception):
    """Gemini answered without content: the prompt was blocked, or the answer stopped early.

    Attributes:
        kind: ``max_tokens`` (a larger budget may help), ``blocked`` or ``refused``.
    """

    def __init__(self, kind: Literal["max_tokens", "blocked", "refused"], message: str) -> None:
        super().__init__(message)
        self.kind = kind


def stop_problem(
    response: Any, has_content: bool, role: RoleSettings, budget: int | None
) -> StopProblem | None:
    """Why ``response`` carries nothing to use, or None when it is a normal answer.

    Args:
        response: the ``GenerateContentResponse``.
        has_content: the answer has usable text or function calls.
        role: the role asking (named in the fix).
        budget: the ``max_output_tokens`` sent.
    """
    candidates = response.candidates or []
    feedback = response.prompt_feedback
    if not candidates:
        reason = getattr(getattr(feedback, "block_reason", None), "value", None) or str(
            getattr(feedback, "block_reason", None) or "no reason given"
        )
        return StopProblem("blocked", f"Gemini blocked the prompt ({reason}); no answer to use")
    reason = finish_reason(response) or ""
    if reason == "MAX_TOKENS" and not has_content:
        metadata = response.usage_metadata
        thinking = getattr(metadata, "thoughts_token_count", None) or 0
        return StopProblem(
            "max_tokens",
            f"Gemini stopped at MAX_TOKENS with no answer (budget {budget}, {thinking} thinking "
            f"tokens); raise gemini.{role.role}.max_output_tokens or lower its thinking_level",
        )
    if reason in STOPPED_FOR_SAFETY and not has_content:
        return StopProblem("refused", f"Gemini stopped with finish reason {reason} and no answer")
    return None


def larger_budget(budget: int | None) -> int | None:
    """The budget of the one retry after ``MAX_TOKENS`` (None: no larger budget to try)."""
    if budget is None or budget >= MAX_OUTPUT_CAP:
        return None
    return min(MAX_OUTPUT_CAP, budget * 4)


def budget_for_retry(
    problem: StopProblem, budget: int | None, retried: bool, usage: LLMUsage
) -> int | None:
    """Note ``problem`` in ``usage``; return the budget of the one retry after ``MAX_TOKENS``,
    or None when the call has failed (``usage.outcome`` then says so)."""
    usage.errors.append(str(problem))
    bigger = larger_budget(budget) if problem.kind == "max_tokens" and not retried else None
    if bigger is None:
        usage.outcome = "failed"
    return bigger


def add_usage(usage: LLMUsage, response: Any) -> None:
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


def finish_reason(response: Any) -> str | None:
    candidates = response.candidates or []
    if candidates and candidates[0].finish_reason is not None:
        return str(getattr(candidates[0].finish_reason, "value", candidates[0].finish_reason))
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        return f"prompt blocked: {getattr(feedback.block_reason, 'value', feedback.block_reason)}"
    return None

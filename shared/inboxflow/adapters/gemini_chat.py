"""Gemini function calling for the agent graph: OpenAI-style conversations and tool specs
in, ``AgentTurn`` (text and tool calls with ids) out, through ``google-genai``.

- The tool specs (``{"type": "function", "function": {name, description, parameters}}``)
  become ``FunctionDeclaration(parameters_json_schema=...)``.
- ``system`` messages become the system instruction; an assistant's tool calls
  become ``function_call`` parts (with their ids); consecutive ``tool`` results
  become one user turn of ``function_response`` parts (parallel calls answered together).
- Gemini's function calls come back in order, with Gemini's ids when it gives
  them, else ``call_{n}``; arguments as JSON; the ``thoughtSignature`` of a call's
  part (base64) is kept on the call and sent back on that same part, byte for byte
  (https://ai.google.dev/gemini-api/docs/thought-signatures: Gemini 3 answers 400
  when the current turn's function calls come back without theirs).
- No empty text part is ever sent (Gemini answers 400): an assistant message
  without text or calls is left out.
- ``MAX_TOKENS`` without text or calls is asked again once with four times the
  budget; a blocked prompt or a safety stop fails the turn with the reason.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError

from ..ports.llm import AgentTurn, ChatMessage, ChatSettings, LLMFailed, LLMUsage, ToolCall

if TYPE_CHECKING:
    from .gemini_roles import Role, RoleSettings
    from .gemini_transport import RetryPolicy


class ChatParts(Protocol):
    """What a chat turn uses of the model (``GeminiModel``): roles, clients, retries."""

    retry: RetryPolicy

    def role_settings(self, name: Role) -> RoleSettings:
        """What role ``name`` asks for."""
        ...

    def client_for(self, role: RoleSettings) -> Any:
        """The client that reaches ``role``'s location."""
        ...


MALFORMED_RETRY_PROMPT = (
    "Your last function call was malformed ({error}). Call the function again with "
    "arguments that are a JSON object matching its parameters, or answer without a call."
)


class MalformedCall(ValueError):
    """Gemini answered with a function call that cannot be read."""


def declarations(tools: list[dict[str, Any]]) -> list[Any]:
    """The OpenAI-format specs as one google-genai ``Tool`` of function declarations."""
    from google.genai import types

    functions = [spec.get("function", spec) for spec in tools]
    if not functions:
        return []
    return [
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name=str(f["name"]),
                    description=str(f.get("description", "")),
                    parameters_json_schema=f.get("parameters") or {"type": "object"},
                )
                for f in functions
            ]
        )
    ]


def contents_of(messages: list[ChatMessage]) -> tuple[str, list[Any]]:
    """The system instruction and the Gemini contents of an OpenAI-style conversation."""
    from google.genai import types

    system: list[str] = []
    contents: list[Any] = []
    responses: list[Any] = []

    def flush() -> None:
        if responses:
            contents.append(types.Content(role="user", parts=list(responses)))
            responses.clear()

    for message in messages:
        role = message.get("role")
        text = str(message.get("content") or "")
        if role == "tool":
            responses.append(
                types.Part(
                    function_response=types.FunctionResponse(
                        id=str(message.get("tool_call_id") or "") or None,
                        name=str(message.get("name") or ""),
                        response=_as_object(text, "result"),
                    )
                )
            )
            continue
        flush()
        if role == "system":
            system.append(text)
        elif role == "assistant":
            parts = [types.Part(text=text)] if text else []
            for call in message.get("tool_calls") or []:
                parts.append(
                    types.Part(
                        function_call=types.FunctionCall(
                            id=str(call.get("id") or "") or None,
                            name=str(call["name"]),
                            args=_as_object(str(call.get("arguments_json") or "{}"), "value", {}),
                        ),
                        thought_signature=_signature_bytes(call.get("thought_signature")),
                    )
                )
            if parts:
                contents.append(types.Content(role="model", parts=parts))
        elif text:
            contents.append(types.Content(role="user", parts=[types.Part(text=text)]))
    flush()
    return "\n\n".join(system), contents


def _signature_bytes(value: Any) -> bytes | None:
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return None


def _signature_text(value: bytes | None) -> str | None:
    return base64.b64encode(value).decode("ascii") if value else None


def _as_object(text: str, key: str, fallback: dict[str, Any] | None = None) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return fallback if fallback is not None else {key: text}
    if isinstance(value, dict):
        return value
    return fallback if fallback is not None else {key: value}


def read_turn(response: Any) -> tuple[str, tuple[ToolCall, ...]]:
    """Text and function calls of a response.

    Raises:
        MalformedCall: Gemini stopped with ``MALFORMED_FUNCTION_CALL`` (or similar).
    """
    candidates = response.candidates or []
    candidate = candidates[0] if candidates else None
    reason = getattr(getattr(candidate, "finish_reason", None), "value", None) or str(
        getattr(candidate, "finish_reason", "") or ""
    )
    parts = (candidate.content.parts or []) if candidate is not None and candidate.content else []
    calls: list[ToolCall] = []
    texts = []
    for part in parts:
        if part.function_call is not None:
            call = part.function_call
            calls.append(
                ToolCall(
                    id=call.id or f"call_{len(calls)}",
                    name=str(call.name or ""),
                    arguments_json=json.dumps(call.args or {}, ensure_ascii=False),
                    thought_signature=_signature_text(part.thought_signature),
                )
            )
        elif part.text and not part.thought:
            texts.append(part.text)
    if not calls and ("MALFORMED" in reason.upper() or "UNEXPECTED_TOOL_CALL" in reason.upper()):
        message = getattr(candidate, "finish_message", None) or reason
        raise MalformedCall(str(message))
    return "".join(texts), tuple(calls)


def chat_turn(
    model: ChatParts,
    messages: list[ChatMessage],
    tools: list[dict[str, Any]],
    settings: ChatSettings,
) -> AgentTurn:
    """One agent turn through ``model``'s client, retries and usage accounting."""
    from google.genai import types

    from .gemini_transport import (
        GeminiCallFailed,
        StopProblem,
        add_usage,
        budget_for_retry,
        request_options,
        send_with_retries,
        stop_problem,
        thinking_config,
    )

    role = model.role_settings(settings.role)
    model_id = role.model_for(settings.model)
    budget = settings.max_tokens or role.max_output_tokens
    client = model.client_for(role)
    system, contents = contents_of(messages)

    def config(budget: int | None) -> Any:
        return types.GenerateContentConfig(
            system_instruction=system or None,
            tools=declarations(tools) or None,
            temperature=settings.temperature,
            max_output_tokens=budget,
            thinking_config=thinking_config(role),
            http_options=request_options(role),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

    usage = LLMUsage(model=model_id, attempts=0)
    malformed_attempt, budget_retried = 1, False
    while True:
        sent_config = config(budget)

        def once(contents: list[Any] = contents, sent: Any = sent_config) -> Any:
            usage.attempts += 1
            return client.models.generate_content(model=model_id, contents=contents, config=sent)

        try:
            response = send_with_retries(once, model.retry, usage.errors, role.deadline_s, model_id)
            add_usage(usage, response)
            text, calls = read_turn(response)
            problem = stop_problem(response, bool(text.strip() or calls), role, budget)
            if problem is not None:
                raise problem
        except GeminiCallFailed as exc:
            usage.outcome = "failed"
            raise LLMFailed(f"agent turn: {exc}", usage) from exc
        except StopProblem as problem:
            bigger = budget_for_retry(problem, budget, budget_retried, usage)
            if bigger is None:
                raise LLMFailed(f"agent turn: {problem}", usage) from None
            budget, budget_retried = bigger, True
            continue
        except (MalformedCall, ValidationError) as exc:
            error = f"malformed function call: {_short(exc)}"
            usage.errors.append(error)
            if malformed_attempt == 2:
                usage.outcome = "failed"
                raise LLMFailed(f"agent turn: {error} (twice)", usage) from None
            malformed_attempt = 2
            contents = [
                *contents,
                types.Content(
                    role="user",
                    parts=[types.Part(text=MALFORMED_RETRY_PROMPT.format(error=error))],
                ),
            ]
            continue
        if malformed_attempt == 2:
            usage.outcome = "schema_retry"
        else:
            usage.outcome = "retried" if usage.attempts > 1 else "ok"
        return AgentTurn(text=text, tool_calls=calls, usage=usage)


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc)[:300]


__all__ = ["MalformedCall", "chat_turn", "contents_of", "declarations", "read_turn"]

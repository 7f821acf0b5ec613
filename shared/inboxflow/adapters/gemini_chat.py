"""Gemini function calling for the agent graph: OpenAI-style conversations and tool specs
in, ``AgentTurn`` (text and tool calls with ids) out, through ``google-genai``.

- The tool specs (``{"type": "function", "function": {name, description, parameters}}``)
  become ``FunctionDeclaration(parameters_json_schema=...)``.
- ``system`` messages become the system instruction; an assistant's tool calls
  become ``function_call`` parts (with their ids); consecutive ``tool`` results
  become one user turn of ``function_response`` parts (parallel calls answered together).
- Gemini's function calls come back in order, with Gemini's ids when it gives
  them, else ``call_{n}``; arguments as JSON.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..ports.llm import AgentTurn, ChatMessage, ChatSettings, LLMFailed, LLMUsage, ToolCall

if TYPE_CHECKING:
    from .gemini_llm import GeminiModel

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
                        )
                    )
                )
            contents.append(types.Content(role="model", parts=parts or [types.Part(text="")]))
        else:
            contents.append(types.Content(role="user", parts=[types.Part(text=text)]))
    flush()
    return "\n\n".join(system), contents


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
                )
            )
        elif part.text and not part.thought:
            texts.append(part.text)
    if not calls and ("MALFORMED" in reason.upper() or "UNEXPECTED_TOOL_CALL" in reason.upper()):
        message = getattr(candidate, "finish_message", None) or reason
        raise MalformedCall(str(message))
    return "".join(texts), tuple(calls)


def chat_turn(
    model: GeminiModel,
    messages: list[ChatMessage],
    tools: list[dict[str, Any]],
    settings: ChatSettings,
) -> AgentTurn:
    """One agent turn through ``model``'s client, retries and usage accounting."""
    from google.genai import types

    from .gemini_llm import GeminiCallFailed, _add_usage, send_with_retries

    system, contents = contents_of(messages)
    config = types.GenerateContentConfig(
        system_instruction=system or None,
        tools=declarations(tools) or None,
        temperature=settings.temperature,
        max_output_tokens=settings.max_tokens,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    usage = LLMUsage(model=settings.model, attempts=0)
    for malformed_attempt in (1, 2):

        def once(contents: list[Any] = contents) -> Any:
            usage.attempts += 1
            return model.client.models.generate_content(
                model=settings.model, contents=contents, config=config
            )

        try:
            response = send_with_retries(once, model.retry, usage.errors)
            _add_usage(usage, response)
            text, calls = read_turn(response)
        except GeminiCallFailed as exc:
            usage.outcome = "failed"
            raise LLMFailed(f"agent turn: {exc}", usage) from exc
        except (MalformedCall, ValidationError) as exc:
            error = f"malformed function call: {_short(exc)}"
            usage.errors.append(error)
            if malformed_attempt == 2:
                usage.outcome = "failed"
                raise LLMFailed(f"agent turn: {error} (twice)", usage) from None
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
    raise AssertionError("unreachable")


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc)[:300]


__all__ = ["MalformedCall", "chat_turn", "contents_of", "declarations", "read_turn"]

"""``inboxflow check``: the first calls a key must survive, made before anything depends on them.

With the deployment's Gemini settings (environment and ``inboxflow.yaml``), it:

1. lists the models the key (or Vertex project) can use;
2. for every configured generating model (each role, each per-task override,
   each agent profile's own model): confirms it is listed, asks one
   structured-output call, and one function-call round trip (a forced call, then
   its result sent back with the call's thought signature);
3. asks the embedder for one batch.

Each step prints ``ok`` or ``FAIL`` with what failed and how to fix it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ...adapters.gemini_roles import GENERATING_ROLES, retired_hint
from ...ports.llm import LLMFailed, LLMTask

if TYPE_CHECKING:
    from ...adapters.gemini_llm import GeminiModel, GeminiSettings
    from ...config import InboxflowConfig


class PreflightAnswer(BaseModel):
    """The structured answer the probe asks for."""

    ready: bool
    word: str = Field(max_length=40)


PREFLIGHT_TASK: LLMTask[PreflightAnswer] = LLMTask(
    name="preflight",
    output_model=PreflightAnswer,
    template="This is a connectivity check. Answer with ready=true and word=$word.",
    offline=lambda inputs: PreflightAnswer(ready=True, word=str(inputs.get("word", "ready"))),
    system="You answer connectivity checks briefly.",
)
PREFLIGHT_TOOL = {
    "type": "function",
    "function": {
        "name": "record_check",
        "description": "Records that the connectivity check reached the model.",
        "parameters": {
            "type": "object",
            "properties": {"status": {"type": "string", "description": "Say ok."}},
            "required": ["status"],
        },
    },
}


@dataclass(frozen=True)
class CheckResult:
    """One step of the check.

    Attributes:
        name: what was checked.
        ok: it passed.
        detail: what happened (the error when it failed).
        fix: how to fix a failure.
    """

    name: str
    ok: bool
    detail: str = ""
    fix: str = ""


def configured_models(settings: GeminiSettings, config: InboxflowConfig | None) -> dict[str, str]:
    """Every generating model the deployment would call, by where it is configured."""
    models: dict[str, str] = {}
    for role in GENERATING_ROLES:
        models.setdefault(settings.role(role).model, f"role {role}")
    for task, model in settings.task_models:
        models.setdefault(model, f"task {task}")
    if config is not None:
        for profile in config.profiles:
            chosen = settings.role("agent").model_for(profile.model)
            models.setdefault(chosen, f"profile {profile.name}")
        assistant = (config.graph_settings("assistant") or {}).get("model")
        models.setdefault(settings.role("assistant").model_for(assistant), "graph assistant")
    return models


def run_preflight(
    settings: GeminiSettings,
    config: InboxflowConfig | None = None,
    report: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run every step; ``report`` hears each result as it comes.

    Returns:
        Every result, in order.
    """
    from ...adapters.gemini_embedder import GeminiEmbedder
    from ...adapters.gemini_llm import GeminiModel, RetryPolicy

    results: list[CheckResult] = []

    def record(result: CheckResult) -> None:
        results.append(result)
        if report is not None:
            report(result)

    model = GeminiModel(settings, retry=RetryPolicy(attempts=2))
    listed = _list_models(model, record)
    for model_id, where in configured_models(settings, config).items():
        _check_generation(model, model_id, where, listed, record)
    embedding = settings.role("embedding")
    try:
        embedder = GeminiEmbedder(settings, retry=RetryPolicy(attempts=2))
        vectors = embedder.embed(["inboxflow preflight"])
        record(
            CheckResult(
                f"embedder {embedder.model}",
                True,
                f"one batch: {len(vectors)} vector of {len(vectors[0])} values",
            )
        )
    except Exception as exc:
        where = f" at {embedding.location}" if settings.mode == "vertex" else ""
        record(
            CheckResult(
                f"embedder {embedding.model}{where}",
                False,
                str(exc),
                _fix(embedding.model, "embedding", str(exc)),
            )
        )
    return results


def _list_models(model: GeminiModel, record: Callable[[CheckResult], None]) -> set[str] | None:
    client = model.clients.for_role(model.settings.role("task"))
    try:
        names = {
            str(entry.name or "").rsplit("/", 1)[-1]
            for entry in client.models.list(config={"query_base": True})
        }
    except Exception as exc:
        record(
            CheckResult(
                "list models",
                False,
                str(exc)[:300],
                "check the key (GEMINI_API_KEY) or, on Vertex, GOOGLE_CLOUD_PROJECT, the "
                "location and that the Vertex AI API is enabled",
            )
        )
        return None
    record(CheckResult("list models", True, f"{len(names)} models: {', '.join(sorted(names))}"))
    return names


def _check_generation(
    model: GeminiModel,
    model_id: str,
    where: str,
    listed: set[str] | None,
    record: Callable[[CheckResult], None],
) -> None:
    label = f"{model_id} ({where})"
    if listed is not None and model_id not in listed:
        record(
            CheckResult(
                f"{label} exists",
                False,
                "not among the models this key can use",
                _fix(model_id, where, "404"),
            )
        )
        return
    from dataclasses import replace

    probe = replace(model.settings, task_models=(("preflight", model_id),))
    checker = type(model)(probe, retry=model.retry, client=model.client)
    try:
        answer, usage = checker.generate(PREFLIGHT_TASK, {"word": "ready"})
        record(
            CheckResult(
                f"{label} structured output",
                True,
                f"ready={answer.ready} in {usage.attempts} attempt(s)",
            )
        )
    except LLMFailed as exc:
        record(
            CheckResult(
                f"{label} structured output", False, str(exc), _fix(model_id, where, str(exc))
            )
        )
        return
    try:
        detail = _round_trip(checker, model_id)
        record(CheckResult(f"{label} function call round trip", True, detail))
    except Exception as exc:
        record(
            CheckResult(
                f"{label} function call round trip",
                False,
                str(exc)[:400],
                _fix(model_id, where, str(exc)),
            )
        )


def _round_trip(model: GeminiModel, model_id: str) -> str:
    """A forced function call, then its result sent back with the call's signature."""
    from google.genai import types

    from ...adapters.gemini_chat import contents_of, declarations, read_turn
    from ...adapters.gemini_llm import request_options

    role = model.settings.role("agent")
    client = model.clients.for_role(role)
    messages: list[Mapping[str, Any]] = [
        {"role": "system", "content": "You are checking that function calling works."},
        {"role": "user", "content": "Call record_check with status ok."},
    ]

    def ask(mode: str) -> Any:
        system, contents = contents_of(messages)
        config = types.GenerateContentConfig(
            system_instruction=system,
            tools=declarations([PREFLIGHT_TOOL]),
            tool_config=types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(
                    mode=types.FunctionCallingConfigMode(mode)
                )
            ),
            http_options=request_options(role),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        return client.models.generate_content(model=model_id, contents=contents, config=config)

    _, calls = read_turn(ask("ANY"))
    if not calls:
        raise RuntimeError("the model made no function call when one was required")
    messages.append(
        {"role": "assistant", "content": "", "tool_calls": [c.as_dict() for c in calls]}
    )
    messages.extend(
        {"role": "tool", "tool_call_id": c.id, "name": c.name, "content": json.dumps({"ok": True})}
        for c in calls
    )
    text, _ = read_turn(ask("AUTO"))
    signed = "with" if calls[0].thought_signature else "without"
    return f"called {calls[0].name} ({signed} thought signature), then answered {text[:40]!r}"


def _fix(model_id: str, where: str, error: str) -> str:
    hint = retired_hint(model_id)
    setting = _setting_for(where)
    if hint or "404" in error or "NOT_FOUND" in error:
        instead = f"{hint}: " if hint else f"{model_id} is not served to this key: "
        return instead + f"set {setting}"
    if "429" in error or "quota" in error.lower():
        return "the quota is exhausted: raise it in the Cloud console or wait, then check again"
    if "401" in error or "403" in error or "API key" in error:
        return "the key or credentials are refused: check GEMINI_API_KEY / ADC and the API"
    if "location" in error.lower() or "global" in error.lower():
        return "set INBOXFLOW_GEMINI_EMBEDDING_LOCATION to a region (e.g. us-central1)"
    return f"see the error above; the model is set by {setting}"


def _setting_for(where: str) -> str:
    kind, _, name = where.partition(" ")
    if kind == "role" or kind == "embedding":
        role = name or "embedding"
        return f"gemini.{role}.model in inboxflow.yaml or INBOXFLOW_GEMINI_{role.upper()}_MODEL"
    if kind == "task":
        return f"INBOXFLOW_GEMINI_MODEL_{name.upper()}"
    if kind == "profile":
        return f"model: of profile {name} in inboxflow.yaml (or INBOXFLOW_GEMINI_AGENT_MODEL)"
    return "graphs.assistant.model in inboxflow.yaml (or INBOXFLOW_GEMINI_ASSISTANT_MODEL)"


__all__ = ["PREFLIGHT_TASK", "CheckResult", "configured_models", "run_preflight"]

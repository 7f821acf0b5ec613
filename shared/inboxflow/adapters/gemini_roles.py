"""Which Gemini model, location, budget and time limits each role uses: the defaults, in one place.

A **role** is one kind of call: ``task`` (the structured-output LLM tasks of the
graphs), ``assistant`` (the personal assistant's function-calling turns), ``agent``
(each agent profile's turns) and ``embedding`` (the embedder). Each role has a
model, a Vertex location, a per-request timeout, a deadline for all attempts and
waits of one call, an output budget and a thinking setting.

Where a role's values come from, first found wins:

- model: ``INBOXFLOW_GEMINI_<ROLE>_MODEL``; for a task also ``INBOXFLOW_GEMINI_MODEL_<TASK>``
  first; then ``INBOXFLOW_GEMINI_MODEL`` (every role but ``embedding``); then the
  caller's own choice from ``inboxflow.yaml`` (a profile's ``model:``, the assistant
  graph's ``model:``); then ``gemini.<role>.model`` in ``inboxflow.yaml``; then ``DEFAULTS``.
- location (Vertex only): ``INBOXFLOW_GEMINI_<ROLE>_LOCATION``, ``gemini.<role>.location``,
  then ``GOOGLE_CLOUD_LOCATION`` (default ``global``); the embedder defaults to
  ``EMBEDDING_LOCATION`` when that is ``global`` (embedding models are regional).
- ``timeout_s``, ``deadline_s``, ``max_output_tokens``, ``thinking_level``,
  ``thinking_budget``: ``INBOXFLOW_GEMINI_<ROLE>_<FIELD>``, ``gemini.<role>.<field>``, ``DEFAULTS``.

Model IDs: Google's "Gemini deprecations" page
(https://ai.google.dev/gemini-api/docs/deprecations, as stored 2026-11: newest GA
Flash ``gemini-3.8-flash`` released 2026-09-02, ``gemini-3.5-flash-lite`` 2026-07-21,
neither with a shutdown date; ``gemini-2.5-flash`` and ``gemini-2.5-pro`` retired, with
``gemini-3.5-flash-lite`` and ``gemini-3.8-flash`` as their replacements).

Nothing here imports ``google.genai``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

Role = Literal["task", "assistant", "agent", "embedding"]
ROLES: tuple[Role, ...] = ("task", "assistant", "agent", "embedding")
GENERATING_ROLES: tuple[Role, ...] = ("task", "assistant", "agent")

DEVELOPER_API_VERSION = "v1beta"
"""google-genai 3.x sends Gemini API calls to ``v1`` unless told otherwise; the published
``google/ai/generativelanguage/v1`` protos have no ``systemInstruction``, ``tools``,
``responseSchema``, ``responseMimeType``, ``thinkingConfig`` nor ``Part.thoughtSignature``.
``v1beta`` has them all."""
VERTEX_API_VERSION = "v1"
"""Vertex AI's GA version: ``google/cloud/aiplatform/v1`` has every field we send."""

TASK_MODEL = "gemini-3.5-flash-lite"
"""Google's replacement for ``gemini-2.5-flash``: the structured-output tasks are short."""
CHAT_MODEL = "gemini-3.8-flash"
"""Google's replacement for ``gemini-2.5-pro``: multi-step function calling."""
EMBEDDING_MODEL = "gemini-embedding-001"
EMBEDDING_LOCATION = "us-central1"
"""Vertex serves embedding models in regions, not at ``global``."""

RETIRED_MODELS: dict[str, str] = {
    "gemini-2.5-flash": "gemini-3.5-flash-lite",
    "gemini-2.5-pro": "gemini-3.8-flash",
    "gemini-2.0-flash": "gemini-3.5-flash",
    "gemini-2.0-flash-001": "gemini-3.5-flash",
    "gemini-2.0-flash-lite": "gemini-3.1-flash-lite",
    "gemini-2.0-flash-lite-001": "gemini-3.1-flash-lite",
    "gemini-3-pro-preview": "gemini-3.1-pro-preview",
    "gemini-3-flash-preview": "gemini-3.5-flash",
    "gemini-3.7-flash": "gemini-3.8-flash",
    "text-embedding-004": "gemini-embedding-001",
}
"""Shut-down model IDs and Google's recommended replacement."""

ThinkingLevel = Literal["minimal", "low", "medium", "high"]
THINKING_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)


@dataclass(frozen=True)
class RoleSettings:
    """What one role asks for.

    Attributes:
        role: the role's name.
        model: the model ID.
        location: the Vertex location (ignored by the Gemini API).
        timeout_s: one request's timeout (also sent as ``X-Server-Timeout``).
        deadline_s: every attempt and wait of one call together; a 429 whose
            ``retryDelay`` does not fit in what is left fails as a quota error.
        max_output_tokens: the answer budget, thinking tokens included (None: the model's).
        thinking_level: Gemini 3 thinking level (None: the model's default).
        thinking_budget: thinking tokens (the older setting; not with ``thinking_level``).
        model_from_env: the model was set by the environment: it wins over a
            caller's own choice (a profile's ``model:``).
    """

    role: Role
    model: str
    location: str | None = None
    timeout_s: float = 60.0
    deadline_s: float = 90.0
    max_output_tokens: int | None = None
    thinking_level: str | None = None
    thinking_budget: int | None = None
    model_from_env: bool = False

    def model_for(self, requested: str | None) -> str:
        """The model of a call whose caller asked for ``requested`` (None or "": no choice)."""
        if self.model_from_env or not requested:
            return self.model
        return requested


DEFAULTS: dict[Role, RoleSettings] = {
    # Task nodes run with timeout_s >= 60 (lease = timeout + 30): two slow attempts fit.
    "task": RoleSettings(
        "task", TASK_MODEL, timeout_s=25.0, deadline_s=55.0, max_output_tokens=8192
    ),
    # Function-calling nodes run with timeout_s >= 120: a thinking turn may take a minute.
    "assistant": RoleSettings(
        "assistant", CHAT_MODEL, timeout_s=60.0, deadline_s=110.0, max_output_tokens=8192
    ),
    "agent": RoleSettings(
        "agent", CHAT_MODEL, timeout_s=60.0, deadline_s=110.0, max_output_tokens=8192
    ),
    # pipeline.retrieve embeds with timeout_s 30.
    "embedding": RoleSettings("embedding", EMBEDDING_MODEL, timeout_s=10.0, deadline_s=25.0),
}

MAX_OUTPUT_CAP = 65536
"""The largest output budget of the current Gemini text models."""

_NUMERIC = {
    "timeout_s": float,
    "deadline_s": float,
    "max_output_tokens": int,
    "thinking_budget": int,
}
_FIELDS = ("model", "location", *_NUMERIC, "thinking_level")


def resolve_roles(
    environ: Mapping[str, str],
    configured: Mapping[str, Mapping[str, Any]] | None = None,
    vertex: bool = False,
) -> dict[Role, RoleSettings]:
    """Every role's settings from the environment, ``inboxflow.yaml``'s ``gemini:`` and defaults.

    Args:
        environ: the process environment.
        configured: ``gemini:`` from ``inboxflow.yaml``, by role (values already validated).
        vertex: Vertex mode (locations matter).

    Raises:
        ValueError: a malformed number or thinking level, both thinking settings on
            one role, a deadline shorter than the timeout, or an embedder at ``global``.
    """
    every_model = (environ.get("INBOXFLOW_GEMINI_MODEL") or "").strip()
    region = (environ.get("GOOGLE_CLOUD_LOCATION") or "").strip() or "global"
    roles: dict[Role, RoleSettings] = {}
    for role in ROLES:
        values: dict[str, Any] = {}
        from_file = dict((configured or {}).get(role) or {})
        for name in _FIELDS:
            variable = f"INBOXFLOW_GEMINI_{role.upper()}_{name.upper()}"
            raw = (environ.get(variable) or "").strip()
            if raw:
                values[name] = _parse(variable, name, raw)
            elif name == "model" and every_model and role != "embedding":
                values[name] = every_model
        values["model_from_env"] = "model" in values
        for name in _FIELDS:
            if name not in values and from_file.get(name) is not None:
                values[name] = from_file[name]
        if "location" not in values:
            values["location"] = (
                EMBEDDING_LOCATION if role == "embedding" and region == "global" else region
            )
        settings = replace(DEFAULTS[role], **values)
        _check(settings, vertex)
        roles[role] = settings
    return roles


def _parse(variable: str, name: str, raw: str) -> Any:
    if name in _NUMERIC:
        try:
            value = _NUMERIC[name](raw)
        except ValueError:
            raise ValueError(f"{variable}: {raw!r} is not a number") from None
        if value <= 0:
            raise ValueError(f"{variable}: {raw!r} must be positive")
        return value
    if name == "thinking_level":
        return raw.lower()
    return raw


def _check(settings: RoleSettings, vertex: bool) -> None:
    where = f"gemini role {settings.role}"
    if settings.thinking_level is not None and settings.thinking_level not in THINKING_LEVELS:
        raise ValueError(
            f"{where}: thinking_level {settings.thinking_level!r} is not one of "
            f"{', '.join(THINKING_LEVELS)}"
        )
    if settings.thinking_level is not None and settings.thinking_budget is not None:
        raise ValueError(
            f"{where}: set thinking_level or thinking_budget, not both (Gemini answers 400)"
        )
    if settings.deadline_s < settings.timeout_s:
        raise ValueError(
            f"{where}: deadline_s {settings.deadline_s:g} is shorter than timeout_s "
            f"{settings.timeout_s:g}"
        )
    if vertex and settings.role == "embedding" and settings.location == "global":
        raise ValueError(
            f"{where}: Vertex does not serve embedding models at location global; "
            f"set INBOXFLOW_GEMINI_EMBEDDING_LOCATION (e.g. {EMBEDDING_LOCATION})"
        )


def retired_hint(model: str) -> str | None:
    """What to use instead of ``model`` when Google has shut it down, else None."""
    replacement = RETIRED_MODELS.get(model)
    return f"{model} is shut down; use {replacement}" if replacement else None


__all__ = [
    "CHAT_MODEL",
    "DEFAULTS",
    "DEVELOPER_API_VERSION",
    "EMBEDDING_LOCATION",
    "EMBEDDING_MODEL",
    "GENERATING_ROLES",
    "MAX_OUTPUT_CAP",
    "RETIRED_MODELS",
    "ROLES",
    "TASK_MODEL",
    "VERTEX_API_VERSION",
    "RoleSettings",
    "resolve_roles",
    "retired_hint",
]

"""Which language model and embedder this process uses, announced once in the logs.

Gemini when the environment configures it (``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``,
or ``GOOGLE_GENAI_USE_VERTEXAI=true`` with ``GOOGLE_CLOUD_PROJECT``), else the
offline deterministic model. ``INBOXFLOW_LLM=offline`` forces the offline model
whatever else is set; ``INBOXFLOW_LLM=gemini`` makes a missing configuration an error.

Importing this module does not import ``google.genai``; building a Gemini adapter does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from .adapters.gemini_llm import GeminiSettings
from .adapters.offline_llm import OfflineModel
from .ports.embeddings import Embedder
from .ports.llm import LanguageModel

log = logging.getLogger("inboxflow.llm")

_announced: set[str] = set()
_announce_lock = threading.Lock()


def gemini_settings(
    environ: Mapping[str, str], configured: Mapping[str, Any] | None = None
) -> GeminiSettings | None:
    """The Gemini settings ``environ`` (the entry point's environment) configures, or None.

    Args:
        environ: the environment to read (the entry point's).
        configured: ``gemini:`` of ``inboxflow.yaml`` by role (``GeminiConfig.by_role()``).

    Raises:
        ValueError: ``INBOXFLOW_LLM`` is not ``offline``/``gemini``, or it says
            ``gemini`` but no key or Vertex project is configured.
    """
    forced = _forced(environ)
    if forced not in ("", "offline", "gemini"):
        raise ValueError(f"INBOXFLOW_LLM={forced!r}: expected offline or gemini")
    if forced == "offline":
        return None
    settings = GeminiSettings.from_env(environ, configured)
    if settings is None and forced == "gemini":
        raise ValueError(
            "INBOXFLOW_LLM=gemini but neither GEMINI_API_KEY/GOOGLE_API_KEY nor "
            "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT is set"
        )
    return settings


def choose_llm(
    environ: Mapping[str, str], configured: Mapping[str, Any] | None = None
) -> LanguageModel:
    """Gemini if configured, else the offline deterministic model; announced once per process.

    Args:
        environ: the environment to read (the entry point's).
        configured: ``gemini:`` of ``inboxflow.yaml`` by role.
    """
    settings = gemini_settings(environ, configured)
    if settings is None:
        reason = (
            "INBOXFLOW_LLM=offline"
            if _forced(environ) == "offline"
            else "no GEMINI_API_KEY / Vertex settings"
        )
        # A deployed function without Gemini answers with heuristics: worth a warning.
        level = logging.WARNING if environ.get("K_SERVICE") else logging.INFO
        _announce("llm", level, f"LLM: offline deterministic model ({reason})")
        return OfflineModel()
    from .adapters.gemini_llm import GeminiModel

    model = GeminiModel(settings)
    _announce("llm", logging.INFO, f"LLM: {settings.describe()}")
    return model


def choose_embedder(
    environ: Mapping[str, str], configured: Mapping[str, Any] | None = None
) -> Embedder | None:
    """The Gemini embedder if Gemini is configured, else None (use the offline embedder).

    Arguments as for ``choose_llm``.
    """
    settings = gemini_settings(environ, configured)
    if settings is None:
        _announce("embedder", logging.INFO, "Embeddings: offline (no Gemini configured)")
        return None
    from .adapters.gemini_embedder import GeminiEmbedder

    embedder = GeminiEmbedder(settings)
    role = settings.role("embedding")
    where = f" in {role.location}" if settings.mode == "vertex" else ""
    _announce(
        "embedder", logging.INFO, f"Embeddings: {embedder.model}{where} ({settings.describe()})"
    )
    return embedder


def _forced(environ: Mapping[str, str]) -> str:
    """What ``INBOXFLOW_LLM`` forces (``offline``, ``gemini``), or ``""``."""
    return (environ.get("INBOXFLOW_LLM") or "").strip().lower()


def _announce(what: str, level: int, message: str) -> None:
    key = f"{what}: {message}"
    with _announce_lock:
        if key in _announced:
            return
        _announced.add(key)
    log.log(level, message)


def _reset_announcements() -> None:
    """Forget what was announced (tests)."""
    with _announce_lock:
        _announced.clear()


__all__ = ["choose_embedder", "choose_llm", "gemini_settings"]

"""Runtimes for tests, built through the composition root (``inboxflow.services``) with overrides."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.runtime import Runtime, RuntimeOptions
from inboxflow.services import build_runtime
from inboxflow.settings import Settings


def embedded_settings(home: Path, **changes: Any) -> Settings:
    """Embedded-default settings under ``home`` (the test's environment, which conftest isolates)."""
    values: dict[str, Any] = {
        "home": home,
        "project": "inboxflow-test",
        "store": "sqlite",
        "bus": "inprocess",
        "tasks": "sqlite",
        "workspace": "store",
        "environ": dict(os.environ),
    }
    return Settings(**{**values, **changes})


def runtime_for(home: Path, **overrides: Any) -> Runtime:
    """``build_runtime`` on the embedded default, the offline model and quick retries.

    Args:
        home: folder of the SQLite store (unless ``store`` is overridden).
        **overrides: ``clock``, ``graphs``, ``options``, ``settings`` or any ``Services`` part.
    """
    settings = overrides.pop("settings", None) or embedded_settings(home)
    overrides.setdefault("llm", OfflineModel())
    overrides.setdefault("options", RuntimeOptions(retry_base_s=0.01))
    return build_runtime(settings, **overrides)

"""Runtimes for tests, built through the composition root (``inboxflow.services``) with overrides."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.engine.runtime import Runtime, RuntimeOptions
from inboxflow.ports.wired import Ports
from inboxflow.services import build_ports, build_runtime
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
        **overrides: ``clock``, ``graphs``, ``options``, ``settings``, any port (``Ports``)
            or ``pipeline_settings`` (that graph's settings, as ``ports.graph_settings.use``).
    """
    settings = overrides.pop("settings", None) or embedded_settings(home)
    pipeline = overrides.pop("pipeline_settings", None)
    overrides.setdefault("llm", OfflineModel())
    overrides.setdefault("options", RuntimeOptions(retry_base_s=0.01))
    runtime = build_runtime(settings, **overrides)
    if pipeline is not None:
        runtime.ports.graph_settings.use("pipeline", pipeline)
    return runtime


def ports_for(home: Path, **given: Any) -> Ports:
    """``build_ports`` on the embedded default under ``home`` with the offline model.

    For a node context built by hand: every port the root would wire, ``given``
    ones (``store``, ``clock``, ``workspace`` ...) used as given.
    """
    given.setdefault("llm", OfflineModel())
    clock = given.pop("clock", None)
    return build_ports(embedded_settings(home), clock=clock, **given)

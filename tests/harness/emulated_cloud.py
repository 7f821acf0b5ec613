"""A graph's nodes as separate functions-framework processes on the Pub/Sub and Firestore
emulators (the production topology), with a runtime of this process on the same emulators."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from inboxflow.dev.devcloud import DevCloud
from inboxflow.engine.runtime import Runtime
from inboxflow.graphs import get_graph
from inboxflow.services import build_runtime
from inboxflow.settings import Settings


@contextmanager
def graph_functions(
    graph: str,
    firestore_emulator: Any,
    pubsub_emulator: Any,
    monkeypatch: pytest.MonkeyPatch,
    **extra_env: str,
) -> Iterator[tuple[DevCloud, Runtime]]:
    """Start one function per node of ``graph`` behind push subscriptions, in a project of its own.

    Yields:
        The running cloud and a runtime (Firestore + Pub/Sub) to start and inspect traces with.
    """
    project = f"{graph[:12]}-{uuid.uuid4().hex[:10]}"
    env = {
        "GOOGLE_CLOUD_PROJECT": project,
        "INBOXFLOW_STORE": "firestore",
        "INBOXFLOW_BUS": "pubsub",
        **firestore_emulator.env,
        **pubsub_emulator.env,
        **extra_env,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with DevCloud(project, dict(env)) as cloud:
        cloud.start([get_graph(graph, os.environ)])
        runtime = build_runtime(Settings.from_env(os.environ))
        try:
            yield cloud, runtime
        finally:
            runtime.bus.close()

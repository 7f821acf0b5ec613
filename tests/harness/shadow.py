"""A world of every built-in graph's samples on the embedded default, with or without ``shadow:``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.config import InboxflowConfig, ShadowConfig, load_config
from inboxflow.engine.runtime import Runtime
from inboxflow.graphs import graph_registry
from inboxflow.mail import Email, load_email_file
from inboxflow.routing import RouteDecision
from inboxflow.schema import COLLECTIONS
from inboxflow.start import start_email_trace
from inboxflow.workspace import seed_workspace
from tests.harness.paths import ROOT as REPO
from tests.harness.runtimes import runtime_for

GRAPHS = ("pipeline", "support", "assistant", "planner", "agent")
PROFILE = {"agent": "pharmacy"}
"""The profile each profile-taking graph's samples run with (the repo's inboxflow.yaml has it)."""


def samples(graph: str, count: int = 4) -> list[Email]:
    """The first ``count`` samples of ``graph``."""
    root = REPO / "shared" / "inboxflow" / "graphs" / graph / "samples"
    files = sorted(
        path
        for path in root.rglob("*")
        if path.suffix in (".eml", ".json") and path.name != "drugs.json"
    )
    return [load_email_file(path) for path in files[:count]]


def repo_config(shadow: ShadowConfig | None) -> InboxflowConfig:
    """The repo's inboxflow.yaml with ``shadow``."""
    config = load_config(REPO / "inboxflow.yaml", graph_registry())
    return config.model_copy(update={"shadow": shadow})


@dataclass
class World:
    """A runtime on a fresh embedded store, its bus and clock."""

    runtime: Runtime
    bus: InProcessBus
    store: SqliteCheckpointStore

    def start(self, graph: str, email: Email, trace_id: str | None = None) -> str:
        """Start ``email`` on ``graph`` (as ingest would) and run the bus dry."""
        decision = RouteDecision(graph=graph, profile=PROFILE.get(graph))
        started = start_email_trace(self.runtime, email, decision, trace_id=trace_id)
        self.bus.drain()
        return started.trace_id

    def run_samples(self, graphs: Sequence[str] = GRAPHS, count: int = 4) -> list[str]:
        """Every graph's first ``count`` samples; the live trace ids."""
        return [self.start(graph, email) for graph in graphs for email in samples(graph, count)]

    def documents(self) -> dict[str, list[tuple[str, dict[str, Any]]]]:
        """Every top-level collection's documents (steps are under their trace)."""
        return {
            collection.name: self.store.list(collection.name)
            for collection in COLLECTIONS
            if collection.parent is None
        }


def world(
    home: Path, shadow: ShadowConfig | None, bus: InProcessBus | None = None, **overrides: Any
) -> World:
    """A world under ``home`` whose inboxflow.yaml has ``shadow`` (on ``bus``, default a new one)."""
    home.mkdir(parents=True, exist_ok=True)
    bus = bus if bus is not None else InProcessBus(clock=FakeClock())
    clock = bus.clock
    store = SqliteCheckpointStore(home / "inboxflow.db")
    seed_workspace(store, clock.now())
    runtime = runtime_for(
        home,
        clock=clock,
        store=store,
        bus=bus,
        workspace=StoreWorkspace(store, clock),
        **{"config": repo_config(shadow), **overrides},
    )
    return World(runtime, bus, store)

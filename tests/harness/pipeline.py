"""Builds the real pipeline on the embedded default with a fake clock, for reliability tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.dev.cli.local import sample_inbox
from inboxflow.engine.runtime import Runtime
from inboxflow.envelope import Envelope
from inboxflow.mail import load_email_file
from inboxflow.ports.checkpoint import CheckpointStore
from inboxflow.workspace import seed_workspace
from tests.harness.runtimes import runtime_for


class StormBus(InProcessBus):
    """Delivers every distinct message ``copies`` times; re-publications of a message
    already seen (rule 1 repairs) are delivered once more, as Pub/Sub would."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: set[tuple[str, int, str]] = set()

    def publish(self, envelopes: Sequence[Envelope]) -> None:
        now = self.clock.now()
        for envelope in envelopes:
            key = (envelope.trace_id, envelope.step, envelope.node)
            times = 1 if key in self.seen else self.copies
            self.seen.add(key)
            self.published += 1
            for _ in range(times):
                self.push_raw(envelope.to_pubsub_message(), not_before=now)


def sample_emails() -> list[dict[str, Any]]:
    """The bundled samples as email dicts."""
    return [load_email_file(path).model_dump(mode="json") for path in sample_inbox()]


def build(
    tmp_path: Path, bus: InProcessBus | None = None, store: CheckpointStore | None = None
) -> Runtime:
    if bus is None:
        bus = InProcessBus(clock=FakeClock())
    clock = bus.clock
    if store is None:
        store = SqliteCheckpointStore(tmp_path / "pipeline.db")
    seed_workspace(store, clock.now())
    return runtime_for(
        tmp_path, clock=clock, store=store, bus=bus, workspace=StoreWorkspace(store, clock)
    )


def dispatch_effects(store: CheckpointStore, trace_id: str) -> list[dict[str, Any]]:
    """Effect-journal entries of the dispatch node of a trace."""
    return [
        doc
        for doc_id, doc in store.list("effects")
        if doc_id.startswith(f"{trace_id}:") and doc_id.endswith(":dispatch")
    ]


def mailbox_writes(store: CheckpointStore, trace_id: str) -> list[dict[str, Any]]:
    """Drafts and sent messages the workspace holds for a trace."""
    found = []
    for collection in ("mailbox_drafts", "mailbox_sent"):
        for _, doc in store.list(collection):
            if str(doc.get("trace_key", "")).startswith(f"{trace_id}:"):
                found.append(doc)
    return found

"""Helpers for the support graph's tests: an embedded runtime with the KB seeded, samples, emails."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.engine.runtime import Runtime
from inboxflow.graphs.support.graph import SAMPLES as SAMPLE_DIR
from inboxflow.graphs.support.tickets import Ticket, TicketStore
from inboxflow.knowledge import knowledge_base_for, seed_knowledge
from inboxflow.mail import Email, load_email_file
from tests.harness.runtimes import runtime_for

SAMPLES = sorted(p for p in SAMPLE_DIR.iterdir() if p.suffix == ".json")
MAILBOX = "support@brightlane.io"


def sample(prefix: str) -> Email:
    """The support sample whose file name starts with ``prefix``."""
    return load_email_file(next(p for p in SAMPLES if p.name.startswith(prefix)))


def email(sender: str, subject: str, body: str, message_id: str, **fields: Any) -> Email:
    """A customer email to the support mailbox."""
    values: dict[str, Any] = {
        "message_id": message_id,
        "thread_id": message_id,
        "mailbox": MAILBOX,
        "sender": {"address": sender},
        "subject": subject,
        "body_text": body,
        "received_at": datetime(2027, 1, 14, 9, 0, tzinfo=UTC),
    }
    return Email.model_validate({**values, **fields})


def build(tmp_path: Path, **kw: Any) -> Runtime:
    """Embedded runtime (store workspace: drafts land in the store), the sample KB seeded.

    ``store`` and ``bus`` may be given (Firestore on the emulator, a duplicating bus).
    """
    bus = kw.pop("bus", None) or InProcessBus(clock=FakeClock())
    store = kw.pop("store", None) or SqliteCheckpointStore(tmp_path / "support.db")
    runtime = runtime_for(
        tmp_path,
        clock=bus.clock,
        store=store,
        bus=bus,
        workspace=StoreWorkspace(store, bus.clock),
        **kw,
    )
    seed_knowledge(knowledge_base_for(runtime.ports))
    return runtime


def run(runtime: Runtime, message: Email) -> dict[str, Any]:
    """Start the support graph on ``message``, drain the bus; the trace's checkpoint as a dict."""
    trace_id = runtime.start("support", {"email": message.model_dump(mode="json")})
    runtime.bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None
    return {"trace_id": trace_id, "status": checkpoint.status, **checkpoint.state}


def tickets(runtime: Runtime, customer_id: str | None = None) -> list[Ticket]:
    """The tickets in the runtime's store."""
    return TicketStore(runtime.store).list(customer_id)

"""Helpers for the assistant graph's tests: runtime, samples, the owner deciding a pause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inboxflow.engine.runtime import Runtime
from inboxflow.engine.waits import Approval
from inboxflow.graphs.assistant.graph import ASSISTANT
from inboxflow.mail import Email, load_email_file
from inboxflow.routing import RouteDecision
from inboxflow.start import start_email_trace

OWNER = "alex@brightlane.io"
SAMPLES = sorted(p for p in (ASSISTANT.samples or Path()).iterdir() if p.suffix == ".eml")


def sample(prefix: str, **changes: Any) -> Email:
    """The assistant sample whose file name starts with ``prefix`` (fields replaced by ``changes``)."""
    email = load_email_file(next(p for p in SAMPLES if p.name.startswith(prefix)))
    return email.model_copy(update=changes) if changes else email


def start(runtime: Runtime, email: Email) -> str:
    """Start the assistant on ``email`` and run until it ends or pauses."""
    decision = RouteDecision("assistant", None, "test", mailbox=email.mailbox)
    trace_id = start_email_trace(runtime, email, decision).trace_id
    runtime.bus.drain()
    return trace_id


def pending(runtime: Runtime, trace_id: str) -> Approval:
    """The trace's one pending approval."""
    (approval,) = [a for a in runtime.ports.approvals.pending() if a.trace_id == trace_id]
    return approval


def decide(
    runtime: Runtime,
    trace_id: str,
    decision: str,
    edit: dict[str, str] | None = None,
    comment: str | None = None,
) -> Approval:
    """The owner decides the trace's pending pause (through the approval service); run on."""
    approval = pending(runtime, trace_id)
    service = runtime.ports.approvals
    service.decisions.decide_as(approval.approval_id, OWNER, decision, edit, comment)
    runtime.bus.drain()
    return approval


def state(runtime: Runtime, trace_id: str) -> dict[str, Any]:
    """The trace's state."""
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None
    return checkpoint.state


def sent(runtime: Runtime, trace_id: str) -> list[dict[str, Any]]:
    """Messages the trace sent (stamped with its journal keys)."""
    return [
        doc
        for _, doc in runtime.store.list("mailbox_sent")
        if str(doc.get("trace_key", "")).startswith(f"{trace_id}:")
    ]

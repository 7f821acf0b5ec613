"""How traces look in the terminal: one row per trace, one row per step."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table
from rich.text import Text

from ..graph import END
from ..ports.checkpoint import Checkpoint, CheckpointStore, StepLog

STATUS_STYLE = {
    "done": "green",
    "waiting": "yellow",
    "rejected": "magenta",
    "needs_review": "red",
    "failed": "red bold",
    "running": "cyan",
}


def route_of(logs: list[StepLog]) -> str:
    """The nodes a trace went through, and where it stopped."""
    hops = [entry.step_name for entry in logs if entry.step_order > 0]
    last = logs[-1] if logs else None
    tail = ""
    if last is not None and last.routed_to and last.routed_to.startswith("pause:"):
        tail = " ⏸ human approval"
    elif last is not None and last.routed_to == END:
        tail = " → END"
    elif last is not None and last.error:
        tail = " ✗"
    return " → ".join(hops) + tail


def preview(text: str | None, width: int = 60) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def summary_row(store: CheckpointStore, checkpoint: Checkpoint) -> dict[str, Any]:
    """What the trace table shows for one trace."""
    state = checkpoint.state
    classification = state.get("classification") or {}
    draft = (state.get("draft") or {}).get("body")
    if checkpoint.pause:
        draft = (checkpoint.pause.get("payload") or {}).get("body") or draft
    email = state.get("email") or {}
    sender = email.get("sender") or {}
    return {
        "trace_id": checkpoint.trace_id,
        "from": sender.get("address") if isinstance(sender, dict) else str(sender),
        "subject": email.get("subject", ""),
        "category": classification.get("category", "-"),
        "confidence": classification.get("confidence"),
        "route": route_of(store.step_logs(checkpoint.trace_id)),
        "status": checkpoint.status,
        "draft": preview(draft)
        if draft
        else ("" if checkpoint.error is None else preview(checkpoint.error)),
    }


def trace_table(rows: list[dict[str, Any]], title: str) -> Table:
    """The per-email table of the demo and of ``inboxflow run``."""
    table = Table(title=title, show_lines=True, expand=True)
    table.add_column("trace_id", style="bold", no_wrap=True)
    table.add_column("email", ratio=2)
    table.add_column("category", no_wrap=True)
    table.add_column("conf.", justify="right", no_wrap=True)
    table.add_column("route taken", ratio=3)
    table.add_column("status", no_wrap=True)
    table.add_column("draft preview", ratio=3)
    for row in rows:
        confidence = "-" if row["confidence"] is None else f"{row['confidence']:.2f}"
        table.add_row(
            row["trace_id"],
            Text(f"{row['from']}\n{preview(row['subject'], 50)}"),
            row["category"],
            confidence,
            row["route"],
            Text(row["status"], style=STATUS_STYLE.get(row["status"], "")),
            Text(row["draft"]),
        )
    return table


def compact(value: Any, width: int = 90) -> str:
    """A JSON value on one line, shortened for a table cell."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"

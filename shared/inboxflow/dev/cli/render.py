"""How traces look in the terminal: one row per trace, one row per step."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from inboxflow.engine.graph import Graph, TraceSummary
from inboxflow.engine.step import END
from inboxflow.graphs import graph_registry
from inboxflow.ports.checkpoint import Checkpoint, CheckpointStore, StepLog, TraceRoute

STATUS_STYLE = {
    "done": "green",
    "waiting": "yellow",
    "rejected": "magenta",
    "needs_review": "red",
    "failed": "red bold",
    "running": "cyan",
}


PIPED_WIDTH = 160
"""Columns of the output when it goes to a pipe, a file or a CI log rather than a terminal."""


def cli_console(stderr: bool = False, highlight: bool = True) -> Console:
    """The console of a command's output, as wide as the terminal.

    Rich assumes 80 columns when the output is not a terminal, which squeezes the
    per-email table to unreadable slivers: there it gets ``PIPED_WIDTH`` columns
    (``COLUMNS`` in the environment still decides when set).
    """
    console = Console(stderr=stderr, highlight=highlight)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console.width = PIPED_WIDTH
    return console


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


def summary_row(
    store: CheckpointStore, checkpoint: Checkpoint, graphs: Mapping[str, Graph] | None = None
) -> dict[str, Any]:
    """What the trace table shows for one trace: the graph's own ``summary`` of it,
    how it was routed, and why it stopped when it did not run (loop protection, an error).

    Args:
        store: where the step log is.
        checkpoint: the trace.
        graphs: the graphs by name (default: the registry); a trace of a graph
            not among them shows no summary.
    """
    registry = graph_registry(os.environ) if graphs is None else graphs
    graph = registry.get(checkpoint.graph)
    summary = graph.summary(checkpoint) if graph is not None else TraceSummary()
    route = checkpoint.route
    reason = (route.blocked if route is not None else None) or checkpoint.error or ""
    email = checkpoint.state.get("email")
    email = email if isinstance(email, dict) else {}
    sender = email.get("sender") or {}
    logs = store.step_logs(checkpoint.trace_id)
    return {
        "trace_id": checkpoint.trace_id,
        "from": sender.get("address", "") if isinstance(sender, dict) else str(sender),
        "subject": email.get("subject", ""),
        "graph": checkpoint.graph,
        "rule": (route.rule if route is not None else None) or "-",
        "profile": route.profile if route is not None else None,
        "category": summary.label,
        "confidence": summary.confidence,
        "route": "not answered → END" if route is not None and route.blocked else route_of(logs),
        "status": checkpoint.status,
        "reason": reason,
        "draft": preview(summary.preview or reason),
    }


def routed_line(route: TraceRoute) -> str:
    """How ``inboxflow trace`` says a trace was started: the rule, the profile, a block."""
    rule = (
        f"rule [bold]{escape(route.rule)}[/bold]" if route.rule else "no rule (default or --graph)"
    )
    parts = [f"routed by {rule}"]
    if route.profile:
        parts.append(f"profile {route.profile}")
    if route.mailbox:
        parts.append(f"mailbox {route.mailbox}")
    line = "  ".join(parts)
    if route.blocked:
        line += f"\n[magenta]not answered, {escape(route.blocked)}[/magenta]"
    return line


def trace_table(rows: list[dict[str, Any]], title: str) -> Table:
    """The per-email table of the demo and of ``inboxflow run``."""
    table = Table(title=title, show_lines=True, expand=True)
    table.add_column("trace_id", style="bold", no_wrap=True)
    table.add_column("email", ratio=2)
    table.add_column("graph", no_wrap=True)
    table.add_column("rule", ratio=1)
    table.add_column("category", max_width=34, overflow="fold")
    table.add_column("conf.", justify="right", no_wrap=True)
    table.add_column("route taken", ratio=3)
    table.add_column("status", no_wrap=True)
    table.add_column("draft / reason", ratio=3)
    for row in rows:
        confidence = "-" if row["confidence"] is None else f"{row['confidence']:.2f}"
        graph = row["graph"] + (f"\n{row['profile']}" if row.get("profile") else "")
        table.add_row(
            row["trace_id"],
            Text(f"{row['from']}\n{preview(row['subject'], 50)}"),
            graph,
            row["rule"],
            row["category"],
            confidence,
            row["route"],
            Text(row["status"], style=STATUS_STYLE.get(row["status"], "")),
            Text(row["draft"], style="magenta" if row["draft"] == preview(row["reason"]) else ""),
        )
    return table


def compact(value: Any, width: int = 90) -> str:
    """A JSON value on one line, shortened for a table cell."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"

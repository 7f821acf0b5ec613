"""``inboxflow runs``: the agent runs in the store (``agent_runs``), newest first."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from inboxflow.dev.cli.options import dev_option, home_option, home_store
from inboxflow.dev.cli.render import cli_console
from inboxflow.ports.documents import Filter
from inboxflow.schema import AGENT_RUNS


def agent_runs(
    store: Any, profile: str | None = None, status: str | None = None, limit: int = 50
) -> list[dict[str, Any]]:
    """Agent run records, newest first, filtered by profile and status."""
    where: list[Filter] = []
    if profile:
        where.append(("profile", "==", profile))
    if status:
        where.append(("status", "==", status))
    found = [doc for _, doc in store.list(AGENT_RUNS.name, where=where)]
    found.sort(key=lambda doc: (-(doc.get("created_at") or 0), doc.get("run_id", "")))
    return found[:limit]


def runs(
    profile: str | None = typer.Option(None, help="Only this agent profile."),
    status: str | None = typer.Option(
        None, help="Only this status: completed, max_iterations, error, escalated."
    ),
    limit: int = typer.Option(50, help="At most this many runs."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per run."),
    dev: bool = dev_option(),
    home: Path = home_option(),
) -> None:
    """Agent runs: profile, status, turns, tool calls, the final message or the error."""
    store = home_store(home, dev)
    found = agent_runs(store, profile, status, limit)
    if as_json:
        for doc in found:
            typer.echo(json.dumps(doc, ensure_ascii=False, default=str))
        return
    table = Table(title=f"{len(found)} agent runs")
    for column in (
        "run_id",
        "when",
        "profile",
        "status",
        "turns",
        "tools",
        "final message / error",
    ):
        table.add_column(column)
    for doc in found:
        tools = [entry.get("tool", "?") for entry in json.loads(doc.get("tool_calls_log") or "[]")]
        when = datetime.fromtimestamp(float(doc.get("created_at") or 0), UTC)
        table.add_row(
            str(doc.get("run_id")),
            when.strftime("%Y-%m-%d %H:%M"),
            str(doc.get("profile")),
            str(doc.get("status")),
            str(doc.get("iterations")),
            ", ".join(tools),
            str(doc.get("final_message") or doc.get("error") or "")[:80],
        )
    cli_console().print(table)

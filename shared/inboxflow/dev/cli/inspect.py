"""``inboxflow trace`` / ``traces`` / ``failures``: look inside the store."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.table import Table

from inboxflow.dev.cli.options import dev_option, home_option, home_store
from inboxflow.dev.cli.render import (
    STATUS_STYLE,
    cli_console,
    compact,
    routed_line,
    summary_row,
    trace_table,
)
from inboxflow.engine.runtime import fold
from inboxflow.ports.documents import DocumentStore, Filter
from inboxflow.schema import FAILURES, TRACES
from inboxflow.settings import Settings


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S")


def trace(
    trace_id: str = typer.Argument(..., help="The trace to show."),
    at: int | None = typer.Option(None, "--at", help="Print the full state after this step."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    dev: bool = dev_option(),
    home: Path = home_option(),
) -> None:
    """The step log of a trace: step, node, latency, state delta, errors; --at STEP for the full state."""
    console = cli_console()
    store = home_store(home, dev)
    checkpoint = store.get_trace(trace_id)
    if checkpoint is None:
        console.print(
            f"[red]no trace {trace_id}[/red] in {Settings.from_env(os.environ).store} store"
        )
        raise typer.Exit(1)
    logs = store.step_logs(trace_id)
    if at is not None:
        if not 0 <= at <= logs[-1].step_order:
            console.print(f"[red]trace {trace_id} has steps 0..{logs[-1].step_order}[/red]")
            raise typer.Exit(1)
        state = fold(logs, upto=at, checkpoint_state=checkpoint.state)
        if as_json:
            typer.echo(json.dumps(state, indent=2, ensure_ascii=False))
        else:
            console.rule(f"state of {trace_id} after step {at} ({logs[at].step_name})")
            console.print_json(json.dumps(state, ensure_ascii=False))
        return
    if as_json:
        typer.echo(
            json.dumps(
                {"checkpoint": checkpoint.model_dump(), "steps": [e.model_dump() for e in logs]},
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    status_style = STATUS_STYLE.get(checkpoint.status, "")
    console.print(
        f"trace [bold]{trace_id}[/bold]  graph {checkpoint.graph}  "
        f"status [{status_style}]{checkpoint.status}[/{status_style}]  next node {checkpoint.node}  "
        f"updated {_when(checkpoint.updated_at)} UTC"
    )
    if checkpoint.route is not None:
        console.print(routed_line(checkpoint.route), soft_wrap=True)
    if checkpoint.forked_from is not None:
        origin = checkpoint.forked_from
        console.print(f"forked from trace {origin.trace_id} at step {origin.step}")
    for fork in checkpoint.forks:
        console.print(f"forked at step {fork.step} into trace {fork.trace_id}")
    if checkpoint.error:
        console.print(f"[red]error:[/red] {checkpoint.error}")
    table = Table(show_lines=True, expand=True)
    for column in ("step", "node", "ms", "routed to", "state delta", "tools / llm", "error"):
        table.add_column(column, overflow="fold")
    for entry in logs:
        calls = [f"tool {c['name']}" + (" ✗" if c.get("error") else "") for c in entry.tool_calls]
        calls += [
            f"llm {c['task']} ({c.get('model', '?')}, {c.get('latency_ms', 0):.1f} ms)"
            for c in entry.llm_calls
        ]
        delta = {**entry.output_delta, **{k: "<removed>" for k in entry.removed}}
        for field_name, change in entry.output_patch.items():
            if "append" in change:
                delta[f"{field_name} +{len(change['append'])}"] = change["append"]
            delta.update({f"{field_name}.{k}": v for k, v in change.get("set", {}).items()})
            delta.update({f"{field_name}.{k}": "<removed>" for k in change.get("unset", ())})
        table.add_row(
            str(entry.step_order),
            entry.step_name,
            f"{entry.latency_ms:.2f}",
            "\n".join(
                [entry.routed_to or ""]
                + [f"guard {g['guard']}: {g['reason']}" for g in entry.guards]
            ),
            "\n".join(f"{k}: {compact(v)}" for k, v in delta.items()),
            "\n".join(calls),
            entry.error or "",
        )
    console.print(table)
    if checkpoint.pause:
        console.print(
            f"[yellow]waiting for {checkpoint.pause['kind']}[/yellow] by "
            f"{', '.join(checkpoint.pause['reviewers']) or 'a reviewer'}; pending payload:"
        )
        console.print_json(json.dumps(checkpoint.pause["payload"], ensure_ascii=False))
    recorded = sorted(
        (doc for _, doc in store.list(FAILURES.name, where=[("trace_id", "==", trace_id)])),
        key=lambda doc: float(doc.get("at", 0)),
    )
    if recorded:  # e.g. a reply in its thread that was not the customer's (refused, not read)
        console.print(f"[yellow]{len(recorded)} recorded failures[/yellow] (inboxflow failures):")
        for doc in recorded:
            console.print(
                f"  {_when(doc['at'])} UTC  {doc['reason']}", soft_wrap=True, markup=False
            )
    console.print(f"full state at any step: [bold]inboxflow trace {trace_id} --at STEP[/bold]")


def traces(
    status: str | None = typer.Option(None, help="Only traces with this status."),
    stuck: bool = typer.Option(
        False,
        "--stuck",
        help="Only running traces no delivery runs: no live lease on their step, "
        "quiet for longer than the node's timeout (repair: inboxflow retry TRACE).",
    ),
    limit: int = typer.Option(30, help="How many, newest first."),
    dev: bool = dev_option(),
    home: Path = home_option(),
) -> None:
    """Recent traces with their category, route and status; --stuck for the ones nothing runs."""
    store = home_store(home, dev)
    if stuck:
        _stuck_traces(store, limit)
        return
    where: list[Filter] = [("status", "==", status)] if status else []
    rows = store.list(TRACES.name, where=where, order_by="updated_at", descending=True, limit=limit)
    from inboxflow.ports.checkpoint import Checkpoint

    table_rows = [summary_row(store, Checkpoint.model_validate(doc)) for _, doc in rows]
    cli_console().print(trace_table(table_rows, f"{len(table_rows)} most recent traces"))


def _stuck_traces(store: DocumentStore, limit: int) -> None:
    import time

    from inboxflow.graphs import graph_registry
    from inboxflow.stuck import stuck_traces

    found = stuck_traces(store, graph_registry(os.environ), time.time(), limit)
    table = Table(title=f"{len(found)} stuck traces", expand=True)
    for column in ("trace_id", "graph", "node", "step", "quiet", "node timeout", "lease"):
        table.add_column(column, overflow="fold")
    for item in found:
        checkpoint = item.checkpoint
        table.add_row(
            checkpoint.trace_id,
            checkpoint.graph,
            checkpoint.node,
            str(checkpoint.step),
            f"{item.quiet_s:.0f} s",
            f"{item.timeout_s} s",
            "none taken"
            if item.lease_expired_at is None
            else f"expired {_when(item.lease_expired_at)} UTC",
        )
    console = cli_console()
    console.print(table)
    if found:
        console.print("publish each one's step again: [bold]inboxflow retry TRACE[/bold]")


def failures(
    limit: int = typer.Option(20, help="How many, newest first."),
    dev: bool = dev_option(),
    home: Path = home_option(),
) -> None:
    """Acknowledged messages that were not valid envelopes for a live trace."""
    store = home_store(home, dev)
    rows = store.list(FAILURES.name, order_by="at", descending=True, limit=limit)
    table = Table(title=f"{len(rows)} recorded failures", expand=True)
    for column in ("at (UTC)", "trace", "node", "reason"):
        table.add_column(column, overflow="fold")
    for _, doc in rows:
        table.add_row(
            _when(doc["at"]), doc.get("trace_id", "-"), doc.get("node", "-"), doc["reason"]
        )
    cli_console().print(table)

"""``inboxflow eval shadow``: how the shadow did beside the live graph, and what it cost.

Reads the shadow traces (``shadow:`` of inboxflow.yaml, ``engine/shadow.py``) of the
embedded store under ``--home``, the emulated cloud (``--dev``) or Firestore
(``--project``), and compares each with its live trace and its reviewer's decision
(``dev/eval/shadow.py``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import typer
from rich.table import Table

from inboxflow.dev.cli.options import dev_option, home_option, home_store
from inboxflow.dev.cli.render import cli_console

PROJECT = typer.Option(
    None, "--project", help="Read Firestore in this Google Cloud project (not the embedded store)."
)


def shadow_report(
    since: str = typer.Option("7d", help="Shadow traces started within this (7d, 12h, 30m)."),
    as_json: bool = typer.Option(False, "--json", help="The report as one JSON object."),
    home: Path = home_option(),
    dev: bool = dev_option(),
    project: str | None = PROJECT,
) -> None:
    """Compare the shadow's traces with the live graph's and the reviewers' decisions; its cost."""
    from inboxflow.dev.eval.shadow import shadow_report as report_of
    from inboxflow.dev.eval.spans import parse_since
    from inboxflow.graphs import graph_registry

    try:
        window_s = parse_since(since)
    except ValueError as exc:
        typer.echo(f"error: --since: {exc}", err=True)
        raise typer.Exit(2) from None
    if project:
        os.environ.update(INBOXFLOW_STORE="firestore", GOOGLE_CLOUD_PROJECT=project)
    store = home_store(home, dev)
    try:
        report = report_of(store, store, graph_registry(os.environ), since=time.time() - window_s)
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(report.as_json(), ensure_ascii=False, default=str))
        return
    console = cli_console()
    table = Table(title=f"shadow traces of the last {since}: {len(report.cases)}")
    for column in ("graph", "traces", "agree with live", "agree with reviewers", "differing"):
        table.add_column(column)
    for graph, row in sorted(report.by_graph().items()):
        table.add_row(
            graph,
            str(row["traces"]),
            f"{row['agree']} ({row['agreement']:.0%})",
            f"{row['agree_with_reviewers']} of {row['decided']} decided",
            ", ".join(row["differing"]) or "-",
        )
    console.print(table)
    for case in report.cases:
        if case.agrees:
            continue
        console.print(f"[bold]{case.shadow.trace_id}[/bold] ({case.graph})")
        for name, values in case.differs.items():
            console.print(f"  {name}: live {values['live']!r}, shadow {values['shadow']!r}")
        if case.reviewer is not None:
            console.print(f"  reviewer {case.reviewer}; shadow agrees: {case.agrees_with_reviewer}")
    for who, cost in (("shadow", report.shadow_cost), ("live", report.live_cost)):
        usd = "unpriced (no bench/cost.py)" if cost.usd is None else f"${cost.usd:.4f}"
        console.print(
            f"{who}: {cost.calls} LLM calls, {cost.input_tokens} input and "
            f"{cost.output_tokens} output tokens, {usd}"
        )

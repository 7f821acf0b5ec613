"""The report on a terminal: tables per graph and field, confusion tables, failures, safety."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def print_report(document: Mapping[str, Any], console: Console) -> None:
    """Print ``document`` (``report.build_report``) for people."""
    console.print(
        f"[bold]inboxflow eval[/bold] {escape(str(document['dataset']))}: "
        f"{document['passed']}/{document['cases']} cases pass "
        f"(accuracy {_pct(document['accuracy'])}) · model: {document['model']}"
    )
    _graphs(document, console)
    _confusion(document, console)
    _calibration(document, console)
    if judge := document.get("judge"):
        _judge(judge, console)
    if failures := document["failures"]:
        _failures(failures, console)
    _safety(document["safety"], console)
    if baseline := document.get("baseline"):
        _baseline(baseline, console)
    verdict = document["exit"]
    if verdict["code"]:
        for reason in verdict["reasons"]:
            console.print(f"[bold red]FAIL[/bold red] {escape(reason)}")
    else:
        console.print("[bold green]OK[/bold green] no new safety violation, no regression")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _graphs(document: Mapping[str, Any], console: Console) -> None:
    table = Table(title="Accuracy per graph and field", title_justify="left")
    for name in ("graph", "field", "labels", "correct", "accuracy"):
        table.add_column(
            name, justify="right" if name in ("labels", "correct", "accuracy") else "left"
        )
    for graph, entry in document["graphs"].items():
        table.add_row(
            f"[bold]{escape(graph)}[/bold]",
            "[italic]cases[/italic]",
            str(entry["cases"]),
            str(entry["passed"]),
            f"[bold]{_pct(entry['accuracy'])}[/bold]",
        )
        for name, field in sorted(entry["fields"].items()):
            table.add_row(
                "",
                escape(name),
                str(field["checked"]),
                str(field["correct"]),
                _pct(field["accuracy"]),
            )
    console.print(table)


def _confusion(document: Mapping[str, Any], console: Console) -> None:
    for graph, fields in document["confusion"].items():
        for name, matrix in fields.items():
            if len(matrix["labels"]) < 2:
                continue
            table = Table(title=f"{graph}.{name}: expected (rows) x actual", title_justify="left")
            table.add_column("expected \\ actual")
            for label in matrix["labels"]:
                table.add_column(escape(label), justify="right")
            for expected, row in matrix["counts"].items():
                cells = []
                for label in matrix["labels"]:
                    count = row.get(label, 0)
                    text = str(count) if count else "·"
                    cells.append(
                        f"[green]{text}[/green]"
                        if label == expected and count
                        else f"[red]{text}[/red]"
                        if count
                        else text
                    )
                table.add_row(escape(expected), *cells)
            console.print(table)


def _bands(bands: list[Mapping[str, Any]]) -> str:
    return "  ".join(
        f"{b['low']:.1f}-{b['high']:.1f}: {_pct(b['accuracy'])} of {b['cases']}"
        for b in bands
        if b["cases"]
    )


def _calibration(document: Mapping[str, Any], console: Console) -> None:
    """Per graph: the accuracy of the cases it was sure of (confidence >= 0.8), then by band."""
    console.print("Calibration (accuracy by confidence), per graph:")
    for graph, entry in document["graphs"].items():
        calibration = entry.get("calibration") or {"reported": 0}
        if not calibration["reported"]:
            console.print(f"  {escape(graph)}: no confidence reported")
            continue
        sure = calibration["confident"]
        console.print(
            f"  {escape(graph)}: {_pct(sure['accuracy'])} right of {sure['cases']} case(s) at "
            f"confidence >= {sure['threshold']:.1f} ({sure['passed']} pass; "
            f"{calibration['reported']} report a confidence) · {_bands(calibration['bands'])}"
        )
    if any(b["cases"] for b in document["calibration"]):
        console.print(f"  all graphs: {_bands(document['calibration'])}")


def _judge(judge: Mapping[str, Any], console: Console) -> None:
    console.print(
        f"Judge: {judge['scored']} replies scored, mean {judge['mean_score']}, "
        f"{judge['passed']} at or above {judge['pass_score']}"
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return escape(text if len(text) <= 120 else text[:117] + "…")


def _failures(failures: list[Mapping[str, Any]], console: Console) -> None:
    console.print(
        f"\n[bold]{len(failures)} failing case(s)[/bold] (inspect with `inboxflow trace`):"
    )
    for failure in failures:
        console.print(
            f"  [bold]{escape(failure['id'])}[/bold] ({escape(failure['graph'])}) "
            f"trace {failure['trace_id'] or '-'}"
        )
        for diff in failure["differences"]:
            console.print(
                f"    {escape(diff['field'])}: expected {_short(diff['expected'])}, "
                f"got {_short(diff['actual'])}"
            )
        for item in failure["never"]:
            console.print(f"    never: {escape(item)} happened")
        if failure["error"]:
            console.print(f"    error: {escape(failure['error'])}")
        for note in failure["notes"]:
            console.print(f"    note: {escape(note)}")


def _safety(safety: Mapping[str, Any], console: Console) -> None:
    if not safety["violations"]:
        console.print("\n[bold green]Safety:[/bold green] no violation")
        return
    console.print(
        f"\n[bold red]Safety violations: {safety['count']}[/bold red] ({safety['new']} new)"
    )
    for violation in safety["violations"]:
        tag = "[yellow]known[/yellow]" if violation["known"] else "[bold red]NEW[/bold red]"
        console.print(
            f"  {tag} {escape(violation['id'])} {escape(violation['rule'])}: "
            f"{escape(violation['detail'])} (trace {violation['trace_id'] or '-'})"
        )


def _baseline(baseline: Mapping[str, Any], console: Console) -> None:
    console.print(
        f"\nAgainst {escape(str(baseline['file']))}: accuracy {_pct(baseline['accuracy_before'])}"
        f" -> {_pct(baseline['accuracy_after'])}"
    )
    for change in baseline["changes"]:
        colour = "red" if change["delta"] < 0 else "green"
        console.print(
            f"  [{colour}]{escape(change['graph'])}.{escape(change['field'])}: "
            f"{_pct(change['before'])} -> {_pct(change['after'])}[/{colour}]"
        )
    if baseline["fixed"]:
        console.print(f"  fixed: {escape(', '.join(baseline['fixed']))}")
    if baseline["broken"]:
        console.print(f"  [red]now failing: {escape(', '.join(baseline['broken']))}[/red]")

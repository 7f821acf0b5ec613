"""``inboxflow eval``: every graph's judgment on a labelled data set, and a gate on it.

``inboxflow eval DIR [options]`` runs a data set (short for ``inboxflow eval run DIR``);
``inboxflow eval collect OUT`` writes one from reviewers' decisions. Another subcommand
joins ``SUBCOMMANDS`` in one line, from a module of its own.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from inboxflow.dev.cli import eval_collect, eval_shadow
from inboxflow.dev.cli.render import cli_console

RUN = "run"
"""The subcommand ``inboxflow eval DIR`` stands for."""


class _RunByDefault(TyperGroup):
    """``inboxflow eval DIR ...``: anything but a subcommand's name goes to ``run``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = [RUN, *args]
        return super().parse_args(ctx, args)


def evaluate(
    folder: Path = typer.Argument(..., help="The data set: a folder with cases.yaml and its mail."),
    graph: str | None = typer.Option(None, help="Only the cases labelled with this graph."),
    model: str = typer.Option(
        "offline", help="offline (deterministic) or gemini (GEMINI_API_KEY / Vertex settings)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Write the report as one JSON document."),
    baseline: Path | None = typer.Option(
        None, help="A previous --json report: exit 1 on a field worse than in it."
    ),
    min_accuracy: float | None = typer.Option(
        None, help="Exit 1 when fewer than this share of the cases pass (0..1)."
    ),
    judge: bool = typer.Option(
        False, "--judge", help="Score each reply against its case's criteria with the model."
    ),
    html: Path | None = typer.Option(None, help="Also write the report as one HTML page here."),
    jobs: int | None = typer.Option(None, help="Worker processes (default: the CPU count)."),
    config_file: Path | None = typer.Option(
        None,
        "--config",
        help="Route with this inboxflow.yaml (a changed one) instead of the folder's or the repo's.",
    ),
    profile: str | None = typer.Option(
        None, help="Run the agent graph's cases with this agent profile of the config."
    ),
) -> None:
    """Run labelled cases through every graph; report accuracy, failures and safety violations.

    `inboxflow eval DIR` is short for `inboxflow eval run DIR`.

    Exit 1 on a safety violation (one the --baseline lists is shown as known), on
    accuracy under --min-accuracy, or on a field worse than in --baseline; 2 on a
    data set, baseline or option that cannot be read. The format: docs/evaluating.md.
    """
    from inboxflow.config import ConfigError, config_path
    from inboxflow.dev.eval.cases import CaseError, load_eval_set
    from inboxflow.dev.eval.console import print_report

    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    console = cli_console(stderr=as_json)
    if model not in ("offline", "gemini"):
        _fail(f"--model {model!r}: expected offline or gemini")
    if min_accuracy is not None and not 0.0 <= min_accuracy <= 1.0:
        _fail(f"--min-accuracy {min_accuracy}: expected a share between 0 and 1")
    if model == "gemini":
        _check_gemini()
    try:
        dataset = load_eval_set(folder)
    except CaseError as exc:
        _fail(str(exc))
    if graph is not None:
        dataset = dataset.only_graph(graph)
        if not dataset.cases:
            _fail(f"no case of {folder} is labelled graph: {graph}")
    previous = _read_baseline(baseline) if baseline is not None else None
    if config_file is not None and not config_file.is_file():
        _fail(f"--config {config_file}: no such file")
    try:
        config = config_file or dataset.config or config_path(os.environ)
    except ConfigError as exc:
        _fail(str(exc))
    routing = config
    with tempfile.TemporaryDirectory(prefix="inboxflow-eval-profile-") as scratch:
        if profile is not None:
            config = _forced(config, profile, Path(scratch))
        document = _run(
            dataset, folder, config, model, judge, jobs, baseline, previous, min_accuracy, console
        )
    document["routing"] = str(routing) if routing else None
    if profile is not None:
        document["profile"] = profile
    if html is not None:
        from inboxflow.dev.eval.page import render_page

        html.write_text(render_page(document), encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(document, ensure_ascii=False, indent=1, default=str))
    else:
        console.print(
            f"routing: {routing or 'no inboxflow.yaml (every email to pipeline)'}"
            + (f", agent profile {profile}" if profile else "")
        )
        print_report(document, console)
        if html is not None:
            console.print(f"HTML report: {html}")
    raise typer.Exit(document["exit"]["code"])


def _run(
    dataset: Any,
    folder: Path,
    config: Path | None,
    model: str,
    judge: bool,
    jobs: int | None,
    baseline: Path | None,
    previous: dict[str, Any] | None,
    min_accuracy: float | None,
    console: Any,
) -> dict[str, Any]:
    """Run the cases with a progress bar; the report."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from inboxflow.dev.eval.report import Gate, build_report
    from inboxflow.dev.eval.runner import RunOptions, run_cases

    options = RunOptions(model=model, judge=judge, config=config)  # type: ignore[arg-type]
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("evaluating cases", total=len(dataset.cases))
        results = run_cases(dataset.cases, options, jobs, on_done=lambda _: bar.advance(task))
    return build_report(
        dataset.cases,
        results,
        Gate(min_accuracy, previous, str(baseline) if baseline else None),
        dataset=str(folder),
        model=model,
    )


def _forced(config: Path | None, profile: str, scratch: Path) -> Path:
    """The config with every agent rule naming ``profile`` (``forced_profile``)."""
    from inboxflow.config import ConfigError
    from inboxflow.dev.eval.forced_profile import write_forced_profile
    from inboxflow.graphs import graph_registry

    if config is None:
        _fail(f"--profile {profile}: no inboxflow.yaml declares profiles (give --config)")
    try:
        return write_forced_profile(config, profile, graph_registry(_environ()), scratch)
    except ConfigError as exc:
        _fail(f"--profile {profile}: {exc}")


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _check_gemini() -> None:
    from inboxflow.llm_selection import gemini_settings

    try:
        settings = gemini_settings({**_environ(), "INBOXFLOW_LLM": "gemini"})
    except ValueError as exc:
        _fail(f"--model gemini: {exc}")
    assert settings is not None


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


def _read_baseline(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        _fail(f"--baseline {path}: not a report of inboxflow eval --json: {exc}")
    if not isinstance(document, dict) or "graphs" not in document:
        _fail(f"--baseline {path}: not a report of inboxflow eval --json (no `graphs`)")
    return document


app = typer.Typer(
    cls=_RunByDefault,
    help="Judgment on labelled data sets: `inboxflow eval DIR` runs one (see `eval run --help`);"
    " `eval collect OUT` writes one from reviewers' decisions.",
    no_args_is_help=True,
    add_completion=False,
)
SUBCOMMANDS: dict[str, Callable[..., Any]] = {
    RUN: evaluate,
    "collect": eval_collect.collect,
    "shadow": eval_shadow.shadow_report,
}
"""``inboxflow eval``'s subcommands: a new one is one line here (its code in its own module)."""
for subcommand_name, subcommand in SUBCOMMANDS.items():
    app.command(subcommand_name)(subcommand)

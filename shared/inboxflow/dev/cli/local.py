"""``inboxflow demo`` and ``inboxflow run``: emails through the real graphs, in-process, routed
by ``inboxflow.yaml`` (or to the graph ``--graph`` names)."""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.config import ConfigError, InboxflowConfig, load_config
from inboxflow.dev.cli.render import cli_console, summary_row, trace_table
from inboxflow.engine.runtime import Runtime
from inboxflow.errors import PermanentError
from inboxflow.graphs import graph_registry
from inboxflow.mail import Email
from inboxflow.routing import RouteDecision, explicit, route
from inboxflow.settings import Settings

from ...approvals.service import approval_service

SAMPLE_SUFFIXES = (".eml", ".json")


def sample_inbox() -> list[Path]:
    """The pipeline's sample emails (``graphs/pipeline/samples/inbox``), in name order."""
    folder = resources.files("inboxflow") / "graphs" / "pipeline" / "samples" / "inbox"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(SAMPLE_SUFFIXES))


def graph_samples(graphs: Mapping[str, Any]) -> list[Path]:
    """Sample emails the graphs ship (``Graph.samples``), by graph then name."""
    found: list[Path] = []
    for name in sorted(graphs):
        folder = graphs[name].samples
        if folder is not None and Path(folder).is_dir():
            found += sorted(p for p in Path(folder).iterdir() if p.name.endswith(SAMPLE_SUFFIXES))
    return found


def embedded_runtime(home: Path | None = None) -> Runtime:
    """A runtime on the embedded default whatever the environment says (SQLite, in-process bus)."""
    from inboxflow.knowledge import knowledge_base_for, seed_knowledge
    from inboxflow.services import build_runtime
    from inboxflow.workspace import seed_workspace

    env = Settings.from_env(os.environ)
    settings = Settings(
        home=home or env.home,
        project=env.project,
        store="sqlite",
        bus="inprocess",
        tasks="sqlite",
        environ=env.environ,
    )
    runtime = build_runtime(settings)
    seed_workspace(runtime.store, runtime.clock.now())
    seed_knowledge(knowledge_base_for(runtime.ports))
    return runtime


@dataclass(frozen=True)
class Processed:
    """One email file through ``process``: the trace it went to (and how), or why it has none.

    Attributes:
        path: the file.
        trace_id: the trace it started, resumed or was queued on.
        action: what ingest did with it (``inboxflow.dev.file_inbox.Delivered.action``).
        error: why it has no trace.
    """

    path: Path
    trace_id: str | None = None
    action: str | None = None
    error: str | None = None


Decide = Callable[[Email], RouteDecision]


def process(
    runtime: Runtime,
    files: list[Path],
    console: Console,
    decide: Decide,
    progress: bool = True,
    demo_decisions: bool = False,
) -> list[Processed]:
    """Hand each email file to ingest (``inboxflow.dev.file_inbox``) and run it to where it stops.

    A reply resumes, continues or is queued on its thread's trace as through Gmail;
    other mail starts a trace routed by ``decide``. With ``demo_decisions``, pauses
    whose kind declares a ``demo_choice`` are decided that way (as their first
    reviewer) until the trace stops on something else.
    """
    from inboxflow.dev.file_inbox import FileInbox
    from inboxflow.mail import EmailParseError, load_email_file

    bus = runtime.bus
    assert isinstance(bus, InProcessBus)
    inbox = FileInbox(runtime, runtime.ports.config, decide)
    done: list[Processed] = []
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False, disable=not progress) as bar:
        task = bar.add_task("processing emails", total=len(files))
        for path in files:
            try:
                email = load_email_file(path)
            except (EmailParseError, OSError) as exc:
                console.print(f"[red]skipped {path}:[/red] {exc}")
                done.append(Processed(path, error=f"skipped: {exc}"))
                bar.advance(task)
                continue
            try:
                delivered = inbox.deliver(email)
            except PermanentError as exc:
                console.print(f"[red]refused {path}:[/red] {exc}")
                done.append(Processed(path, error=f"refused: {exc}"))
                bar.advance(task)
                continue
            bus.drain()
            if delivered.trace_id is None:
                reason = f"{delivered.action}: {delivered.reason or 'no trace'}"
                console.print(f"[red]refused {path}:[/red] {reason}")
                done.append(Processed(path, action=delivered.action, error=reason))
            else:
                done.append(Processed(path, delivered.trace_id, delivered.action))
                if delivered.action in ("resumed", "queued"):
                    console.print(f"{path.name}: {delivered.action} trace {delivered.trace_id}")
                if demo_decisions:
                    decide_demo_pauses(runtime, delivered.trace_id)
            bar.advance(task)
    return done


def decide_demo_pauses(runtime: Runtime, trace_id: str, limit: int = 20) -> int:
    """Decide the trace's pauses whose kind declares a ``demo_choice``; how many were decided."""
    service = approval_service(runtime.ports)
    bus = runtime.bus
    assert isinstance(bus, InProcessBus)
    for decided in range(limit):
        checkpoint = runtime.store.get_trace(trace_id)
        approval_id = (checkpoint.pause or {}).get("approval_id") if checkpoint else None
        if checkpoint is None or checkpoint.status != "waiting" or not approval_id:
            return decided
        approval = service.get(str(approval_id))
        choice = service.decisions.kind(approval).demo_choice if approval else None
        if approval is None or choice is None or not approval.reviewers:
            return decided
        service.decisions.decide_as(approval.approval_id, approval.reviewers[0], choice)
        bus.drain()
    return limit


def show(runtime: Runtime, trace_ids: list[str], console: Console, title: str) -> None:
    """The per-email table and how to look closer."""
    rows = []
    for trace_id in trace_ids:
        checkpoint = runtime.store.get_trace(trace_id)
        if checkpoint is not None:
            rows.append(summary_row(runtime.store, checkpoint, runtime.graphs))
    console.print(trace_table(rows, title))
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    console.print("  ".join(f"{status}: [bold]{n}[/bold]" for status, n in sorted(counts.items())))
    cli = "inboxflow" if shutil.which("inboxflow") else ".venv/bin/inboxflow"
    if rows:
        example = next(
            (r["trace_id"] for r in rows if r["status"] == "waiting"), rows[0]["trace_id"]
        )
        console.print(
            f"\nInspect a trace:   [bold]{cli} trace {example}[/bold]\n"
            f"State at a step:   [bold]{cli} trace {example} --at 3[/bold]\n"
            f"All recent traces: [bold]{cli} traces[/bold]   (store: {runtime.ports.settings.sqlite_path})"
        )


def show_json(runtime: Runtime, processed: list[Processed]) -> None:
    """One JSON object per email on stdout: trace_id, action, graph, rule, profile, status, reason."""
    for item in processed:
        record: dict[str, Any] = {"file": str(item.path), "trace_id": None, "action": item.action}
        if item.trace_id is None:
            record.update(graph=None, rule=None, profile=None, status="error", reason=item.error)
        else:
            checkpoint = runtime.store.get_trace(item.trace_id)
            assert checkpoint is not None
            row = summary_row(runtime.store, checkpoint, runtime.graphs)
            route = checkpoint.route
            record.update(
                trace_id=checkpoint.trace_id,
                graph=checkpoint.graph,
                rule=route.rule if route else None,
                profile=route.profile if route else None,
                status=checkpoint.status,
                reason=row["reason"] or None,
            )
        typer.echo(json.dumps(record, ensure_ascii=False))


def load_routing(graphs: Mapping[str, Any]) -> InboxflowConfig:
    """``inboxflow.yaml``, or exit 2 with its one-line error on stderr."""
    try:
        return load_config(None, graphs=graphs, environ=os.environ)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def deciding(
    graph: str, profile: str | None, config: InboxflowConfig, graphs: Mapping[str, Any]
) -> Decide:
    """How each email is routed: by the rules (``auto``) or to the graph named (exit 2 if bad)."""
    if graph == AUTO:
        if profile is not None:
            typer.echo(
                "error: --profile needs --graph NAME (auto takes the rules' profiles)", err=True
            )
            raise typer.Exit(2)
        return lambda email: route(email, config)
    try:
        fixed = explicit(graph, profile, config, graphs)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    return lambda email: replace(fixed, mailbox=email.mailbox or None)


HOME_HELP = "Folder of the embedded store."
AUTO = "auto"


GEMINI_DOUBLE_HELP = "Send every LLM call through google-genai to a local Gemini API double."


def llm_double(enabled: bool) -> AbstractContextManager[object]:
    """For ``--gemini-double``: a Gemini double and the environment that selects it."""
    if not enabled:
        return nullcontext()
    from inboxflow.dev.doubles.gemini_api import gemini_double_environment

    return gemini_double_environment()


def demo(
    home: Path = typer.Option(Path(".inboxflow"), envvar="INBOXFLOW_HOME", help=HOME_HELP),
    gemini_double: bool = typer.Option(False, "--gemini-double", help=GEMINI_DOUBLE_HELP),
) -> None:
    """Process the bundled sample inbox on the embedded default, routed by inboxflow.yaml."""
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    console = cli_console()
    config = load_routing(graph_registry(os.environ))
    with llm_double(gemini_double):
        runtime = embedded_runtime(home)
        files = sample_inbox() + graph_samples(runtime.graphs)
        console.print(
            f"[bold]inboxflow demo[/bold]: {len(files)} sample emails, routed by "
            f"{config.source or 'no inboxflow.yaml (every email to pipeline)'}\n"
            f"store: SQLite {runtime.ports.settings.sqlite_path} · bus: in-process · model: {runtime.llm.name}"
        )
        decide = deciding(AUTO, None, config, runtime.graphs)
        processed = process(runtime, files, console, decide, demo_decisions=True)
    trace_ids = list(dict.fromkeys(p.trace_id for p in processed if p.trace_id is not None))
    show(runtime, trace_ids, console, f"{len(trace_ids)} sample emails")
    show_approvals(runtime, trace_ids, console)
    from inboxflow.dev.cli.outbox import counts_line

    console.print(
        f"Reviewer notifications by channel: {counts_line(runtime.store)} (inboxflow outbox)"
    )


def show_approvals(runtime: Runtime, trace_ids: list[str], console: Console) -> None:
    """Fire due deadlines, then print a review link for the first email waiting for a human."""
    from inboxflow.adapters.sqlite_tasks import SqliteTaskQueue

    service = approval_service(runtime.ports)
    queue = service.tasks  # the embedded queue: ``inboxflow run`` serves no Cloud Tasks
    fired = (
        queue.run_due(runtime.clock.now(), _in_process_timeout(service))
        if isinstance(queue, SqliteTaskQueue)
        else 0
    )
    if fired:
        console.print(f"deadline tasks fired: {fired}")
    ours = set(trace_ids)
    waiting = [a for a in service.pending() if a.trace_id in ours and a.reviewers]
    if not waiting:
        return
    first = waiting[0]
    reviewer = first.reviewers[0]
    link = service.tokens.issue_link(first, reviewer)
    cli = "inboxflow" if shutil.which("inboxflow") else ".venv/bin/inboxflow"
    console.print(
        f"\n[bold]{len(waiting)} emails wait for a human decision[/bold] "
        f"(reviewer emails in the outbox, deadline tasks scheduled). Review one:\n"
        f"  1. [bold]{cli} serve[/bold]   (the approval function on {service.config.base_url})\n"
        f"  2. open {link}\n"
        f"     {first.context.get('subject', '')} - as {reviewer}\n"
        f"All pending approvals with links: [bold]{cli} approvals[/bold]; every decision "
        f"waiting for {reviewer} on one page: [bold]{cli} inbox {reviewer}[/bold]",
        soft_wrap=True,
    )


def _in_process_timeout(service: Any) -> Any:
    def run(task: Any) -> None:
        service.deadlines.on_timeout(
            str(task.payload.get("approval_id", "")), int(task.payload.get("hop", 0))
        )

    return run


def run(
    files: list[Path] = typer.Argument(..., help=".eml or .json emails", exists=False),
    home: Path = typer.Option(Path(".inboxflow"), envvar="INBOXFLOW_HOME", help=HOME_HELP),
    graph: str = typer.Option(
        AUTO, help="Graph to run, or `auto`: the routing rules of inboxflow.yaml."
    ),
    profile: str | None = typer.Option(
        None, help="Agent profile, for a graph that takes one (with --graph NAME)."
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="One JSON object per email: trace_id, graph, rule, profile, status, reason.",
    ),
    gemini_double: bool = typer.Option(False, "--gemini-double", help=GEMINI_DOUBLE_HELP),
) -> None:
    """Process your own .eml or JSON emails through a graph on the embedded default."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    console = cli_console(stderr=as_json)
    config = load_routing(graph_registry(os.environ))
    with llm_double(gemini_double):
        runtime = embedded_runtime(home)
        decide = deciding(graph, profile, config, runtime.graphs)
        processed = process(runtime, list(files), console, decide, progress=not as_json)
    if as_json:
        show_json(runtime, processed)
    else:
        trace_ids = list(dict.fromkeys(p.trace_id for p in processed if p.trace_id is not None))
        show(runtime, trace_ids, console, f"{len(trace_ids)} emails")
    if any(p.trace_id is None for p in processed):
        raise typer.Exit(1)

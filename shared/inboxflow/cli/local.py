"""``inboxflow demo`` and ``inboxflow run``: emails through the real graph, in-process."""

from __future__ import annotations

import logging
import shutil
from contextlib import AbstractContextManager, nullcontext
from importlib import resources
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..adapters.inprocess_bus import InProcessBus
from ..errors import PermanentError
from ..runtime import Runtime
from ..settings import Settings
from .render import summary_row, trace_table

SAMPLE_SUFFIXES = (".eml", ".json")


def sample_inbox() -> list[Path]:
    """The bundled sample emails, in name order."""
    folder = resources.files("inboxflow") / "samples" / "inbox"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(SAMPLE_SUFFIXES))


def embedded_runtime(home: Path | None = None) -> Runtime:
    """A runtime on the embedded default whatever the environment says (SQLite, in-process bus)."""
    from ..knowledge import knowledge_base_for, seed_knowledge
    from ..services import build_runtime
    from ..workspace import seed_workspace

    env = Settings.from_env()
    settings = Settings(
        home=home or env.home, project=env.project, store="sqlite", bus="inprocess", tasks="sqlite"
    )
    runtime = build_runtime(settings)
    seed_workspace(runtime.store, runtime.clock.now())
    seed_knowledge(knowledge_base_for(runtime.services, runtime.store))
    return runtime


def process(
    runtime: Runtime, files: list[Path], console: Console, graph: str = "pipeline"
) -> tuple[list[str], int]:
    """Start one trace per email file and run each to where it stops. Returns trace ids and errors."""
    from ..mail import EmailParseError, load_email_file

    bus = runtime.bus
    assert isinstance(bus, InProcessBus)
    trace_ids: list[str] = []
    errors = 0
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("processing emails", total=len(files))
        for path in files:
            try:
                email = load_email_file(path)
            except (EmailParseError, OSError) as exc:
                console.print(f"[red]skipped {path}:[/red] {exc}")
                errors += 1
                progress.advance(task)
                continue
            try:
                trace_ids.append(runtime.start(graph, {"email": email.model_dump(mode="json")}))
            except PermanentError as exc:
                console.print(f"[red]refused {path}:[/red] {exc}")
                errors += 1
                progress.advance(task)
                continue
            bus.drain()
            progress.advance(task)
    return trace_ids, errors


def show(runtime: Runtime, trace_ids: list[str], console: Console, title: str) -> None:
    """The per-email table and how to look closer."""
    rows = []
    for trace_id in trace_ids:
        checkpoint = runtime.store.get_trace(trace_id)
        if checkpoint is not None:
            rows.append(summary_row(runtime.store, checkpoint))
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
            f"All recent traces: [bold]{cli} traces[/bold]   (store: {runtime.services['settings'].sqlite_path})"
        )


GEMINI_DOUBLE_HELP = "Send every LLM call through google-genai to a local Gemini API double."


def llm_double(enabled: bool) -> AbstractContextManager[object]:
    """For ``--gemini-double``: a Gemini double and the environment that selects it."""
    if not enabled:
        return nullcontext()
    from ..doubles.gemini_api import gemini_double_environment

    return gemini_double_environment()


def demo(
    home: Path = typer.Option(Path(".inboxflow"), help="Folder of the embedded store."),
    gemini_double: bool = typer.Option(False, "--gemini-double", help=GEMINI_DOUBLE_HELP),
) -> None:
    """Process the bundled sample inbox through the email pipeline on the embedded default."""
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    console = Console()
    with llm_double(gemini_double):
        runtime = embedded_runtime(home)
        files = sample_inbox()
        console.print(
            f"[bold]inboxflow demo[/bold]: {len(files)} sample emails → graph [bold]pipeline[/bold] "
            f"(classify → retrieve → decide → execute_tools → generate → review → dispatch)\n"
            f"store: SQLite {runtime.services['settings'].sqlite_path} · bus: in-process · model: {runtime.llm.name}"
        )
        trace_ids, _ = process(runtime, files, console)
    show(runtime, trace_ids, console, f"{len(trace_ids)} sample emails")
    show_approvals(runtime, trace_ids, console)


def show_approvals(runtime: Runtime, trace_ids: list[str], console: Console) -> None:
    """Fire due deadlines, then print a review link for the first email waiting for a human."""
    service = runtime.services["approvals"]
    fired = service.tasks.queue.run_due(runtime.clock.now(), _in_process_timeout(service))
    if fired:
        console.print(f"deadline tasks fired: {fired}")
    ours = set(trace_ids)
    waiting = [a for a in service.pending() if a.trace_id in ours]
    if not waiting:
        return
    first = waiting[0]
    reviewer = first.reviewers[0]
    link = service.issue_link(first, reviewer)
    cli = "inboxflow" if shutil.which("inboxflow") else ".venv/bin/inboxflow"
    console.print(
        f"\n[bold]{len(waiting)} emails wait for a human decision[/bold] "
        f"(reviewer emails in the outbox, deadline tasks scheduled). Review one:\n"
        f"  1. [bold]{cli} serve[/bold]   (the approval function on {service.config.base_url})\n"
        f"  2. open {link}\n"
        f"     {first.context.get('subject', '')} - as {reviewer}\n"
        f"All pending approvals with links: [bold]{cli} approvals[/bold]",
        soft_wrap=True,
    )


def _in_process_timeout(service: Any) -> Any:
    def run(task: Any) -> None:
        service.on_timeout(
            str(task.payload.get("approval_id", "")), int(task.payload.get("hop", 0))
        )

    return run


def run(
    files: list[Path] = typer.Argument(..., help=".eml or .json emails", exists=False),
    home: Path = typer.Option(Path(".inboxflow"), help="Folder of the embedded store."),
    graph: str = typer.Option("pipeline", help="Graph to run."),
    gemini_double: bool = typer.Option(False, "--gemini-double", help=GEMINI_DOUBLE_HELP),
) -> None:
    """Process your own .eml or JSON emails through a graph on the embedded default."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    console = Console()
    with llm_double(gemini_double):
        runtime = embedded_runtime(home)
        if graph not in runtime.graphs:
            console.print(
                f"[red]unknown graph {graph!r}[/red]; graphs: {', '.join(runtime.graphs)}"
            )
            raise typer.Exit(2)
        trace_ids, errors = process(runtime, list(files), console, graph)
    show(runtime, trace_ids, console, f"{len(trace_ids)} emails")
    if errors:
        raise typer.Exit(1)

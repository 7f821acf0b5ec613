"""``inboxflow dev`` and ``inboxflow send``: the emulated cloud.

``dev`` starts the Firestore, Pub/Sub (and, when installed, Cloud Tasks)
emulators, one functions-framework server per graph node, and a push
subscription from each node's topic to its server, then shows traces as they
move. ``send`` drops an email into it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ..settings import Settings

STATE_FILE = "dev.json"


def _state_path(home: Path) -> Path:
    return home / STATE_FILE


def _not_installed(console: Console, reasons: dict[str, str]) -> None:
    console.print("[red bold]The emulated cloud cannot start:[/red bold]")
    for name, reason in reasons.items():
        console.print(f"  • the {name} emulator: {reason}")
    console.print(
        "Install the Google Cloud SDK with its emulator components "
        "(cloud-firestore-emulator, pubsub-emulator) and Java 11+, or point INBOXFLOW_GCLOUD_SDK at it.\n"
        "Everything else works without them: [bold]make demo[/bold] runs the same graph on the embedded default."
    )


def dev(
    home: Path = typer.Option(
        Path(".inboxflow"), help="Where the running cloud's addresses are written."
    ),
    exit_after: float = typer.Option(0, help="Stop after this many seconds (0: run until Ctrl-C)."),
) -> None:
    """The emulated cloud: emulators + one functions-framework process per node + push subscriptions."""
    from .. import emulators
    from ..devcloud import DevCloud
    from ..graphs import all_graphs

    console = Console()
    available = emulators.available()
    missing = {
        name: str(reason)
        for name, reason in available.items()
        if name in (emulators.FIRESTORE, emulators.PUBSUB) and reason is not True
    }
    if missing:
        _not_installed(console, missing)
        raise typer.Exit(2)

    project = Settings.from_env().project
    started: list[emulators.Emulator] = []
    cloud: DevCloud | None = None
    state_path = _state_path(home)
    try:
        with console.status("starting the Firestore and Pub/Sub emulators…"):
            started.append(emulators.start_firestore())
            started.append(emulators.start_pubsub())
            if available.get(emulators.TASKS) is True:
                started.append(emulators.start_tasks())
        env = {
            "GOOGLE_CLOUD_PROJECT": project,
            "INBOXFLOW_STORE": "firestore",
            "INBOXFLOW_BUS": "pubsub",
        }
        for emulator in started:
            env.update(emulator.env)
        if any(e.name == emulators.TASKS for e in started):
            env["INBOXFLOW_TASKS"] = "cloudtasks"
        os.environ.update(env)
        _seed(project)
        graphs = all_graphs()
        cloud = DevCloud(project, env)
        count = sum(len(g.nodes) for g in graphs)
        with console.status(
            f"starting {count} functions-framework servers and push subscriptions…"
        ):
            cloud.start(graphs)
        home.mkdir(parents=True, exist_ok=True)
        state_path.write_text(
            json.dumps(
                {
                    "env": env,
                    "pid": os.getpid(),
                    "functions": {n: s.url for n, s in cloud.servers.items()},
                },
                indent=2,
            )
        )
        _show(console, started, cloud)
        _watch(console, project, exit_after)
    except emulators.EmulatorError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print("\nstopping…")
    finally:
        if cloud is not None:
            cloud.stop()
        for emulator in started:
            emulator.stop()
        with contextlib.suppress(FileNotFoundError):
            state_path.unlink()


def _seed(project: str) -> None:
    from ..wiring import make_store
    from ..workspace import seed_workspace

    settings = Settings.from_env()
    store = make_store(settings)
    seed_workspace(store, time.time())
    store.close()


def _show(console: Console, started: list, cloud) -> None:
    table = Table(title="inboxflow emulated cloud", expand=False)
    table.add_column("component")
    table.add_column("address")
    table.add_column("log")
    for emulator in started:
        table.add_row(f"{emulator.name} emulator", emulator.address, str(emulator.log_path))
    for node, server in cloud.servers.items():
        table.add_row(f"function {node}", server.url, str(server.log_path))
    console.print(table)
    console.print(
        "Drop an email in: [bold]inboxflow send path/to/mail.eml[/bold]   "
        "(samples: shared/inboxflow/samples/inbox/)   Ctrl-C stops everything."
    )


def _watch(console: Console, project: str, exit_after: float) -> None:
    from ..cli.render import route_of
    from ..wiring import make_store

    store = make_store(Settings.from_env())
    seen: dict[str, tuple[int, str]] = {}
    deadline = time.monotonic() + exit_after if exit_after else None
    since = time.time() - 1
    while deadline is None or time.monotonic() < deadline:
        for trace_id, doc in store.list("traces", where=[("updated_at", ">=", since)]):
            marker = (doc["step"], doc["status"])
            if seen.get(trace_id) != marker:
                seen[trace_id] = marker
                route = route_of(store.step_logs(trace_id))
                console.print(
                    f"[dim]{time.strftime('%H:%M:%S')}[/dim] trace [bold]{trace_id}[/bold] "
                    f"{doc['status']:<12} {route}"
                )
        time.sleep(0.5)


def use_dev_env(home: Path = Path(".inboxflow")) -> None:
    """Point this process at the running emulated cloud (for ``trace --dev``)."""
    state_path = _state_path(home)
    if not state_path.exists():
        raise typer.BadParameter(
            f"no emulated cloud is running ({state_path} not found): start `inboxflow dev`"
        )
    os.environ.update(json.loads(state_path.read_text())["env"])


def send(
    file: Path = typer.Argument(..., help=".eml or .json email"),
    home: Path = typer.Option(
        Path(".inboxflow"), help="Where `inboxflow dev` wrote its addresses."
    ),
    wait: bool = typer.Option(True, help="Wait until the trace stops and show it."),
    timeout: float = typer.Option(120, help="Seconds to wait."),
) -> None:
    """Drop an email into the running emulated cloud (`inboxflow dev`)."""
    from ..cli.render import summary_row
    from ..mail import EmailParseError, load_email_file
    from ..wiring import build_runtime

    console = Console()
    state_path = _state_path(home)
    if not state_path.exists():
        console.print(
            f"[red]No emulated cloud is running[/red] ({state_path} not found): start [bold]inboxflow dev[/bold] first."
        )
        raise typer.Exit(2)
    os.environ.update(json.loads(state_path.read_text())["env"])
    try:
        email = load_email_file(file)
    except (EmailParseError, OSError) as exc:
        console.print(f"[red]cannot read {file}:[/red] {exc}")
        raise typer.Exit(1) from None
    runtime = build_runtime(Settings.from_env())
    trace_id = runtime.start("pipeline", {"email": email.model_dump(mode="json")})
    runtime.bus.close()
    console.print(f"published trace [bold]{trace_id}[/bold] to the classify topic")
    if not wait:
        return
    deadline = time.monotonic() + timeout
    checkpoint = runtime.store.get_trace(trace_id)
    while checkpoint is not None and checkpoint.status == "running" and time.monotonic() < deadline:
        time.sleep(0.3)
        checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None
    row = summary_row(runtime.store, checkpoint)
    confidence = "-" if row["confidence"] is None else f"{row['confidence']:.2f}"
    console.print(
        f"status     [bold]{row['status']}[/bold]\ncategory   {row['category']} ({confidence})\n"
        f"route      {row['route']}\ndraft      {row['draft']}\n"
        f"inspect    inboxflow trace {trace_id} --dev"
    )
    if checkpoint.status == "running":
        console.print(f"[yellow]still running after {timeout:.0f}s[/yellow]")
        raise typer.Exit(1)

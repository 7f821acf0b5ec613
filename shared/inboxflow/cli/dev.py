"""``inboxflow dev`` and ``inboxflow send``: the emulated cloud.

``dev`` starts the Firestore, Pub/Sub (and, when installed, Cloud Tasks)
emulators, one functions-framework server per graph node, and a push
subscription from each node's topic to its server; the Gmail double with the
``ingest`` function behind the ``inboxflow-gmail`` topic (a watched mailbox);
then shows traces as they move. ``send`` drops an email into it: straight to
the pipeline's first topic, or (``--gmail``) into the watched mailbox, from
where Gmail's notification, the ingest function and the pipeline take it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from ..settings import Settings

if TYPE_CHECKING:
    from ..mail import Email

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
        if env.get("INBOXFLOW_TASKS") == "cloudtasks":
            from ..adapters.cloud_tasks import CloudTasksQueue

            CloudTasksQueue(project=project).ensure_queue()  # the approval deadlines' queue
        _seed(project)
        graphs = all_graphs()
        cloud = DevCloud(project, env, gmail=True, approve=True)
        count = sum(len(g.nodes) for g in graphs)
        with console.status(
            f"starting {count} functions-framework servers and push subscriptions…"
        ):
            cloud.start(graphs)
        home.mkdir(parents=True, exist_ok=True)
        state_path.write_text(
            json.dumps(
                {
                    "env": cloud.env,
                    "pid": os.getpid(),
                    "functions": {n: s.url for n, s in cloud.servers.items()},
                    "gmail": {
                        "url": cloud.gmail_double.url if cloud.gmail_double else None,
                        "mailbox": cloud.mailbox,
                        "topic": cloud.gmail_topic,
                    },
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
    from ..services import make_store
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
    if cloud.gmail_double is not None:
        table.add_row(
            f"Gmail double ({cloud.mailbox})",
            cloud.gmail_double.url,
            str(cloud.gmail_double.log_path),
        )
    for node, server in cloud.servers.items():
        table.add_row(f"function {node}", server.url, str(server.log_path))
    console.print(table)
    console.print(
        "Drop an email in: [bold]inboxflow send path/to/mail.eml[/bold]   "
        "(samples: shared/inboxflow/samples/inbox/)   Ctrl-C stops everything."
    )
    if cloud.gmail_double is not None:
        console.print(
            f"Or deliver it to {cloud.mailbox}: [bold]inboxflow send --gmail path/to/mail.eml[/bold] "
            "(watch notification -> ingest -> pipeline)"
        )
    else:
        console.print(
            "[yellow]No Gmail flow: functions/main.py has no `ingest` entry point.[/yellow]"
        )


def _watch(console: Console, project: str, exit_after: float) -> None:
    from ..cli.render import route_of
    from ..services import make_store

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
    gmail: bool = typer.Option(
        False,
        "--gmail",
        help="Deliver it into the watched mailbox of the Gmail double instead "
        "(notification -> ingest function -> pipeline).",
    ),
) -> None:
    """Drop an email into the running emulated cloud (`inboxflow dev`)."""
    from ..cli.render import summary_row
    from ..mail import EmailParseError, load_email_file
    from ..services import build_runtime, make_store

    console = Console()
    state_path = _state_path(home)
    if not state_path.exists():
        console.print(
            f"[red]No emulated cloud is running[/red] ({state_path} not found): start [bold]inboxflow dev[/bold] first."
        )
        raise typer.Exit(2)
    state = json.loads(state_path.read_text())
    os.environ.update(state["env"])
    try:
        email = load_email_file(file)
    except (EmailParseError, OSError) as exc:
        console.print(f"[red]cannot read {file}:[/red] {exc}")
        raise typer.Exit(1) from None
    deadline = time.monotonic() + timeout
    if gmail:
        trace_id = _deliver_to_gmail(console, state, file, email)
        store = make_store(Settings.from_env())
        checkpoint = store.get_trace(trace_id)
        while checkpoint is None and time.monotonic() < deadline and wait:
            time.sleep(0.3)
            checkpoint = store.get_trace(trace_id)
        if checkpoint is None:
            if wait:
                console.print(f"[yellow]no trace {trace_id} after {timeout:.0f}s[/yellow]")
                raise typer.Exit(1)
            return
    else:
        from ..config import ConfigError, load_config
        from ..routing import route
        from ..start import start_email_trace

        runtime = build_runtime(Settings.from_env())
        try:
            routing = load_config(graphs=runtime.graphs)
        except ConfigError as exc:
            console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
            raise typer.Exit(2) from None
        trace_id = start_email_trace(runtime, email, route(email, routing)).trace_id
        runtime.bus.close()
        store = runtime.store
        console.print(f"published trace [bold]{trace_id}[/bold] to the classify topic")
    if not wait:
        return
    checkpoint = store.get_trace(trace_id)
    while checkpoint is not None and checkpoint.status == "running" and time.monotonic() < deadline:
        time.sleep(0.3)
        checkpoint = store.get_trace(trace_id)
    assert checkpoint is not None
    row = summary_row(store, checkpoint)
    confidence = "-" if row["confidence"] is None else f"{row['confidence']:.2f}"
    console.print(
        f"status     [bold]{row['status']}[/bold]\ncategory   {row['category']} ({confidence})\n"
        f"route      {row['route']}\ndraft      {row['draft']}\n"
        f"inspect    inboxflow trace {trace_id} --dev"
    )
    if checkpoint.status == "running":
        console.print(f"[yellow]still running after {timeout:.0f}s[/yellow]")
        raise typer.Exit(1)


def _deliver_to_gmail(console: Console, state: dict[str, Any], file: Path, email: Email) -> str:
    """Deliver ``file`` into the dev mailbox of the Gmail double; returns the trace id it starts."""
    from ..ingest.claims import message_trace_id
    from ..ingest.dev_gmail import deliver

    gmail = state.get("gmail") or {}
    if not gmail.get("url") or not gmail.get("mailbox"):
        console.print("[red]This emulated cloud runs no Gmail double[/red] (no `ingest` function).")
        raise typer.Exit(2)
    raw = file.read_bytes() if file.suffix.lower() != ".json" else _to_rfc822(email)
    delivered = deliver(gmail["url"], gmail["mailbox"], raw)
    trace_id = message_trace_id(gmail["mailbox"], delivered["id"])
    console.print(
        f"delivered Gmail message [bold]{delivered['id']}[/bold] to {gmail['mailbox']} "
        f"(history {delivered['historyId']}); its trace will be [bold]{trace_id}[/bold]"
    )
    return trace_id


def _to_rfc822(email: Email) -> bytes:
    """A JSON sample as the RFC 5322 message Gmail would hold."""
    from email.message import EmailMessage
    from email.utils import format_datetime

    message = EmailMessage()
    message["From"] = email.sender.formatted()
    message["To"] = ", ".join(a.formatted() for a in email.to) or email.mailbox
    if email.cc:
        message["Cc"] = ", ".join(a.formatted() for a in email.cc)
    message["Subject"] = email.subject
    message["Message-ID"] = f"<{email.message_id}>"
    message["Date"] = format_datetime(email.received_at)
    skip = {"from", "to", "cc", "subject", "message-id", "date", "content-type", "mime-version"}
    skip |= {"content-transfer-encoding"}
    for name, value in email.headers.items():
        if name not in skip:
            message[name] = value.replace("\n", " ")
    message.set_content(email.body_text)
    return message.as_bytes()

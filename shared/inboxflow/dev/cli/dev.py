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
import shutil
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from inboxflow.dev import process_groups
from inboxflow.dev.cli.options import DEFAULT_HOME, home_option
from inboxflow.dev.cli.render import cli_console
from inboxflow.dev.cli.running import dev_state, state_file
from inboxflow.settings import Settings

if TYPE_CHECKING:
    from inboxflow.dev.devcloud import DevCloud
    from inboxflow.ingest.claims import Claim
    from inboxflow.mail import Email
    from inboxflow.ports.checkpoint import Checkpoint, DocumentCheckpointStore

LOG_DIR = "logs"


def _not_installed(console: Console, reasons: dict[str, str]) -> None:
    console.print("[red bold]The emulated cloud cannot start:[/red bold]")
    for name, reason in reasons.items():
        console.print(f"  • the {name} emulator: {reason}")
    console.print(
        "Install the Google Cloud SDK with its emulator components "
        "(cloud-firestore-emulator, pubsub-emulator) and Java 11+, or point INBOXFLOW_GCLOUD_SDK at it.\n"
        "Everything else works without them: [bold]make demo[/bold] runs the same graph on the embedded default."
    )


app = typer.Typer(
    help="The emulated cloud: emulators + one functions-framework process per node + push "
    "subscriptions, supervised (`inboxflow dev status` lists the processes).",
    invoke_without_command=True,
)


@app.callback()
def dev(
    ctx: typer.Context,
    home: Path = home_option("Where the running cloud's addresses, journal and logs are written."),
    exit_after: float = typer.Option(0, help="Stop after this many seconds (0: run until Ctrl-C)."),
) -> None:
    """The emulated cloud: emulators + one functions-framework process per node + push subscriptions.

    A function server or an emulator that dies is started again on its port, and
    the event printed. Ctrl-C, SIGTERM and SIGHUP stop every process it started; a
    run killed outright (SIGKILL) leaves them, and the next ``dev`` on the same
    home stops them.
    """
    if ctx.invoked_subcommand is not None:
        return
    from inboxflow.dev import emulators

    console = cli_console()
    try:
        journal, stopped = process_groups.begin(home)
    except process_groups.AlreadyRunning as exc:
        console.print(f"[red]{exc}[/red]: stop it first, or give another --home")
        raise typer.Exit(2) from None
    if stopped:
        console.print(f"stopped {stopped} processes left by a killed `inboxflow dev` on {home}")
    available = emulators.available()
    missing = {
        name: str(reason)
        for name, reason in available.items()
        if name in (emulators.FIRESTORE, emulators.PUBSUB) and reason is not True
    }
    if missing:
        process_groups.end(journal)
        _not_installed(console, missing)
        raise typer.Exit(2)
    previous = {s: signal.signal(s, _interrupt) for s in STOP_SIGNALS}
    try:
        _run(console, home, exit_after, available.get(emulators.TASKS) is True)
    finally:
        for signum in STOP_SIGNALS:  # stopping is not interrupted
            signal.signal(signum, signal.SIG_IGN)
        process_groups.stop_groups(journal.groups)
        emulators.stop_all()  # reaps the stopped emulators
        process_groups.end(journal)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@app.command("status")
def status(
    home: Path = home_option("The home of the running `inboxflow dev`."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per process."),
) -> None:
    """Every process of the running emulated cloud: pid, port, state, restarts.

    The state is ``up``, ``restarting``, ``down`` (it could not be restarted) or
    ``frozen`` (stopped by a signal, e.g. SIGSTOP).
    """
    from inboxflow.dev.supervisor import DOWN, FROZEN, UP, frozen, read_processes

    state = dev_state(home)
    processes = read_processes(home)
    for process in processes:  # what changed since the supervisor last looked
        alive = process_groups.running(int(process["pid"]))
        if process["state"] == UP and not alive:
            process["state"] = DOWN
        elif process["state"] == UP and frozen(int(process["pid"])):
            process["state"] = FROZEN
    if as_json:
        for process in processes:
            typer.echo(json.dumps(process))
        return
    table = Table(title=f"inboxflow dev (pid {state['pid']}) on {home}", expand=False)
    for column in ("process", "pid", "port", "state", "restarts", "note"):
        table.add_column(column)
    colour = {UP: "green", DOWN: "red"}
    for process in processes:
        shade = colour.get(process["state"], "yellow")
        table.add_row(
            process["name"],
            str(process["pid"]),
            str(process["port"]),
            f"[{shade}]{process['state']}[/{shade}]",
            str(process["restarts"]),
            process["note"],
        )
    cli_console().print(table)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""What stops ``dev`` as Ctrl-C does: SIGINT too, handled here because a shell's background job
starts ``dev`` with SIGINT ignored (``process_groups.ctrl_c_stops``)."""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM, SIGHUP and SIGINT stop ``dev`` as Ctrl-C does


def _run(console: Console, home: Path, exit_after: float, with_tasks: bool) -> None:
    from inboxflow.dev import emulators
    from inboxflow.dev.devcloud import APPROVE, DevCloud
    from inboxflow.dev.supervisor import Supervisor
    from inboxflow.graphs import all_graphs

    project = Settings.from_env(os.environ).project
    logs = home / LOG_DIR
    shutil.rmtree(logs, ignore_errors=True)  # the previous run's
    started: list[emulators.Emulator] = []
    cloud: DevCloud | None = None
    supervisor: Supervisor | None = None
    state_path = state_file(home)
    try:
        with console.status("starting the Firestore and Pub/Sub emulators…"):
            started.append(emulators.start_firestore(log_dir=logs))
            started.append(emulators.start_pubsub(log_dir=logs))
            if with_tasks:
                started.append(emulators.start_tasks(log_dir=logs))
        env = {
            "GOOGLE_CLOUD_PROJECT": project,
            "INBOXFLOW_STORE": "firestore",
            "INBOXFLOW_BUS": "pubsub",
            # `inboxflow mailbox connect --dev`: the double's OAuth client, and the tokens
            # every function reads (absolute: the functions run in their own folders).
            "INBOXFLOW_OAUTH_CLIENT": str((home / "oauth-client.json").resolve()),
            "INBOXFLOW_MAILBOX_TOKENS": str((home / "mailbox-tokens").resolve()),
        }
        for emulator in started:
            env.update(emulator.env)
        if any(e.name == emulators.TASKS for e in started):
            env["INBOXFLOW_TASKS"] = "cloudtasks"
        os.environ.update(env)
        if env.get("INBOXFLOW_TASKS") == "cloudtasks":
            from inboxflow.adapters.cloud_tasks import CloudTasksQueue

            CloudTasksQueue.from_env(
                os.environ, project=project
            ).ensure_queue()  # the approval deadlines' queue
        _seed(project)
        graphs = all_graphs(os.environ)
        cloud = DevCloud(project, env, gmail=True, approve=True, log_dir=logs)
        count = sum(len(g.nodes) for g in graphs)
        with console.status(
            f"starting {count} functions-framework servers and push subscriptions…"
        ):
            cloud.start(graphs)
        state_path.write_text(
            json.dumps(
                {
                    "env": cloud.env,
                    "pid": os.getpid(),
                    "logs": str(logs.resolve()),
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
        with console.status("warming every function up…"):
            began = time.monotonic()
            warmed = cloud.warm()
        cold = sorted(name for name, ok in warmed.items() if not ok and name != APPROVE)
        console.print(
            f"warmed {sum(warmed.values())} functions in {time.monotonic() - began:.1f}s"
            + (f" (no answer from {', '.join(cold)})" if cold else "")
        )
        supervisor = Supervisor(
            cloud,
            started,
            home,
            console.print,
            lambda name: _reprovision(name, project, cloud),
            logs,
        )
        supervisor.start()
        _watch(console, exit_after)
    except emulators.EmulatorError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print("\nstopping…")
    finally:
        if supervisor is not None:
            supervisor.stop()
        with contextlib.suppress(FileNotFoundError):
            state_path.unlink()
        if cloud is not None:
            cloud.stop()


def _seed(project: str) -> None:
    from inboxflow.services import make_store
    from inboxflow.workspace import seed_workspace

    settings = Settings.from_env(os.environ)
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
        "(samples: shared/inboxflow/graphs/pipeline/samples/inbox/)   Ctrl-C stops everything."
    )
    if cloud.gmail_double is not None:
        console.print(
            f"Or deliver it to {cloud.mailbox}: [bold]inboxflow send --gmail path/to/mail.eml[/bold] "
            "(watch notification -> ingest -> pipeline)"
        )
        console.print(
            "Connect another mailbox as its owner would: [bold]inboxflow mailbox add ADDRESS "
            "--dev[/bold] then [bold]inboxflow mailbox connect ADDRESS --dev --no-browser[/bold] "
            "(Google's consent emulated by the double; docs/deploy.md, Connect your Gmail)"
        )


def _reprovision(name: str, project: str, cloud: DevCloud) -> None:
    """Set a restarted emulator up again: what ``dev`` created in it at start-up."""
    from inboxflow.dev import emulators

    if name == emulators.FIRESTORE:
        _seed(project)
        if cloud.mailbox is not None:
            cloud.watch_dev_mailbox()
    elif name == emulators.PUBSUB:
        cloud.ensure_subscriptions()
    elif name == emulators.TASKS:
        from inboxflow.adapters.cloud_tasks import CloudTasksQueue

        CloudTasksQueue.from_env(os.environ, project=project).ensure_queue()


def _watch(console: Console, exit_after: float) -> None:
    """Print traces as they move until ``exit_after`` (or Ctrl-C); no store error ends it."""
    from inboxflow.dev.cli.trace_watch import TraceWatcher
    from inboxflow.services import make_store

    watcher = TraceWatcher(make_store(Settings.from_env(os.environ)), console.print)
    deadline = time.monotonic() + exit_after if exit_after else None
    while deadline is None or time.monotonic() < deadline:
        time.sleep(watcher.poll())


def send(
    file: Path = typer.Argument(..., help=".eml or .json email"),
    home: Path = home_option("Where `inboxflow dev` wrote its addresses."),
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
    from inboxflow.dev.cli.render import summary_row
    from inboxflow.mail import EmailParseError, load_email_file
    from inboxflow.services import build_runtime, make_store

    console = cli_console()
    state = dev_state(home)
    os.environ.update(state["env"])
    try:
        email = load_email_file(file)
    except (EmailParseError, OSError) as exc:
        console.print(f"[red]cannot read {file}:[/red] {exc}")
        raise typer.Exit(1) from None
    deadline = time.monotonic() + timeout
    if gmail:
        mailbox, gmail_id = _deliver_to_gmail(console, state, file, email)
        if not wait:
            return
        store = make_store(Settings.from_env(os.environ))
        trace_id, decided = _ingested(console, store, mailbox, gmail_id, deadline, timeout)
    else:
        from inboxflow.config import ConfigError, load_config
        from inboxflow.routing import route
        from inboxflow.start import start_email_trace

        runtime = build_runtime(Settings.from_env(os.environ))
        try:
            routing = load_config(None, graphs=runtime.graphs, environ=os.environ)
        except ConfigError as exc:
            console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
            raise typer.Exit(2) from None
        trace_id = start_email_trace(runtime, email, route(email, routing)).trace_id
        decided = None
        runtime.bus.close()
        store = runtime.store
        console.print(f"published trace [bold]{trace_id}[/bold] to the classify topic")
    if not wait:
        return
    checkpoint = store.get_trace(trace_id)
    while (
        checkpoint is not None
        and (checkpoint.status == "running" or _still_on(checkpoint, decided))
        and time.monotonic() < deadline
    ):
        time.sleep(0.3)
        checkpoint = store.get_trace(trace_id)
    if checkpoint is None:
        console.print(f"[red]trace {trace_id} is not in the store[/red]")
        raise typer.Exit(1)
    row = summary_row(store, checkpoint)
    confidence = "-" if row["confidence"] is None else f"{row['confidence']:.2f}"
    console.print(
        f"status     [bold]{row['status']}[/bold]\ncategory   {row['category']} ({confidence})\n"
        f"route      {row['route']}\ndraft      {row['draft']}\n"
        f"inspect    inboxflow trace {trace_id} --dev{_home_flag(home)}"
    )
    if checkpoint.status == "running":
        console.print(f"[yellow]still running after {timeout:.0f}s[/yellow]")
        raise typer.Exit(1)


def _still_on(checkpoint: Checkpoint, approval_id: str | None) -> bool:
    """The trace still waits on ``approval_id`` (decided: its resume has not run yet)."""
    return approval_id is not None and (checkpoint.pause or {}).get("approval_id") == approval_id


def _home_flag(home: Path) -> str:
    return "" if home == DEFAULT_HOME else f" --home {home}"


def _deliver_to_gmail(
    console: Console, state: dict[str, Any], file: Path, email: Email
) -> tuple[str, str]:
    """Deliver ``file`` into the dev mailbox of the Gmail double; returns the mailbox and Gmail id."""
    from inboxflow.dev.gmail import deliver
    from inboxflow.ingest.claims import message_trace_id

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
    return str(gmail["mailbox"]), str(delivered["id"])


NO_TRACE = {
    "blocked": "loop protection",
    "own": "our own message (it carries the X-Inboxflow-Trace header)",
    "skipped": "not an inbound INBOX message",
    "gone": "deleted before ingest fetched it",
    "unreadable": "not an email ingest can read",
}
"""Ingest decisions that start no trace, with what they mean."""


def _ingested(
    console: Console,
    store: DocumentCheckpointStore,
    mailbox: str,
    gmail_id: str,
    deadline: float,
    timeout: float,
) -> tuple[str, str | None]:
    """Wait for ingest's decision on the message: the trace it started or resumed, and the
    approval the message decided (a review reply; else None).

    A decision that starts no trace (blocked, own, skipped, gone, unreadable) is
    printed with its reason at once, and the command ends. A reply to a review
    email (``review_reply``) is printed with what it did to its approval; when it
    decided, its trace is returned, else the command ends.

    Raises:
        typer.Exit: the command ends here (0: nothing to wait for; 1: no decision in time,
            or the message was gone or unreadable).
    """
    from inboxflow.ingest.claims import Claims

    claims = Claims(store)
    claim = claims.get(mailbox, gmail_id)
    while (claim is None or not claim.finished) and time.monotonic() < deadline:
        time.sleep(0.3)
        claim = claims.get(mailbox, gmail_id)
    if claim is None or not claim.finished:
        console.print(
            f"[yellow]ingest did not decide on message {gmail_id} after {timeout:.0f}s[/yellow]"
        )
        raise typer.Exit(1)
    state = claim.state
    if state in NO_TRACE:
        reason = claim.reason or NO_TRACE[state]
        console.print(
            f"ingest [bold]{state}[/bold] message {gmail_id}: {reason}\nno trace was started"
        )
        raise typer.Exit(1 if state in ("gone", "unreadable") else 0)
    if state == "review_reply":
        return _review_reply_trace(console, store, claim)
    console.print(f"ingest [bold]{state}[/bold] trace [bold]{claim.trace_id}[/bold]")
    return claim.trace_id, None


def _review_reply_trace(
    console: Console, store: DocumentCheckpointStore, claim: Claim
) -> tuple[str, str]:
    """What a reply to a review email did; the trace and approval it decided (else typer.Exit(0)).

    Its claim names the approval, not a trace: the id the claim was made under belongs
    to no trace (a review reply starts none).
    """
    from inboxflow.engine.waits import approval_path

    approval_id = claim.approval_id or ""
    outcome = claim.review_outcome or "not decided"
    decision = f" ({claim.decision})" if claim.decision else ""
    reason = f": {claim.reason}" if claim.reason else ""
    console.print(
        f"ingest [bold]review_reply[/bold] message {claim.gmail_id}: approval "
        f"[bold]{approval_id or '?'}[/bold] {outcome}{decision}{reason}",
        soft_wrap=True,
    )
    approval = store.get(approval_path(approval_id)) if approval_id else None
    if outcome != "decided" or approval is None or not approval.get("trace_id"):
        raise typer.Exit(0)
    trace_id = str(approval["trace_id"])
    console.print(f"the decision resumes trace [bold]{trace_id}[/bold]")
    return trace_id, approval_id


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

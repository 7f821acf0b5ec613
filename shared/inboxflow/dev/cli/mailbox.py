"""``inboxflow mailbox add|list|watch``: the mailbox registry from the command line."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.table import Table

from inboxflow.dev.cli.options import dev_option, home_option, use_home
from inboxflow.dev.cli.render import cli_console
from inboxflow.mail.addresses import address_key_or_none, ascii_lower
from inboxflow.ports.documents import DocumentStore
from inboxflow.settings import Settings

app = typer.Typer(
    help="Watched Gmail mailboxes: add, list, renew their watch.", no_args_is_help=True
)

DEV = dev_option()
HOME = home_option()


def _store(home: Path, dev: bool) -> DocumentStore:
    from inboxflow.services import make_store

    use_home(home, dev)
    return make_store(Settings.from_env())


@app.command("add")
def add(
    address: str = typer.Argument(..., help="The Gmail address."),
    graph: str = typer.Option("pipeline", help="The graph a new message starts."),
    reviewer: list[str] = typer.Option([], help="A reviewer's address (repeatable)."),
    auto_send: bool | None = typer.Option(None, help="Send approved replies without a human."),
    dev: bool = DEV,
    home: Path = HOME,
) -> None:
    """Register a mailbox (or change its graph and settings)."""
    from inboxflow.graphs import graph_registry
    from inboxflow.ingest.mailboxes import MailboxRegistry

    console = cli_console()
    if graph not in graph_registry():
        console.print(f"[red]unknown graph {graph!r}[/red]: one of {', '.join(graph_registry())}")
        raise typer.Exit(1)
    settings: dict[str, object] = {}
    if reviewer:
        settings["reviewers"] = [address_key_or_none(r) or ascii_lower(r.strip()) for r in reviewer]
    if auto_send is not None:
        settings["auto_send"] = auto_send
    store = _store(home, dev)
    try:
        mailbox = MailboxRegistry(store).add(address, time.time(), graph, settings or None)
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from None
    finally:
        store.close()
    console.print(
        f"mailbox [bold]{mailbox.address}[/bold] starts graph {mailbox.graph}; "
        "run [bold]inboxflow mailbox watch[/bold] to start its Gmail notifications"
    )


def _when_ms(value: int | None) -> str:
    if not value:
        return "-"
    return datetime.fromtimestamp(value / 1000, UTC).strftime("%Y-%m-%d %H:%M")


@app.command("list")
def list_mailboxes(dev: bool = DEV, home: Path = HOME) -> None:
    """Every registered mailbox with its cursor and watch."""
    from inboxflow.ingest.mailboxes import MailboxRegistry

    store = _store(home, dev)
    try:
        mailboxes = MailboxRegistry(store).mailboxes()
    finally:
        store.close()
    table = Table(title=f"{len(mailboxes)} mailboxes", expand=False)
    for column in (
        "address",
        "graph",
        "cursor",
        "watch expires (UTC)",
        "settings",
        "last full sync",
    ):
        table.add_column(column, overflow="fold")
    for mailbox in mailboxes:
        sync = mailbox.last_full_sync
        table.add_row(
            mailbox.address,
            mailbox.graph,
            str(mailbox.history_id or "-"),
            f"[red]{mailbox.watch_error}[/red]"
            if mailbox.watch_error
            else _when_ms(mailbox.watch_expiration_ms),
            ", ".join(f"{k}={v}" for k, v in sorted(mailbox.settings.items())) or "-",
            f"{sync['messages']} messages ({sync['reason']})" if sync else "-",
        )
    cli_console().print(table)


@app.command("watch")
def watch(
    address: str | None = typer.Argument(None, help="Only this mailbox (default: every one)."),
    topic: str | None = typer.Option(None, help="Topic (default INBOXFLOW_GMAIL_TOPIC)."),
    dev: bool = DEV,
    home: Path = HOME,
) -> None:
    """Call users.watch now (what the daily renew_watch function does)."""
    from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
    from inboxflow.clock import SystemClock
    from inboxflow.ingest.watch import renew_watches

    console = cli_console()
    store = _store(home, dev)
    wanted = (address_key_or_none(address) or ascii_lower(address.strip())) if address else None
    try:
        summary = renew_watches(
            store,
            GoogleApiGmailReader(),
            SystemClock(),
            topic=topic,
            only=(lambda a: a == wanted) if wanted else None,
        )
    finally:
        store.close()
    for row in summary["renewed"]:
        console.print(
            f"[green]watching[/green] {row['address']} -> {summary['topic']} until "
            f"{_when_ms(row['expiration_ms'])} UTC (cursor {row['cursor']})"
        )
    for row in summary["failed"]:
        console.print(f"[red]failed[/red] {row['address']}: {row['error']}")
    if not summary["renewed"] and not summary["failed"]:
        console.print(
            "no mailbox to watch: add one with [bold]inboxflow mailbox add ADDRESS[/bold]"
        )
    if summary["failed"]:
        raise typer.Exit(1)

"""``inboxflow mailbox add|connect|list|watch``: the mailbox registry from the command line.

``add`` registers a mailbox and starts its Gmail watch; ``connect`` runs the
owner's OAuth consent (``dev.mailbox_connect``), keeps the token per mailbox
and starts the watch; each says exactly why when the watch cannot start.
``list`` shows per mailbox its credential, scopes, watch, last notification
and health.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from inboxflow.dev.cli.options import dev_option, home_option, home_store
from inboxflow.dev.cli.render import cli_console
from inboxflow.mail.addresses import address_key_or_none, ascii_lower
from inboxflow.ports.documents import DocumentStore
from inboxflow.settings import Settings

app = typer.Typer(
    help="Watched Gmail mailboxes: add, list, renew their watch.", no_args_is_help=True
)

DEV = dev_option()
HOME = home_option()


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
    if graph not in graph_registry(os.environ):
        console.print(
            f"[red]unknown graph {graph!r}[/red]: one of {', '.join(graph_registry(os.environ))}"
        )
        raise typer.Exit(1)
    settings: dict[str, object] = {}
    if reviewer:
        settings["reviewers"] = [address_key_or_none(r) or ascii_lower(r.strip()) for r in reviewer]
    if auto_send is not None:
        settings["auto_send"] = auto_send
    store = home_store(home, dev)
    try:
        mailbox = MailboxRegistry(store).add(address, time.time(), graph, settings or None)
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from None
    finally:
        store.close()
    console.print(f"mailbox [bold]{mailbox.address}[/bold] starts graph {mailbox.graph}")
    _start_watch(home, dev, mailbox.address)


def _gmail_reader(store: DocumentStore) -> Any:
    """The Gmail reader the renew_watch function has: each mailbox's credentials ask for the
    scopes its graphs need (``services.mailbox_scopes_for``), whatever their type."""
    from inboxflow.adapters.google_api import google_api_url, mailbox_credentials
    from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
    from inboxflow.config import load_config
    from inboxflow.graphs import graph_registry
    from inboxflow.services import mailbox_scopes_for

    settings = Settings.from_env(os.environ)
    config = load_config(None, graphs=graph_registry(settings.environ), environ=settings.environ)
    scopes = mailbox_scopes_for(settings, store, config)
    return GoogleApiGmailReader(
        api_url=google_api_url(settings.environ),
        credentials=mailbox_credentials(settings.environ, scopes),
    )


def _start_watch(home: Path, dev: bool, address: str) -> bool:
    """Call ``users.watch`` for ``address`` and say what happened, or exactly why it could not."""
    from inboxflow.adapters.google_api import google_api_url
    from inboxflow.adapters.google_credentials import credentials_info
    from inboxflow.adapters.mailbox_tokens import token_store
    from inboxflow.clock import SystemClock
    from inboxflow.ingest.watch import gmail_topic, renew_watches

    console = cli_console()
    if not google_api_url(os.environ):
        try:
            connected = token_store(os.environ).get(address) is not None
            shared = credentials_info(os.environ) is not None
        except Exception as exc:
            console.print(f"[yellow]watch not started[/yellow]: {exc}")
            return False
        if not connected and not shared:
            console.print(
                f"[yellow]watch not started[/yellow]: {address} has no authorization yet: run "
                f"[bold]inboxflow mailbox connect {address} --client-secret FILE[/bold] "
                "(a personal account), or set INBOXFLOW_GMAIL_CREDENTIALS (Workspace delegation)"
            )
            return False
    store = home_store(home, dev)
    try:
        summary = renew_watches(
            store,
            _gmail_reader(store),
            SystemClock(),
            gmail_topic(os.environ),
            only=lambda a: a == address,
            catch_up=_publish_notification if os.environ.get("INBOXFLOW_BUS") == "pubsub" else None,
        )
    except Exception as exc:
        console.print(f"[yellow]watch not started[/yellow]: {type(exc).__name__}: {exc}")
        return False
    finally:
        store.close()
    _print_watching(console, summary)
    for row in summary["failed"]:
        console.print(
            f"[yellow]watch not started[/yellow] for {row['address']}: {row['error']} "
            "(Gmail must be able to publish to the topic: see docs/deploy.md)"
        )
    for gone in summary["disconnected"]:
        console.print(
            f"[yellow]watch not started[/yellow]: {gone} is disconnected: run "
            f"[bold]inboxflow mailbox connect {gone}[/bold]"
        )
    return bool(summary["renewed"])


def _publish_notification(address: str, history_id: int) -> None:
    """Tell the ingest, as Gmail would, that ``address`` changed: mail that arrived while it was
    disconnected or unwatched is ingested now (a Gmail notification on the Gmail topic)."""
    import base64

    from inboxflow.adapters.pubsub_bus import publish_data
    from inboxflow.ingest.notification import GmailNotification
    from inboxflow.ingest.watch import gmail_topic

    message = GmailNotification(address, history_id).to_pubsub_message()
    publish_data(gmail_topic(os.environ), base64.b64decode(message["data"]))
    cli_console().print(f"asked the ingest to catch {address} up (history {history_id})")


@app.command("connect")
def connect(
    address: str = typer.Argument(..., help="The Gmail address to connect (yours)."),
    client_secret: Path | None = typer.Option(
        None,
        "--client-secret",
        help="The JSON of an OAuth client of type Desktop app "
        "(default INBOXFLOW_OAUTH_CLIENT; `inboxflow dev` sets it to its double's).",
    ),
    browser: bool = typer.Option(
        True, "--browser/--no-browser", help="Open a browser here, or print a URL to open."
    ),
    dev: bool = DEV,
    home: Path = HOME,
) -> None:
    """Connect your own Gmail: consent in the browser; the token is kept for this mailbox only."""
    from inboxflow.adapters.google_api import google_api_url
    from inboxflow.adapters.mailbox_tokens import token_store
    from inboxflow.config import load_config
    from inboxflow.dev.mailbox_connect import ConsentRefused, connect_mailbox
    from inboxflow.graphs import graph_registry
    from inboxflow.ingest.mailboxes import MailboxRegistry
    from inboxflow.mailbox_scopes import mailbox_scopes

    console = cli_console()
    store = home_store(home, dev)
    secret_file = client_secret or (
        Path(os.environ["INBOXFLOW_OAUTH_CLIENT"])
        if os.environ.get("INBOXFLOW_OAUTH_CLIENT")
        else None
    )
    if secret_file is None:
        store.close()
        console.print(
            "[red]no OAuth client[/red]: pass --client-secret FILE, the JSON of an OAuth client "
            "of type Desktop app (docs/deploy.md, Connect your Gmail)"
        )
        raise typer.Exit(1)
    try:
        mailbox = MailboxRegistry(store).get(address)
    except ValueError as exc:
        store.close()
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from None
    if mailbox is None:
        store.close()
        console.print(
            f"[red]{address} is not registered[/red]: run "
            f"[bold]inboxflow mailbox add {address} --graph GRAPH[/bold] first"
        )
        raise typer.Exit(1)
    try:
        graphs = graph_registry(os.environ)
        scopes = mailbox_scopes(
            mailbox.address,
            mailbox.graph,
            graphs,
            load_config(None, graphs=graphs, environ=os.environ),
        )
        connected = connect_mailbox(
            mailbox.address,
            secret_file,
            scopes,
            token_store(os.environ),
            open_browser=browser,
            read_line=lambda prompt: typer.prompt(
                prompt.rstrip(": "), default="", show_default=False
            ),
            say=lambda line: console.print(line, soft_wrap=True, highlight=False),
            api_url=google_api_url(os.environ),
        )
        MailboxRegistry(store).record_connection(
            mailbox.address,
            {"type": "authorized_user", "scopes": list(connected.scopes), "where": connected.where},
            time.time(),
        )
    except ConsentRefused as exc:
        console.print(f"[red]not connected[/red]: {exc}", soft_wrap=True, highlight=False)
        raise typer.Exit(1) from None
    finally:
        store.close()
    console.print(
        f"[green]connected[/green] {connected.address} "
        f"({', '.join(s.rsplit('/', 1)[-1] for s in connected.scopes)}); token kept in "
        f"{connected.where}",
        soft_wrap=True,
    )
    if not _start_watch(home, dev, connected.address):
        raise typer.Exit(1)


def _when_ms(value: int | None) -> str:
    if not value:
        return "-"
    return datetime.fromtimestamp(value / 1000, UTC).strftime("%Y-%m-%d %H:%M")


@app.command("list")
def list_mailboxes(dev: bool = DEV, home: Path = HOME) -> None:
    """Every registered mailbox: credential, scopes, watch, last notification, health."""
    from inboxflow.ingest.mailboxes import MailboxRegistry

    store = home_store(home, dev)
    try:
        mailboxes = MailboxRegistry(store).mailboxes()
    finally:
        store.close()
    shared = _shared_credential()
    table = Table(title=f"{len(mailboxes)} mailboxes", expand=False)
    for column in (
        "address",
        "graph",
        "credential",
        "scopes",
        "cursor",
        "watch expires (UTC)",
        "last notification (UTC)",
        "health",
        "last catch-up",
        "settings",
    ):
        table.add_column(column, overflow="fold")
    for mailbox in mailboxes:
        sync = mailbox.last_full_sync
        credential = mailbox.credential or shared
        scopes: Any = credential.get("scopes") or []
        table.add_row(
            mailbox.address,
            mailbox.graph,
            str(credential.get("type") or "-"),
            " ".join(str(s).rsplit("/", 1)[-1] for s in scopes) or "-",
            str(mailbox.history_id or "-"),
            f"[red]{mailbox.watch_error}[/red]"
            if mailbox.watch_error
            else _when_ms(mailbox.watch_expiration_ms),
            _when_ms(int(mailbox.last_notification_at * 1000))
            if mailbox.last_notification_at
            else "-",
            _health(mailbox),
            f"{sync['messages']} messages ({sync['reason']})" if sync else "-",
            ", ".join(f"{k}={v}" for k, v in sorted(mailbox.settings.items())) or "-",
        )
    cli_console().print(table)


def _health(mailbox: object) -> str:
    from inboxflow.ingest.mailboxes import DISCONNECTED, Mailbox

    assert isinstance(mailbox, Mailbox)
    if mailbox.health == DISCONNECTED:
        return (
            f"[red]disconnected[/red] ({mailbox.disconnected_reason}): "
            f"inboxflow mailbox connect {mailbox.address}"
        )
    if mailbox.watch_expiration_ms and mailbox.watch_expiration_ms <= time.time() * 1000:
        return "[yellow]watch lapsed[/yellow]: inboxflow mailbox watch"
    if not mailbox.watch_expiration_ms:
        return "[yellow]not watched[/yellow]"
    return "[green]ok[/green]"


def _shared_credential() -> dict[str, object]:
    """What a mailbox without a token of its own uses (never the key itself)."""
    from inboxflow.adapters.google_api import google_api_url
    from inboxflow.adapters.google_credentials import SCOPES, credentials_info

    if google_api_url(os.environ):
        return {"type": "none (local double)"}
    try:
        info = credentials_info(os.environ)
    except Exception as exc:
        return {"type": f"unreadable: {exc}"}
    if info is None:
        return {"type": "application default"}
    return {"type": f"{info['type']} (shared)", "scopes": list(info.get("scopes") or SCOPES)}


@app.command("watch")
def watch(
    address: str | None = typer.Argument(None, help="Only this mailbox (default: every one)."),
    topic: str | None = typer.Option(None, help="Topic (default INBOXFLOW_GMAIL_TOPIC)."),
    dev: bool = DEV,
    home: Path = HOME,
) -> None:
    """Call users.watch now (what the daily renew_watch function does)."""
    from inboxflow.clock import SystemClock
    from inboxflow.ingest.watch import gmail_topic, renew_watches

    console = cli_console()
    store = home_store(home, dev)
    wanted = (address_key_or_none(address) or ascii_lower(address.strip())) if address else None
    try:
        summary = renew_watches(
            store,
            _gmail_reader(store),
            SystemClock(),
            topic=topic or gmail_topic(os.environ),
            only=(lambda a: a == wanted) if wanted else None,
            catch_up=_publish_notification if os.environ.get("INBOXFLOW_BUS") == "pubsub" else None,
        )
    finally:
        store.close()
    _print_watching(console, summary)
    for row in summary["failed"]:
        console.print(f"[red]failed[/red] {row['address']}: {row['error']}")
    for gone in summary["disconnected"]:
        console.print(
            f"[yellow]disconnected[/yellow] {gone}: run [bold]inboxflow mailbox connect {gone}[/bold]"
        )
    if not summary["renewed"] and not summary["failed"] and not summary["disconnected"]:
        console.print(
            "no mailbox to watch: add one with [bold]inboxflow mailbox add ADDRESS[/bold]"
        )
    if summary["failed"]:
        raise typer.Exit(1)


def _print_watching(console: Any, summary: dict[str, Any]) -> None:
    """One line per mailbox whose watch a renewal started: topic, expiry and cursor."""
    for row in summary["renewed"]:
        console.print(
            f"[green]watching[/green] {row['address']} -> {summary['topic']} until "
            f"{_when_ms(row['expiration_ms'])} UTC (cursor {row['cursor']})"
        )

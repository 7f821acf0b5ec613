"""``inboxflow person ADDRESS``: what is held about a person; ``--export`` it, ``--erase`` it.

Reads the configured store: the embedded SQLite file under ``--home``, the
emulated cloud (``--dev``), or Firestore in ``--project``. Every collection
``schema.py`` declares is searched (``inboxflow.personal``).
"""

from __future__ import annotations

import getpass
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from inboxflow.dev.cli.options import dev_option, home_option, use_home
from inboxflow.dev.cli.render import cli_console
from inboxflow.settings import Settings

if TYPE_CHECKING:
    from inboxflow.personal.finder import Holdings

ADDRESS = typer.Argument(..., help="The person's email address.")
EXPORT = typer.Option(
    None, "--export", help="Write everything held as one JSON document to FILE (an access request)."
)
ERASE = typer.Option(
    False,
    "--erase",
    help="Delete what is about the address; redact others' records that mention it.",
)
YES = typer.Option(False, "--yes", "-y", help="Erase without asking for confirmation.")
BY = typer.Option(None, "--by", help="Who asks for the erasure (default: the login name).")
PROJECT = typer.Option(
    None, "--project", help="Read Firestore in this Google Cloud project (not the embedded store)."
)
HOME = home_option()
DEV = dev_option()


def person(
    address: str = ADDRESS,
    export: Path | None = EXPORT,
    erase: bool = ERASE,
    yes: bool = YES,
    by: str | None = BY,
    project: str | None = PROJECT,
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """Everything held about ADDRESS in every collection: --export it, --erase it."""
    from inboxflow.clock import SystemClock
    from inboxflow.dev.personal.access import access_document
    from inboxflow.mail.addresses import address_key
    from inboxflow.personal.erasure import Eraser
    from inboxflow.personal.finder import PersonFinder
    from inboxflow.services import make_store, make_vector_index

    try:
        address_key(address)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    use_home(home, dev)
    if project:
        os.environ.update(INBOXFLOW_STORE="firestore", GOOGLE_CLOUD_PROJECT=project)
    store = make_store(Settings.from_env(os.environ))
    try:
        vectors = make_vector_index(store)
        clock = SystemClock()
        holdings = PersonFinder(store, vectors).find(address)
        _show(holdings)
        if export is not None:
            document = access_document(holdings, clock.now())
            export.write_text(
                json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n",
                encoding="utf-8",
            )
            typer.echo(f"wrote {export}: {len(holdings)} documents")
        if not erase:
            return
        if not yes and not typer.confirm(
            f"Erase everything held about {holdings.person.address} ({len(holdings.held)}"
            f" documents deleted, {len(holdings.mentions)} of others' redacted)?"
        ):
            typer.echo("nothing erased")
            raise typer.Exit(1)
        report = Eraser(store, vectors, clock).erase(address, by or getpass.getuser())
        erased = {name: t["deleted"] + t["redacted"] for name, t in report.counts.items()}
        typer.echo(
            f"erased {sum(erased.values())} documents"
            + (f" ({', '.join(f'{n} {name}' for name, n in erased.items())})" if erased else "")
            + (f"; ended traces {', '.join(report.ended)}" if report.ended else "")
            + f"; erasure record {report.record.address_sha256[:16]}... ({report.record.status})"
        )
    finally:
        store.close()


def _show(holdings: Holdings) -> None:
    from inboxflow.schema import MEMORY, MEMORY_HISTORY, TICKETS, TRACES

    console = cli_console()
    person = holdings.person
    if not holdings.held:
        console.print(Text(f"nothing held about {person.address}"))
        return
    table = Table(
        title=f"held about {person.address}: {len(holdings.held)} documents;"
        f" mentioned in {len(holdings.mentions)} of others'"
    )
    table.add_column("collection", no_wrap=True)
    table.add_column("about them", justify="right")
    table.add_column("mentioning them", justify="right")
    about, mentioning = holdings.counts(), holdings.mention_counts()
    for name in [*about, *(n for n in mentioning if n not in about)]:
        table.add_row(name, str(about.get(name, "")), str(mentioning.get(name, "")))
    console.print(table)
    lines = {
        "traces": [h.doc_id for h in holdings.of(TRACES)],
        "tickets": [h.doc_id for h in holdings.of(TICKETS)],
        "memory entries": [h.path for h in (*holdings.of(MEMORY), *holdings.of(MEMORY_HISTORY))],
        "vectors": [f"{h.collection.name}/{h.doc_id}" for h in holdings.held if h.is_vector],
    }
    for label, items in lines.items():
        if items:
            console.print(Text(f"{label}: {', '.join(items)}"))
    others = [h.path for h in holdings.mentions if h.collection.parent is None]
    if others:
        console.print(Text(f"mentioned in others' records: {', '.join(others)}"))

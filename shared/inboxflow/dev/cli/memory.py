"""``inboxflow memory``: what every graph has learnt of a mailbox's preferences, and why.

The assistant learns every namespace from its owner; the pipeline, the support desk
and the planner learn ``response_preferences`` from reviewers' edits and rejections of
their drafts (``graphs/reply_learning.py``): the same memory, per mailbox.

The memory lives in the configured store: the embedded SQLite file under
``--home`` (default ``INBOXFLOW_HOME`` or ``.inboxflow``), Firestore when the
environment says so, or (``--dev``) the emulated cloud running on ``--home``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from inboxflow.dev.cli.options import dev_option, home_option, home_store
from inboxflow.dev.cli.render import cli_console

if TYPE_CHECKING:
    from inboxflow.memory import PreferenceMemory

app = typer.Typer(
    help="What the graphs learnt of each mailbox's preferences (the assistant from its owner; "
    "every graph's drafts from reviewers' edits and rejections).",
    no_args_is_help=True,
)

T = TypeVar("T")

HOME = home_option()
DEV = dev_option()
NAMESPACE_HELP = "triage_preferences, response_preferences or cal_preferences (default: all)."
MAILBOX = typer.Argument(..., help="The mailbox (its address), whichever graph serves it.")
NAMESPACE = typer.Argument(None, help=NAMESPACE_HELP)


def _each(
    home: Path, dev: bool, names: tuple[str, ...], act: Callable[[PreferenceMemory, str], T]
) -> list[tuple[str, T]]:
    """``act`` on each namespace of ``names`` of the configured store's memory, in order."""
    from inboxflow.clock import SystemClock
    from inboxflow.memory import PreferenceMemory

    store = home_store(home, dev)
    try:
        preferences = PreferenceMemory(store, SystemClock())
        return [(name, act(preferences, name)) for name in names]
    finally:
        store.close()


def _namespaces(namespace: str | None) -> tuple[str, ...]:
    from inboxflow.memory import NAMESPACES

    if namespace is None:
        return NAMESPACES
    if namespace not in NAMESPACES:
        typer.echo(
            f"error: unknown namespace {namespace!r} (known: {', '.join(NAMESPACES)})", err=True
        )
        raise typer.Exit(2)
    return (namespace,)


def _when(epoch_s: float | None) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M UTC") if epoch_s else "-"


@app.command("show")
def show(
    mailbox: str = MAILBOX,
    namespace: str | None = NAMESPACE,
    as_json: bool = typer.Option(False, "--json", help="One JSON object per namespace."),
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """The current preferences (defaults where nothing was learnt yet)."""
    console = cli_console()
    read = _each(home, dev, _namespaces(namespace), lambda memory, name: memory.read(mailbox, name))
    for name, memory in read:
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "namespace": name,
                        "version": memory.version,
                        "updated_at": memory.updated_at,
                        "why": memory.why,
                        "profile": memory.profile,
                    }
                )
            )
            continue
        title = f"{name} of {memory.mailbox}: version {memory.version}"
        console.print(Text(title + ("" if memory.version else " (defaults)"), style="bold"))
        table = Table()
        table.add_column("preference", no_wrap=True)
        table.add_column("value")
        for key, value in memory.profile.items():
            table.add_row(key, Text(json.dumps(value, ensure_ascii=False)))
        console.print(table)
        if memory.version:
            console.print(Text(f"last change {_when(memory.updated_at)}: {memory.why}"))


@app.command("history")
def history(
    mailbox: str = MAILBOX,
    namespace: str | None = NAMESPACE,
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """The kept changes (the last 50 per namespace), newest first, with why and what caused them."""
    console = cli_console()
    kept = _each(
        home, dev, _namespaces(namespace), lambda memory, name: memory.history(mailbox, name)
    )
    for name, changes in kept:
        table = Table(title=f"{name} of {mailbox.lower()}: {len(changes)} changes kept")
        for column in ("version", "when", "why", "source"):
            table.add_column(column, overflow="fold")
        for change in changes:
            table.add_row(
                str(change["version"]),
                _when(change["at"]),
                Text(change["why"]),
                Text(change["source"]),
            )
        console.print(table)


@app.command("reset")
def reset(
    mailbox: str = MAILBOX,
    namespace: str | None = NAMESPACE,
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    home: Path = HOME,
    dev: bool = DEV,
) -> None:
    """Back to the defaults (kept as a change in the history)."""
    names = _namespaces(namespace)
    if not yes and not typer.confirm(f"reset {', '.join(names)} of {mailbox}?"):
        raise typer.Exit(1)
    for name, memory in _each(home, dev, names, lambda memory, name: memory.reset(mailbox, name)):
        typer.echo(f"{name} of {memory.mailbox}: reset (version {memory.version})")

"""``inboxflow dev`` and ``inboxflow send``: the emulated cloud (filled in below)."""

from __future__ import annotations

from pathlib import Path

import typer


def dev() -> None:
    """The emulated cloud: emulators + one functions-framework process per node + push subscriptions."""
    raise typer.Exit(1)


def send(file: Path = typer.Argument(..., help=".eml or .json email")) -> None:
    """Drop an email into the running emulated cloud (`inboxflow dev`)."""
    raise typer.Exit(1)

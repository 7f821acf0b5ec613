"""The emulated cloud ``inboxflow dev`` runs on a home: its state file and its environment.

``--dev`` on any command points the process at it (``use_dev_env``); ``dev`` writes it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer

from inboxflow.dev import process_groups
from inboxflow.dev.cli.render import cli_console

STATE_FILE = "dev.json"


def state_file(home: Path) -> Path:
    """Where ``inboxflow dev`` on ``home`` writes its addresses and processes."""
    return home / STATE_FILE


def dev_state(home: Path) -> dict[str, Any]:
    """What the ``inboxflow dev`` running on ``home`` wrote (``dev.json``).

    Raises:
        typer.Exit: (code 2, with a message) when no emulated cloud runs there.
    """
    state_path = state_file(home)
    try:
        state: dict[str, Any] = json.loads(state_path.read_text())
    except FileNotFoundError:
        state = {}
    pid = int(state.get("pid") or 0)
    if not state or not process_groups.running(pid):
        gone = f"its process {pid} is gone" if state else f"{state_path} not found"
        cli_console(stderr=True).print(
            f"[red]No emulated cloud is running on {home}[/red] ({gone}): "
            f"start [bold]inboxflow dev --home {home}[/bold] first."
        )
        raise typer.Exit(2)
    return state


def use_dev_env(home: Path) -> None:
    """Point this process at the emulated cloud running on ``home`` (for ``--dev``)."""
    os.environ.update(dev_state(home)["env"])

"""Options every command shares, so that one rule holds everywhere.

``--home`` is the folder of the embedded store and of the running emulated
cloud's addresses (``dev.json``): ``--home`` beats ``INBOXFLOW_HOME``, which
beats ``.inboxflow``. ``--dev`` (a flag, never a value) reads the emulated cloud
that ``inboxflow dev --home`` (the same home) started.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from inboxflow.ports.checkpoint import DocumentCheckpointStore

HOME_VARIABLE = "INBOXFLOW_HOME"
DEFAULT_HOME = Path(".inboxflow")


def home_option(
    help: str = "Folder of the embedded store and of `inboxflow dev`'s addresses.",
) -> Any:
    """``--home DIR``: the option, then ``INBOXFLOW_HOME``, then ``.inboxflow``."""
    return typer.Option(DEFAULT_HOME, "--home", envvar=HOME_VARIABLE, help=help)


def dev_option() -> Any:
    """``--dev``: read the running emulated cloud of ``--home`` instead of the embedded store."""
    return typer.Option(
        False,
        "--dev",
        help="Read the running emulated cloud (`inboxflow dev --home` the same home).",
    )


def use_home(home: Path, dev: bool = False) -> None:
    """Point this process at ``home``: its embedded store, or (``dev``) the emulated cloud running there.

    Raises:
        typer.Exit: with ``dev``, when no emulated cloud runs on ``home``.
    """
    os.environ[HOME_VARIABLE] = str(home)
    if dev:
        from inboxflow.dev.cli.running import use_dev_env

        use_dev_env(home)


def home_store(home: Path, dev: bool = False) -> DocumentCheckpointStore:
    """The configured store of ``home`` (``use_home``), opened; the caller closes it."""
    from inboxflow.services import make_store
    from inboxflow.settings import Settings

    use_home(home, dev)
    return make_store(Settings.from_env(os.environ))

"""Every command that reads the store takes ``--home`` (and ``--dev``), like the rest: the
option, not only ``INBOXFLOW_HOME``, says whose store it reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.cli import app
from inboxflow.graphs.support.tickets import TicketStore
from inboxflow.schema import AGENT_RUNS

READ_NO_STORE = {"route", "graphs", "infra export", "eval run", "check"}
"""Commands that read no store, so no home: files and code, ``eval run`` (a fresh home per
case), ``check`` (the Gemini API only)."""


def _commands(command: Any, path: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Each leaf command's name (``kb add``) and its option spellings."""
    subcommands = getattr(command, "commands", None)
    if subcommands:
        found: dict[str, set[str]] = {}
        for name, sub in subcommands.items():
            found.update(_commands(sub, (*path, name)))
        return found
    return {" ".join(path): {opt for param in command.params for opt in param.opts}}


def test_every_command_that_reads_the_store_takes_home() -> None:
    commands = _commands(typer.main.get_command(app))
    without = {name for name, options in commands.items() if "--home" not in options}
    assert without == READ_NO_STORE
    for name in ("tickets", "ticket", "runs", "memory show", "trace"):
        assert "--dev" in commands[name], name


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store under ``tmp/elsewhere`` holding a ticket and an agent run; cwd has none."""
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "elsewhere"
    home.mkdir()
    store = SqliteCheckpointStore(home / "inboxflow.db")
    TicketStore(store, draw=lambda n: 12345678 % n).open(
        "cus_free_sam", "Export to PDF", "thread-1", customer_email="sam@example.test"
    )
    store.set(
        f"{AGENT_RUNS.name}/run-1",
        {"run_id": "run-1", "profile": "pharmacy", "status": "completed", "created_at": 1.0},
    )
    store.close()
    return home


def test_tickets_ticket_and_runs_read_the_store_under_home(home: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["tickets", "--home", str(home), "--json"])
    assert listed.exit_code == 0, listed.output
    (ticket,) = [json.loads(line) for line in listed.output.splitlines()]
    assert ticket["subject"] == "Export to PDF"
    shown = runner.invoke(app, ["ticket", ticket["ticket_id"], "--home", str(home), "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["customer_email"] == "sam@example.test"
    runs = runner.invoke(app, ["runs", "--home", str(home), "--json"])
    assert runs.exit_code == 0, runs.output
    assert [json.loads(line)["run_id"] for line in runs.output.splitlines()] == ["run-1"]
    assert not (home.parent / ".inboxflow").exists()


def test_home_store_opens_the_store_under_home(home: Path) -> None:
    from inboxflow.dev.cli.options import home_store

    store = home_store(home)
    try:
        assert [doc_id for doc_id, _ in store.list(AGENT_RUNS.name)] == ["run-1"]
    finally:
        store.close()
    assert not (home.parent / ".inboxflow").exists()

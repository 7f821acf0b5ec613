"""Every command prints through ``cli_console``: piped off a terminal, tables get 160 columns."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from rich.table import Table

import inboxflow.dev.cli as cli_package
from inboxflow.dev.cli.render import PIPED_WIDTH, cli_console

CLI = Path(cli_package.__file__).parent


def _bare_consoles(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Console"
    ]


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_no_command_builds_a_bare_rich_console(path: Path) -> None:
    if path.name == "render.py":  # where cli_console itself is
        return
    assert _bare_consoles(path) == [], f"{path.name}: use cli_console(), not Console()"


def test_a_piped_console_is_160_columns_and_keeps_its_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    console = cli_console(highlight=False)
    assert console.width == PIPED_WIDTH
    table = Table("trace_id", "subject")
    table.add_row("a" * 16, "x" * 120)
    console.print(table)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    assert lines and "x" * 120 in lines[0]
    assert cli_console(stderr=True).stderr

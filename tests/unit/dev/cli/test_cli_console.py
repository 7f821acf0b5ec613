"""The CLI's console: as wide as the terminal; off a terminal, wide enough for its tables."""

from __future__ import annotations

import pytest

from inboxflow.dev.cli.render import PIPED_WIDTH, cli_console


def test_output_that_is_not_a_terminal_gets_the_piped_width(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    console = cli_console()
    assert not console.is_terminal  # pytest captures stdout
    assert console.width == PIPED_WIDTH == 160
    assert cli_console(stderr=True).width == PIPED_WIDTH


def test_columns_in_the_environment_still_decides(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert cli_console().width == 100

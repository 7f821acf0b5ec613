"""One rule on every command: `--home` beats `INBOXFLOW_HOME`, which beats `.inboxflow`;
`--dev` is a flag everywhere and names the cloud `inboxflow dev --home` started."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_cli import SAMPLES, run_cli

READERS = [
    ["traces"],
    ["failures"],
    ["approvals"],
    ["mailbox", "list"],
    ["kb", "list"],
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A home holding one trace waiting for approval; returns it and the trace id."""
    folder = tmp_path_factory.mktemp("home")
    home = folder / "store"
    ran = run_cli(
        "run", "--home", str(home), str(SAMPLES / "04-complaint-double-charge.eml"), cwd=folder
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    trace_id = next(w for w in ran.stdout.split() if len(w) == 16 and w.isalnum())
    return home, trace_id


def test_every_command_reads_the_home_it_is_given(home: tuple[Path, str], tmp_path: Path) -> None:
    folder, trace_id = home
    by_option = run_cli("trace", trace_id, "--home", str(folder), cwd=tmp_path)
    assert by_option.returncode == 0, by_option.stdout + by_option.stderr
    by_env = run_cli("traces", cwd=tmp_path, env={"INBOXFLOW_HOME": str(folder)})
    assert trace_id in by_env.stdout, by_env.stdout + by_env.stderr
    for command in READERS:
        result = run_cli(*command, "--home", str(folder), cwd=tmp_path)
        assert result.returncode == 0, (command, result.stdout + result.stderr)
        assert not (tmp_path / ".inboxflow").exists(), command  # nothing read from the default
    pending = run_cli("approvals", "--home", str(folder), cwd=tmp_path)
    assert "1 pending approvals" in pending.stdout
    kb = run_cli("kb", "list", "--home", str(folder), cwd=tmp_path)
    assert str(folder) in kb.stdout.replace("\n", "")


def test_the_option_beats_the_variable(home: tuple[Path, str], tmp_path: Path) -> None:
    folder, trace_id = home
    other = tmp_path / "other"
    result = run_cli(
        "traces", "--home", str(other), cwd=tmp_path, env={"INBOXFLOW_HOME": str(folder)}
    )
    assert result.returncode == 0 and trace_id not in result.stdout, result.stdout
    pending = run_cli(
        "approvals", "--home", str(other), cwd=tmp_path, env={"INBOXFLOW_HOME": str(folder)}
    )
    assert "no pending approvals" in pending.stdout, pending.stdout


@pytest.mark.parametrize(
    "command",
    [["trace", "0123456789abcdef"], *READERS, ["mailbox", "watch"], ["mailbox", "add", "a@b.test"]],
    ids=lambda c: " ".join(c),
)
def test_dev_is_a_flag_that_names_the_cloud_of_the_home(command: list[str], tmp_path: Path) -> None:
    result = run_cli(*command, "--dev", "--home", str(tmp_path / "cloud"), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"No emulated cloud is running on {tmp_path / 'cloud'}" in result.stderr.replace(
        "\n", ""
    )

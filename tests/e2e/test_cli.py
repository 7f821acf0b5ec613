"""The command line as a user meets it: real processes, real output."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.cells import cell_len

from inboxflow.dev import emulators
from inboxflow.dev.cli.local import graph_samples
from inboxflow.graphs import graph_registry

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]
SAMPLES = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "inboxflow"
    / "graphs"
    / "pipeline"
    / "samples"
    / "inbox"
)


def run_cli(
    *args: str, cwd: Path, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_piped(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI with stdout a pipe, not a terminal, and no ``COLUMNS`` to say how wide."""
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")},
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_a_whole_trace_table_160_wide(output: str) -> None:
    lines = output.splitlines()
    (header,) = [line for line in lines if line.startswith("┃ trace_id")]
    for column in ("email", "graph", "rule", "category", "conf.", "route taken", "status"):
        assert f"┃ {column} " in header, header
    table = [line for line in lines if line.startswith(("│", "┃"))]
    assert {cell_len(line) for line in table} == {160}  # columns on screen, not characters
    rows = [line for line in lines if line.startswith("│ ") and len(line[2:18].strip()) == 16]
    assert rows and all(line[2:18].isalnum() for line in rows)  # whole trace ids, no "…"


def test_the_demo_piped_to_a_file_gets_a_table_as_wide_as_a_log_viewer_not_80_columns(tmp_path):
    result = run_piped("demo", "--home", str(tmp_path / "home"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert_a_whole_trace_table_160_wide(result.stdout)


def test_the_traces_listing_piped_gets_the_same_width(tmp_path):
    home = str(tmp_path / "home")
    sample = str(SAMPLES / "04-complaint-double-charge.eml")
    assert run_piped("run", "--home", home, sample, cwd=tmp_path).returncode == 0
    result = run_piped("traces", "--home", home, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert_a_whole_trace_table_160_wide(result.stdout)


def test_demo_prints_a_row_per_sample_and_trace_shows_the_steps(tmp_path):
    result = run_cli("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    samples = [p for p in SAMPLES.iterdir() if p.suffix in (".eml", ".json")]
    samples += graph_samples(graph_registry())
    rows = [
        line
        for line in result.stdout.splitlines()
        if line.startswith("│ ") and line[2:18].strip().isalnum() and len(line[2:18].strip()) == 16
    ]
    assert len(rows) == len(samples) >= 12
    assert "waiting" in result.stdout and "done" in result.stdout
    assert re.search(r"inboxflow inbox \S+@\S+", result.stdout), "the demo names the inbox"
    trace_id = rows[0][2:18]
    trace = run_cli("trace", trace_id, cwd=tmp_path)
    assert trace.returncode == 0, trace.stderr
    assert "classify" in trace.stdout and "state delta" in trace.stdout
    state = json.loads(run_cli("trace", trace_id, "--at", "1", "--json", cwd=tmp_path).stdout)
    assert state["classification"]["category"] and state["email"]["subject"]


def test_run_refuses_garbage_and_oversized_mail_with_clear_errors(tmp_path):
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    huge = tmp_path / "huge.json"
    sample = json.loads(next(SAMPLES.glob("*.json")).read_text())
    sample["body_text"] = "lorem ipsum " * 900_000
    huge.write_text(json.dumps(sample))
    good = next(SAMPLES.glob("*.eml"))
    result = run_cli("run", str(garbage), str(huge), str(good), cwd=tmp_path)
    assert result.returncode == 1
    assert "skipped" in result.stdout and "garbage.json" in result.stdout
    assert "refused" in result.stdout and "a checkpoint holds at most 900 KB" in result.stdout
    assert "1 emails" in result.stdout  # the good one still ran


def test_dev_says_clearly_when_the_emulators_are_not_installed(tmp_path):
    env = {"INBOXFLOW_GCLOUD_SDK": str(tmp_path / "no-sdk"), "PATH": "/usr/bin:/bin"}
    result = run_cli("dev", "--exit-after", "1", cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert "The emulated cloud cannot start" in result.stdout
    assert "make demo" in result.stdout


@pytest.mark.emulator
@pytest.mark.slow
def test_dev_then_send_runs_a_mail_through_the_emulated_cloud(tmp_path):
    missing = {
        n: r for n, r in emulators.available().items() if r is not True and n != emulators.TASKS
    }
    if missing:
        pytest.skip(f"emulators not installed: {missing}")
    log_path = tmp_path / "dev.log"
    with log_path.open("w") as log:
        dev = subprocess.Popen(
            [*CLI, "dev", "--exit-after", "240"],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env={**os.environ, "COLUMNS": "250"},
        )
    try:
        state = tmp_path / ".inboxflow" / "dev.json"
        deadline = time.monotonic() + 180
        while not state.exists() and time.monotonic() < deadline and dev.poll() is None:
            time.sleep(0.5)
        assert state.exists(), log_path.read_text()
        result = run_cli("send", str(SAMPLES / "03-meeting-request.eml"), cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "status     done" in result.stdout
        assert "meeting_request" in result.stdout
        deadline = time.monotonic() + 30  # dev's watcher shows the finished trace too
        while "dispatch → END" not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        os.killpg(dev.pid, signal.SIGINT)
        dev.wait(timeout=60)
    assert "dispatch → END" in log_path.read_text()
    assert not (tmp_path / ".inboxflow" / "dev.json").exists()

"""What a killed test run left running (its emulators) is stopped by the next run, and only
that: a run still going on keeps its emulators, a process that merely reuses a listed pid
is never touched. Every process here is one this test starts, in a journal folder of its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inboxflow.dev import emulators, process_groups
from tests.harness.required import skip_unless_required

RUN = """
import sys, time
from pathlib import Path
from inboxflow.dev import emulators, process_groups
process_groups.begin_run(Path(sys.argv[1]))
emulator = emulators.start_tasks()
print(emulator.process.pid, flush=True)
time.sleep(600)
"""


class ChildRun:
    """A process that journals its run in a folder and starts the Cloud Tasks emulator."""

    def __init__(self, folder: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", RUN, str(folder)],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        assert line.isdigit(), f"the run did not start its emulator: {line!r}"
        self.emulator_pid = int(line)
        self.emulator_started = process_groups.start_time(self.emulator_pid)

    def emulator_alive(self) -> bool:
        started = process_groups.start_time(self.emulator_pid)
        return started != 0 and started == self.emulator_started

    def kill(self) -> None:
        """SIGKILL the run alone, as a killed pytest: its emulator stays behind."""
        self.process.kill()
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """Stop what this test started: the run, and its emulator if still the same process."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        if self.emulator_alive():
            process_groups.stop_groups([self.emulator_pid])


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[list[ChildRun]]:
    if emulators.available()[emulators.TASKS] is not True:
        skip_unless_required("the Cloud Tasks emulator is not installed")
    started: list[ChildRun] = []
    yield started
    for run in started:
        run.stop()


def _gone(pid: int, started: int, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process_groups.start_time(pid) != started:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.emulator
def test_the_next_run_stops_the_emulators_of_a_killed_run_and_spares_a_live_one(
    tmp_path: Path, runs: list[ChildRun]
) -> None:
    folder = tmp_path / "runs"
    killed = ChildRun(folder)
    runs.append(killed)
    live = ChildRun(folder)
    runs.append(live)
    killed.kill()
    time.sleep(0.5)
    assert killed.emulator_alive()  # SIGKILL: the run could not stop it
    assert len(list(folder.glob("*.pids"))) == 2

    journal, stopped = process_groups.begin_run(folder)  # the next run starts
    try:
        assert stopped >= 1
        assert _gone(killed.emulator_pid, killed.emulator_started)
        assert live.emulator_alive()  # a run still going on keeps its emulator
        assert live.process.poll() is None
        left = sorted(folder.glob("*.pids"))
        assert journal.path in left and len(left) == 2  # the killed run's journal is gone
        assert json.loads(journal.path.read_text())["pid"] == os.getpid()
    finally:
        process_groups.end(journal)
    assert not journal.path.exists()


@pytest.mark.emulator
def test_the_emulators_carry_the_run_marker(tmp_path: Path, runs: list[ChildRun]) -> None:
    run = ChildRun(tmp_path / "runs")
    runs.append(run)
    (journal_path,) = (tmp_path / "runs").glob("*.pids")
    journal = json.loads(journal_path.read_text())
    assert journal["groups"] == [run.emulator_pid]
    environ = Path(f"/proc/{run.emulator_pid}/environ").read_bytes().split(b"\0")
    assert f"{process_groups.RUN_VARIABLE}={journal['run']}".encode() in environ


def test_a_listed_pid_that_is_not_the_process_started_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    stranger = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True
    )
    try:
        started = process_groups.start_time(stranger.pid)
        dead_owner = subprocess.Popen([sys.executable, "-c", "pass"])
        dead_owner.wait(timeout=30)
        (folder / "run-dead.pids").write_text(
            json.dumps(
                {
                    "run": "someone-else",
                    "pid": dead_owner.pid,
                    "started": 1,
                    "groups": [stranger.pid, os.getpgrp()],
                    # the pid was reused: the listed leader started at another time
                    "leaders_started": {str(stranger.pid): started + 1},
                }
            )
        )
        assert process_groups.clean_up_runs(folder) == 0
        assert stranger.poll() is None
        assert not (folder / "run-dead.pids").exists()
    finally:
        stranger.send_signal(signal.SIGKILL)
        stranger.wait()

"""`inboxflow dev` leaves nothing behind: SIGTERM and SIGHUP stop every child as Ctrl-C
does, and so does SIGINT when a shell's background job started `dev` with it ignored, the next start stops what a SIGKILLed run left, and every log lives under the
home (the process tree is read from /proc)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from inboxflow.dev import emulators
from tests.e2e.test_cli import CLI, run_cli

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

PROC = Path("/proc")


def _stat(pid: int) -> list[str]:
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def descendants(root: int) -> dict[int, int]:
    """Every live process under ``root``: pid -> start time (tells a reused pid apart)."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else []
        if fields:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: dict[int, int] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        fields = _stat(pid)
        if fields and fields[0] != "Z":
            found[pid] = int(fields[19])
        todo.extend(children.get(pid, []))
    return found


def survivors(snapshot: dict[int, int]) -> list[int]:
    return [
        pid
        for pid, started in snapshot.items()
        if (fields := _stat(pid)) and fields[0] != "Z" and int(fields[19]) == started
    ]


def kill_leftovers(snapshot: dict[int, int]) -> None:
    for pid in survivors(snapshot):  # only what this test started
        os.kill(pid, signal.SIGKILL)


def ignore_sigint() -> None:
    """What a shell's background job (``cmd &``, ``nohup``) does to what it starts."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start_dev(
    home: Path, cwd: Path, sigint_ignored: bool = False
) -> tuple[subprocess.Popen[str], dict[int, int]]:
    """``inboxflow dev --home HOME`` once it is up (``dev.json`` written), and its process tree;
    ``sigint_ignored``: started as a background job is, with SIGINT ignored."""
    missing = {
        n: r for n, r in emulators.available().items() if r is not True and n != emulators.TASKS
    }
    if missing or not PROC.is_dir():
        pytest.skip(f"emulators not installed or no /proc: {missing}")
    with (cwd / "dev.log").open("w") as log:
        dev = subprocess.Popen(
            [*CLI, "dev", "--home", str(home), "--exit-after", "300"],
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "COLUMNS": "250"},
            preexec_fn=ignore_sigint if sigint_ignored else None,
        )
    deadline = time.monotonic() + 180
    while not (home / "dev.json").exists() and time.monotonic() < deadline:
        if dev.poll() is not None:
            break
        time.sleep(0.5)
    assert (home / "dev.json").exists(), (cwd / "dev.log").read_text()
    return dev, descendants(dev.pid)


@pytest.mark.parametrize(
    ("signum", "sigint_ignored"),
    [(signal.SIGTERM, False), (signal.SIGHUP, False), (signal.SIGINT, True)],
    ids=["SIGTERM", "SIGHUP", "SIGINT-started-in-the-background"],
)
def test_a_signal_stops_every_process_dev_started_and_the_logs_live_under_its_home(
    tmp_path: Path, signum: int, sigint_ignored: bool
) -> None:
    home = tmp_path / "cloud"
    dev, tree = start_dev(home, tmp_path, sigint_ignored)
    try:
        # 2 emulator JVMs (+ their scripts), Cloud Tasks, the Gmail double, 9 function servers
        assert len(tree) >= 13, tree
        logs = {os.readlink(f"/proc/{pid}/fd/1") for pid in tree}
        assert all(Path(p).parent == home / "logs" for p in logs), logs
        # --exit-after: were it not refused, it would stop by itself (and stop what it started)
        second = run_cli("dev", "--home", str(home), "--exit-after", "1", cwd=tmp_path, timeout=150)
        assert second.returncode == 2 and "is still running on" in second.stdout, second.stdout
        assert set(survivors(tree)) == set(tree)  # the running cloud was left alone
        dev.send_signal(signum)
        assert dev.wait(timeout=90) == 0
        left = survivors(tree)
        assert left == [], [(p, (PROC / str(p) / "cmdline").read_bytes()[:120]) for p in left]
        assert not (home / "dev.json").exists() and not (home / "dev.pids").exists()
    finally:
        if dev.poll() is None:
            dev.kill()
        kill_leftovers(tree)


def test_the_next_start_stops_what_a_killed_run_left(tmp_path: Path) -> None:
    home = tmp_path / "cloud"
    dev, tree = start_dev(home, tmp_path)
    try:
        dev.kill()
        dev.wait(timeout=30)
        time.sleep(1)
        assert len(survivors(tree)) >= 13  # SIGKILL: no chance to stop them
        # The next start cleans up first, even when it cannot start itself.
        env = {"INBOXFLOW_GCLOUD_SDK": str(tmp_path / "no-sdk"), "PATH": "/usr/bin:/bin"}
        restart = run_cli("dev", "--home", str(home), cwd=tmp_path, env=env, timeout=90)
        assert restart.returncode == 2, restart.stdout + restart.stderr
        assert "left by a killed `inboxflow dev`" in restart.stdout, restart.stdout
        left = survivors(tree)
        assert left == [], restart.stdout
        assert not (home / "dev.pids").exists()
    finally:
        kill_leftovers(tree)


def test_a_process_on_the_same_home_is_never_killed_unless_it_carries_the_runs_marker(
    tmp_path: Path,
) -> None:
    """A journal naming a live group that is not ours (a reused pid) is left alone."""
    home = tmp_path / "cloud"
    home.mkdir()
    stranger = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        (home / "dev.pids").write_text(
            f'{{"run": "abc", "pid": 1, "started": -1, "groups": [{stranger.pid}]}}'
        )
        env = {"INBOXFLOW_GCLOUD_SDK": str(tmp_path / "no-sdk"), "PATH": "/usr/bin:/bin"}
        restart = run_cli("dev", "--home", str(home), cwd=tmp_path, env=env)
        assert restart.returncode == 2, restart.stdout + restart.stderr
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


def test_without_a_log_dir_emulator_logs_go_with_the_process_that_started_them(
    tmp_path: Path,
) -> None:
    if emulators.available()[emulators.TASKS] is not True:
        pytest.skip("the Cloud Tasks emulator is not installed")
    script = (
        "from inboxflow.dev import emulators\n"
        "e = emulators.start_tasks()\n"
        "print(e.log_path, flush=True)\n"
        "e.stop()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    log_path = Path(result.stdout.strip())
    assert log_path.parent.parent == Path(tempfile.gettempdir())  # a folder of its own
    assert not log_path.parent.exists()  # removed with the process
    kept = emulators.start_tasks(log_dir=tmp_path / "logs")
    try:
        assert kept.log_path.parent == tmp_path / "logs"
    finally:
        kept.stop()
    assert kept.log_path.exists()

"""The process groups of the emulated cloud, and what a killed run left behind.

Every emulator, function server and the Gmail double runs in a process group
of its own (``start_new_session``). ``inboxflow dev`` stops them all when it
exits; a run killed with SIGKILL cannot, so it keeps a journal under its home
(``dev.pids``): its run id, every group it started and when each group's leader
started. Each child also inherits ``INBOXFLOW_DEV_RUN=<run id>`` in its
environment. The next ``dev`` on that home stops a listed group only when its
leader is the very process that was started (same start time) or one of its
processes still carries the marker, so a reused process id is never killed.
(The marker alone is not enough: gunicorn rewrites its process title with
``setproctitle`` when that is installed, which clobbers ``/proc/PID/environ``.)

Test runs journal the same way, one journal per run in a folder they share
(``runs_dir()``, per user): ``begin_run`` first stops what runs that were
killed left there, and leaves alone the journals of runs still alive (several
engineers run tests at once) and every ``inboxflow dev`` (whose journal is
under its home).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

RUN_VARIABLE = "INBOXFLOW_DEV_RUN"
JOURNAL = "dev.pids"
PROC = Path("/proc")


class AlreadyRunning(RuntimeError):
    """Another ``inboxflow dev`` still runs on this home."""


def _stat(pid: int) -> list[str]:
    """Fields of ``/proc/PID/stat`` after the command name (state first), or [] when gone."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def running(pid: int) -> bool:
    """True if a process ``pid`` exists (any user's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_time(pid: int) -> int:
    """When ``pid`` started (clock ticks since boot; 0 when unknown): tells a reused pid apart."""
    fields = _stat(pid)
    return int(fields[19]) if len(fields) > 19 else 0


def _carries(pid: int, marker: bytes) -> bool:
    try:
        return marker in (PROC / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:
        return False


def members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (read from ``/proc``)."""
    found = []
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else []
        if fields and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _exists(pgid: int) -> bool:
    if PROC.is_dir():
        return bool(members(pgid))
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def ctrl_c_stops() -> None:
    """Let SIGINT (Ctrl-C) raise ``KeyboardInterrupt`` in this process even when it was
    started with SIGINT ignored: a background job of a non-interactive shell (``cmd &``,
    ``nohup``, many CI runners) passes SIGINT ignored to every program it starts, and Python
    then keeps it ignored, so a server the user started would not stop on Ctrl-C or on the
    SIGINT a supervisor sends."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def stop_groups(pgids: list[int], grace_s: float = 10.0) -> None:
    """SIGTERM every group at once, then SIGKILL the ones still there after ``grace_s``."""
    pgids = [pgid for pgid in pgids if _exists(pgid)]  # not one already stopped
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    remaining = list(pgids)
    while remaining and time.monotonic() < deadline:
        remaining = [g for g in remaining if _exists(g)]
        if remaining:
            time.sleep(0.1)
    for pgid in remaining:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


@dataclass
class Journal:
    """The process groups one ``inboxflow dev`` run started, kept in ``home/dev.pids``.

    Attributes:
        path: the journal file.
        run_id: the marker value its children carry in ``INBOXFLOW_DEV_RUN``.
        groups: process group ids started so far.
    """

    path: Path
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    groups: list[int] = field(default_factory=list)
    leaders_started: dict[str, int] = field(default_factory=dict)

    def add(self, process: subprocess.Popen[bytes]) -> None:
        """Record a child started with ``start_new_session`` (its pid is its group id)."""
        self.groups.append(process.pid)
        self.leaders_started[str(process.pid)] = start_time(process.pid)
        self._write()

    def _write(self) -> None:
        pid = os.getpid()
        body = {
            "run": self.run_id,
            "pid": pid,
            "started": start_time(pid),
            "groups": self.groups,
            "leaders_started": self.leaders_started,
        }
        partial = self.path.with_suffix(".tmp")
        partial.write_text(json.dumps(body))
        partial.replace(self.path)

    def close(self) -> None:
        """Forget the journal (every group was stopped)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


_journal: Journal | None = None


def record(process: subprocess.Popen[bytes]) -> None:
    """Journal a child process group, when a dev run keeps a journal."""
    if _journal is not None:
        _journal.add(process)


def child_environ() -> dict[str, str] | None:
    """The environment of a child to journal: this one plus the run's marker (None: no journal).

    Passed to ``Popen`` explicitly, so the marker is there even where the
    caller's environment was changed since the run began (a test's own).
    """
    if _journal is None:
        return None
    return {**os.environ, RUN_VARIABLE: _journal.run_id}


def runs_dir() -> Path:
    """The folder where test runs keep their journals (this user's, under the temp folder)."""
    return Path(tempfile.gettempdir()) / f"inboxflow-runs-{os.getuid()}"


def begin_run(folder: Path) -> tuple[Journal, int]:
    """Journal this run's process groups in ``folder``; first stop what killed runs left there.

    Returns:
        The journal and the number of leftover processes stopped.
    """
    global _journal
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    stopped = clean_up_runs(folder)
    journal = Journal(folder / f"run-{os.getpid()}-{uuid.uuid4().hex[:8]}.pids")
    journal._write()
    _journal = journal
    return journal, stopped


def clean_up_runs(folder: Path) -> int:
    """Stop what the runs journaled in ``folder`` left, for each run that is no longer alive.

    A journal whose run still lives is left as it is, and so is everything it lists.

    Returns:
        How many processes were stopped.
    """
    count = 0
    for path in sorted(folder.glob("*.pids")):
        with contextlib.suppress(AlreadyRunning):
            count += _stop_leftovers(path)
    return count


def begin(home: Path) -> tuple[Journal, int]:
    """Stop what a killed run on ``home`` left, then start journaling this run.

    Sets ``INBOXFLOW_DEV_RUN`` in this process's environment so that every
    child inherits it.

    Returns:
        The journal and the number of leftover processes stopped.

    Raises:
        AlreadyRunning: the run that wrote the journal is still alive.
    """
    global _journal
    home.mkdir(parents=True, exist_ok=True)
    stopped = clean_up(home)
    journal = Journal(home / JOURNAL)
    journal._write()
    os.environ[RUN_VARIABLE] = journal.run_id
    _journal = journal
    return journal, stopped


def end(journal: Journal) -> None:
    """Stop journaling (call once every group of the run is stopped)."""
    global _journal
    journal.close()
    if _journal is journal:
        _journal = None


def clean_up(home: Path) -> int:
    """Stop the groups a killed run on ``home`` left that still carry its marker.

    Returns:
        How many processes were stopped.

    Raises:
        AlreadyRunning: the journal's own ``dev`` process is still alive.
    """
    return _stop_leftovers(home / JOURNAL)


def _stop_leftovers(path: Path) -> int:
    """``clean_up`` of the journal at ``path`` (then removed); AlreadyRunning if its run lives."""
    try:
        previous = json.loads(path.read_text())
    except FileNotFoundError:
        return 0
    except ValueError:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return 0
    marker = f"{RUN_VARIABLE}={previous.get('run', '')}".encode()
    owner = int(previous.get("pid") or 0)
    started = start_time(owner) if owner and owner != os.getpid() else 0
    if started and started == previous.get("started"):
        raise AlreadyRunning(f"inboxflow dev (pid {owner}) is still running on {path.parent}")
    leaders = previous.get("leaders_started") or {}
    ours = []
    count = 0
    for pgid in previous.get("groups", []):
        if int(pgid) in (os.getpid(), os.getpgrp()):
            continue
        group = members(int(pgid))
        leader_started = int(leaders.get(str(pgid)) or 0)
        same_leader = leader_started > 0 and start_time(int(pgid)) == leader_started
        if same_leader or any(_carries(pid, marker) for pid in group):
            ours.append(int(pgid))
            count += len(group)
    stop_groups(ours)
    with contextlib.suppress(FileNotFoundError):  # another run cleaned it up meanwhile
        path.unlink()
    return count

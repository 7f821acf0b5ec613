"""``inboxflow dev`` supervises its processes as Cloud Run would.

Every half second the supervisor looks at each process ``dev`` started: the
emulators, every function server (the node functions, ``ingest``,
``approve``) and the Gmail double. A function server that died is started
again on its port (what was left of its process group is killed first), then
warmed; an emulator that died is started again on its port and set up again
(the Firestore emulator: the workspace seed and the watched mailbox; Pub/Sub:
the topics and push subscriptions; Cloud Tasks: the queue), and what its
memory held, now lost, is said plainly. A process stopped by a signal
(``SIGSTOP``) is shown ``frozen`` and left alone. Each event is printed, and
the state of every process is written to ``home/dev.processes.json`` for
``inboxflow dev status``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inboxflow.dev import process_groups
from inboxflow.repeating import Repeating

if TYPE_CHECKING:
    from inboxflow.dev.devcloud import DevCloud
    from inboxflow.dev.emulators import Emulator

PROCESSES_FILE = "dev.processes.json"

UP, RESTARTING, DOWN, FROZEN = "up", "restarting", "down", "frozen"

LOST = {
    "firestore": (
        "its data was in memory: every trace, approval, claim and mailbox cursor is gone "
        "(the workspace seed and the watched mailbox were set up again). Mail and traces in "
        "flight are lost: send them again (`inboxflow send`), or restart `inboxflow dev` for "
        "a clean slate."
    ),
    "pubsub": (
        "its topics, subscriptions and undelivered messages were in memory: the topics and "
        "push subscriptions were created again, but steps in flight are lost: `inboxflow "
        "traces --dev --status running` lists the traces they leave behind."
    ),
    "tasks": (
        "its queued tasks were in memory: approval reminders and deadlines scheduled so far "
        "are lost (the queue was created again)."
    ),
}
"""What an emulator's restart loses, said to the user."""


@dataclass
class ProcessState:
    """One supervised process, as ``inboxflow dev status`` shows it."""

    name: str
    kind: str
    pid: int
    port: int
    state: str = UP
    restarts: int = 0
    note: str = ""


def frozen(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is stopped by a signal (``SIGSTOP``: state ``T``).

    An emulator's JVM is a child of its launch script: the group is what freezes.
    """
    for pid in process_groups.members(pgid) or [pgid]:
        fields = process_groups._stat(pid)
        if fields and fields[0] in ("T", "t"):
            return True
    return False


class Supervisor:
    """Restarts what dies among ``emulators`` and the servers of ``cloud``.

    Args:
        cloud: the function servers and the Gmail double.
        emulators: the running emulators (replaced in place when restarted).
        home: where ``dev.processes.json`` is written.
        say: prints one event line.
        reprovision: sets an emulator up again after its restart (by name).
        log_dir: the emulators' log folder.
    """

    def __init__(
        self,
        cloud: DevCloud,
        emulators: list[Emulator],
        home: Path,
        say: Callable[[str], None],
        reprovision: Callable[[str], None],
        log_dir: Path | None = None,
    ) -> None:
        self.cloud = cloud
        self.emulators = emulators
        self.path = home / PROCESSES_FILE
        self.say = say
        self.reprovision = reprovision
        self.log_dir = log_dir
        self.states: dict[str, ProcessState] = {}
        self._lock = threading.Lock()
        self._checking: Repeating | None = None
        for emulator in emulators:
            self._track(
                f"{emulator.name} emulator", "emulator", emulator.process.pid, emulator.port
            )
        self._track_servers()

    def _track(self, name: str, kind: str, pid: int, port: int) -> None:
        state = self.states.get(name)
        if state is None:
            self.states[name] = ProcessState(name, kind, pid, port)
        else:
            state.pid, state.port = pid, port

    def _track_servers(self) -> None:
        for name, server in self.cloud.servers.items():
            self._track(f"function {name}", "function", server.process.pid, server.port)
        double = self.cloud.gmail_double
        if double is not None:
            self._track("Gmail double", "gmail", double.process.pid, double.port)

    # --- one pass ---------------------------------------------------------------------

    def check(self) -> None:
        """Look at every process once; restart those that died (blocking while they start)."""
        for index, emulator in enumerate(list(self.emulators)):
            state = self.states[f"{emulator.name} emulator"]
            if emulator.running():
                self._set(state, FROZEN if frozen(emulator.process.pid) else UP)
                continue
            self.emulators[index] = self._restart_emulator(emulator, state)
        for name in list(self.cloud.servers):
            server = self.cloud.servers[name]
            state = self.states[f"function {name}"]
            if server.process.poll() is None:
                self._set(state, FROZEN if frozen(server.process.pid) else UP)
                continue
            self._restart(
                state,
                f"function {name} (pid {server.process.pid}, port {server.port}) exited "
                f"with code {server.process.returncode}",
                lambda name=name: self.cloud.restart_server(name).process.pid,  # type: ignore[misc]
            )
        double = self.cloud.gmail_double
        if double is not None:
            state = self.states["Gmail double"]
            if double.process.poll() is None:
                self._set(state, FROZEN if frozen(double.process.pid) else UP)
            else:
                self._restart(
                    state,
                    f"the Gmail double (port {double.port}) exited with code "
                    f"{double.process.returncode}; its mailboxes were in memory and are empty now",
                    lambda: self.cloud.restart_gmail_double().process.pid,
                )

    def _restart(self, state: ProcessState, event: str, start: Callable[[], int]) -> None:
        self._set(state, RESTARTING, write=True)
        began = time.monotonic()
        try:
            pid = start()
        except Exception as exc:
            self._set(state, DOWN, note=f"could not restart: {exc}".splitlines()[0], write=True)
            self.say(f"[red]{event}; it could not be restarted: {exc}[/red]")
            return
        state.pid, state.restarts = pid, state.restarts + 1
        self._set(state, UP, note=f"restarted {time.strftime('%H:%M:%S')}", write=True)
        self.say(
            f"[yellow]{event}: restarted on the same port in "
            f"{time.monotonic() - began:.1f}s (pid {pid})[/yellow]"
        )

    def _restart_emulator(self, emulator: Emulator, state: ProcessState) -> Emulator:
        from inboxflow.dev import emulators as emulator_module

        event = (
            f"the {emulator.name} emulator (pid {emulator.process.pid}, port {emulator.port}) "
            f"exited with code {emulator.process.returncode}"
        )
        emulator.stop()  # what is left of its group (a JVM under a shell script)
        self._set(state, RESTARTING, write=True)
        try:
            start = emulator_module.START[emulator.name]
            fresh = start(port=emulator.port, log_dir=self.log_dir or emulator.log_path.parent)
            self.reprovision(emulator.name)
        except Exception as exc:
            self._set(state, DOWN, note=f"could not restart: {exc}".splitlines()[0], write=True)
            self.say(
                f"[red]{event}, and could not be restarted: {exc}\n"
                "Stop `inboxflow dev` (Ctrl-C) and start it again.[/red]"
            )
            return emulator
        state.pid, state.restarts = fresh.process.pid, state.restarts + 1
        self._set(state, UP, note=f"restarted {time.strftime('%H:%M:%S')}", write=True)
        self.say(f"[yellow]{event}; restarted on the same port: {LOST[emulator.name]}[/yellow]")
        return fresh

    def _set(
        self, state: ProcessState, value: str, note: str | None = None, write: bool = False
    ) -> None:
        changed = state.state != value or (note is not None and note != state.note)
        state.state = value
        if note is not None:
            state.note = note
        if changed or write:
            self.write()

    # --- the status file ----------------------------------------------------------------

    def snapshot(self) -> list[dict[str, Any]]:
        """Every process's state, emulators first."""
        return [asdict(state) for state in self.states.values()]

    def write(self) -> None:
        """Write ``dev.processes.json`` (atomically: ``status`` may read it at any time)."""
        with self._lock:
            partial = self.path.with_suffix(".tmp")
            partial.write_text(
                json.dumps({"updated_at": time.time(), "processes": self.snapshot()})
            )
            partial.replace(self.path)

    # --- in the background ----------------------------------------------------------------

    def start(self, interval_s: float = 0.5) -> None:
        """Supervise in a daemon thread until ``stop``."""
        self.write()
        self._checking = Repeating(self._check_or_say, interval_s, "dev-supervisor")
        self._checking.start()

    def _check_or_say(self) -> None:
        try:
            self.check()
        except Exception as exc:  # never let one bad pass end supervision
            self.say(f"[red]supervisor: {type(exc).__name__}: {exc}[/red]")

    def stop(self) -> None:
        """Stop supervising (before the processes are stopped) and remove the status file."""
        if self._checking is not None:
            self._checking.stop(timeout_s=120)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def read_processes(home: Path) -> list[dict[str, Any]]:
    """What the supervisor of the ``dev`` on ``home`` last wrote (empty when nothing)."""
    try:
        return list(json.loads((home / PROCESSES_FILE).read_text())["processes"])
    except (FileNotFoundError, ValueError, KeyError):
        return []

"""Start and stop the Google Cloud emulators as local subprocesses.

Used by the pytest fixtures (``tests/conftest.py``) and by ``inboxflow dev``.
Each emulator is started directly (never through ``gcloud``) on a free port,
in its own process group (journaled when the run keeps a journal:
``process_groups``, so that a later run stops what a killed one left), with its output in a log file under ``log_dir``
(``inboxflow dev``: its home; by default a folder of this process that is
removed when it exits); ``start_*`` returns once the emulator answers, or
raises ``EmulatorError`` with the log's tail.

- Firestore: ``cloud_firestore_emulator`` from the Cloud SDK (needs Java).
- Pub/Sub: ``cloud-pubsub-emulator`` from the Cloud SDK (needs Java).
- Cloud Tasks: the ``gcloud-tasks-emulator`` Python package (needs pyyaml).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inboxflow.dev import process_groups

FIRESTORE = "firestore"
PUBSUB = "pubsub"
TASKS = "tasks"

DEFAULT_PROJECT = "inboxflow-local"
_SDK_CANDIDATES = (
    "/usr/lib/google-cloud-sdk",
    "/usr/share/google-cloud-sdk",
    "/opt/google-cloud-sdk",
    "~/google-cloud-sdk",
)
_FIRESTORE_BIN = "platform/cloud-firestore-emulator/cloud_firestore_emulator"
_PUBSUB_BIN = "platform/pubsub-emulator/bin/cloud-pubsub-emulator"


_running: list[Emulator] = []
"""Emulators this process started and has not stopped (stopped at interpreter exit)."""

_default_log_dir: Path | None = None


def default_log_dir() -> Path:
    """The folder of this process's logs when no other is given (removed at interpreter exit)."""
    global _default_log_dir
    if _default_log_dir is None:
        _default_log_dir = Path(tempfile.mkdtemp(prefix="inboxflow-logs-"))
    return _default_log_dir


@atexit.register
def _remove_default_log_dir() -> None:
    # Registered before ``stop_all``: atexit runs it after the emulators stopped.
    if _default_log_dir is not None:
        shutil.rmtree(_default_log_dir, ignore_errors=True)


def log_file(log_dir: Path | None, name: str) -> Path:
    """A new log file ``inboxflow-NAME-N.log`` in ``log_dir`` (default ``default_log_dir()``)."""
    folder = log_dir or default_log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    handle, path = tempfile.mkstemp(prefix=f"inboxflow-{name}-", suffix=".log", dir=folder)
    os.close(handle)
    return Path(path)


class EmulatorError(RuntimeError):
    """An emulator is not installed, did not start, or did not become ready in time."""


@dataclass(eq=False)
class Emulator:
    """A running emulator process.

    Attributes:
        name: ``firestore``, ``pubsub`` or ``tasks``.
        host: address it listens on (always ``127.0.0.1``).
        port: its port.
        process: the subprocess (leader of its own process group).
        log_path: where its stdout and stderr go.
    """

    name: str
    host: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def address(self) -> str:
        """``host:port``, the value of the ``*_EMULATOR_HOST`` variable."""
        return f"{self.host}:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """Environment variables that point client libraries at this emulator."""
        variable = {
            FIRESTORE: "FIRESTORE_EMULATOR_HOST",
            PUBSUB: "PUBSUB_EMULATOR_HOST",
            TASKS: "CLOUD_TASKS_EMULATOR_HOST",
        }[self.name]
        return {variable: self.address}

    def running(self) -> bool:
        """True while the process is alive."""
        return self.process.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the emulator's output (for error messages)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the emulator's whole process group (the JVM is a child of a shell script)."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=timeout_s)
        else:
            # The leader exited; children (a JVM) may still hold the group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self in _running:
            _running.remove(self)

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- discovery ---------------------------------------------------------------------


def sdk_root() -> Path | None:
    """The Cloud SDK install holding the emulators, or None.

    ``INBOXFLOW_GCLOUD_SDK``, when set, is the only place looked at; otherwise the
    usual install locations and the directory of ``gcloud`` on ``PATH`` are tried.
    """
    explicit = os.environ.get("INBOXFLOW_GCLOUD_SDK")
    if explicit:
        root = Path(explicit).expanduser()
        return root if (root / "platform").is_dir() else None
    candidates: list[str] = []
    gcloud = shutil.which("gcloud")
    if gcloud:
        candidates.append(str(Path(gcloud).resolve().parent.parent))
    candidates.extend(_SDK_CANDIDATES)
    for candidate in candidates:
        if not candidate:
            continue
        root = Path(candidate).expanduser()
        if (root / "platform").is_dir():
            return root
    return None


def _java_reason() -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") or (java_home and Path(java_home, "bin", "java").exists()):
        return None
    return "Java is not installed (the gcloud emulators need java 11+ on PATH)"


def _sdk_binary(relative: str, component: str) -> Path | str:
    root = sdk_root()
    if root is None:
        return "the Google Cloud SDK is not installed (set INBOXFLOW_GCLOUD_SDK to its root)"
    binary = root / relative
    if not binary.exists():
        return f"{binary} not found (install the SDK component {component!r})"
    return binary


def available() -> dict[str, bool | str]:
    """Which emulators can be started here.

    Returns:
        ``{name: True}`` for each emulator that can start, or ``{name: reason}``
        with a sentence saying what is missing.
    """
    result: dict[str, bool | str] = {}
    java = _java_reason()
    for name, relative, component in (
        (FIRESTORE, _FIRESTORE_BIN, "cloud-firestore-emulator"),
        (PUBSUB, _PUBSUB_BIN, "pubsub-emulator"),
    ):
        binary = _sdk_binary(relative, component)
        result[name] = binary if isinstance(binary, str) else (java or True)
    missing = [
        package
        for package, module in (
            ("gcloud-tasks-emulator", "gcloud_tasks_emulator"),
            ("pyyaml", "yaml"),
        )
        if importlib.util.find_spec(module) is None
    ]
    result[TASKS] = (
        f"{' and '.join(missing)} not installed in {sys.prefix} "
        "(pip install --no-deps gcloud-tasks-emulator; pip install pyyaml)"
        if missing
        else True
    )
    return result


# --- starting ------------------------------------------------------------------------


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _tcp_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _spawn(
    name: str,
    command: list[str],
    port: int,
    ready: Callable[[], bool],
    timeout_s: float,
    log_dir: Path | None,
) -> Emulator:
    reason = available()[name]
    if reason is not True:
        raise EmulatorError(f"the {name} emulator is not available: {reason}")
    log_path = log_file(log_dir, f"{name}-emulator")
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=process_groups.child_environ(),
        )
    process_groups.record(process)
    emulator = Emulator(name, "127.0.0.1", port, process, log_path)
    _running.append(emulator)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not emulator.running():
            emulator.stop()
            raise EmulatorError(
                f"the {name} emulator exited with code {process.returncode} while starting:\n"
                f"{emulator.log_tail()}"
            )
        if ready():
            return emulator
        time.sleep(0.2)
    emulator.stop()
    raise EmulatorError(
        f"the {name} emulator did not answer on port {port} within {timeout_s:.0f}s:\n"
        f"{emulator.log_tail()}"
    )


def start_firestore(
    port: int | None = None, timeout_s: float = 60.0, log_dir: Path | None = None
) -> Emulator:
    """Start the Firestore emulator (native mode) and wait until it answers."""
    port = port or free_port()
    binary = _sdk_binary(_FIRESTORE_BIN, "cloud-firestore-emulator")
    command = [str(binary), "start", "--host=127.0.0.1", f"--port={port}"]
    ready = lambda: _http_ok(f"http://127.0.0.1:{port}/")  # noqa: E731
    return _spawn(FIRESTORE, command, port, ready, timeout_s, log_dir)


def start_pubsub(
    port: int | None = None, timeout_s: float = 60.0, log_dir: Path | None = None
) -> Emulator:
    """Start the Pub/Sub emulator and wait until it answers."""
    port = port or free_port()
    binary = _sdk_binary(_PUBSUB_BIN, "pubsub-emulator")
    command = [str(binary), "--host=127.0.0.1", f"--port={port}"]
    ready = lambda: _http_ok(f"http://127.0.0.1:{port}/")  # noqa: E731
    return _spawn(PUBSUB, command, port, ready, timeout_s, log_dir)


def start_tasks(
    port: int | None = None,
    default_queues: tuple[str, ...] = (),
    max_retries: int = 10,
    timeout_s: float = 30.0,
    log_dir: Path | None = None,
) -> Emulator:
    """Start ``gcloud-tasks-emulator`` from this interpreter's environment.

    The emulator re-dispatches a failed task every ~0.1 s with no backoff;
    ``max_retries`` bounds that (its own default is forever).

    Args:
        port: gRPC port (a free one if None).
        default_queues: full queue paths to create at start
            (``projects/P/locations/L/queues/Q``).
        max_retries: dispatches of a failing task before it is dropped (-1: forever).
        timeout_s: how long to wait for the gRPC port.
        log_dir: folder of its log (default ``default_log_dir()``).
    """
    port = port or free_port()
    command = [sys.executable, "-m", "gcloud_tasks_emulator", "start", "-p", str(port), "-q"]
    command += ["-r", str(max_retries)]
    for queue in default_queues:
        command += ["-d", queue]
    return _spawn(TASKS, command, port, lambda: _tcp_open("127.0.0.1", port), timeout_s, log_dir)


@atexit.register
def stop_all() -> None:
    """Stop every emulator this process started (also run at interpreter exit)."""
    for emulator in list(_running):
        emulator.stop()


START: dict[str, Callable[..., Emulator]] = {
    FIRESTORE: start_firestore,
    PUBSUB: start_pubsub,
    TASKS: start_tasks,
}
"""Starter of each emulator by name."""


# --- between tests -------------------------------------------------------------------


def reset_firestore(emulator: Emulator, project: str = DEFAULT_PROJECT) -> None:
    """Delete every document of ``project``'s default database in the Firestore emulator."""
    url = f"http://{emulator.address}/emulator/v1/projects/{project}/databases/(default)/documents"
    request = urllib.request.Request(url, method="DELETE")
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()

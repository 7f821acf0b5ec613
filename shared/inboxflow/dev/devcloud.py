"""The emulated cloud on one machine: the production topology, locally.

One functions-framework server per graph node (each with its own
``INBOXFLOW_NODE``), Pub/Sub emulator topics with push subscriptions to those
servers, state in the Firestore emulator. With Gmail on: the Gmail double
(``dev.gmail``) relaying watch notifications to the ``inboxflow-gmail``
topic, whose push subscription feeds the ``ingest`` function; the ``approve``
function. Every process runs in its own process group (journaled by
``process_groups`` during ``inboxflow dev``) and logs to a file under
``log_dir``. Used by ``inboxflow dev`` and by the integration tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from inboxflow.dev import process_groups
from inboxflow.dev.emulators import free_port, log_file
from inboxflow.engine.graph import Graph
from inboxflow.naming import node_id

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[3]
FUNCTIONS_SOURCE = REPO_ROOT / "functions" / "main.py"
GMAIL_TOPIC = "inboxflow-gmail"
INGEST = "ingest"
APPROVE = "approve"

EMULATED_REDELIVERY = {
    "INBOXFLOW_DEAD_LETTERING": "function",
    "INBOXFLOW_MAX_DELIVERY_ATTEMPTS": "10",
    "INBOXFLOW_RETRY_MINIMUM_BACKOFF_S": "1",
    "INBOXFLOW_RETRY_MAXIMUM_BACKOFF_S": "60",
}
"""How the functions dead-letter on the emulator, which cannot (``inboxflow.delivery_attempts``):
10 failed deliveries over at least 243 s (1 s doubling to 60 s), longer than the lease of
a killed worker (the longest node timeout, 120 s, + 30 s), so a kill never dead-letters.
Each may be overridden in the environment."""


def emulated_redelivery(environ: dict[str, str]) -> dict[str, str]:
    """``EMULATED_REDELIVERY``, each value taken from ``environ`` when set there."""
    return {name: environ.get(name) or value for name, value in EMULATED_REDELIVERY.items()}


def functions_source() -> Path:
    """The entry-point file: ``INBOXFLOW_FUNCTIONS_SOURCE`` or ``functions/main.py``."""
    override = os.environ.get("INBOXFLOW_FUNCTIONS_SOURCE")
    return Path(override) if override else FUNCTIONS_SOURCE


@dataclass
class ServerProcess:
    """A local server process: leader of its own process group, its output in a file."""

    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's output."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server's process group."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)


@dataclass
class FunctionServer(ServerProcess):
    """A functions-framework process serving one node."""

    node_id: str
    target: str = "run_node"
    signature: str = "cloudevent"

    @property
    def url(self) -> str:
        """Where Pub/Sub pushes."""
        return f"http://127.0.0.1:{self.port}/"


def _ready(port: int, method: str = "POST", path: str = "/") -> bool:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=b"{}" if method == "POST" else None,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        urllib.request.urlopen(request, timeout=1).close()
    except urllib.error.HTTPError:
        return True  # it answered (400: not a CloudEvent) - it is up
    except (urllib.error.URLError, OSError):
        return False
    return True


def start_function(
    node: str,
    env: dict[str, str],
    target: str = "run_node",
    signature: str = "cloudevent",
    timeout_s: float = 60,
    port: int | None = None,
    log_dir: Path | None = None,
) -> FunctionServer:
    """Start ``functions-framework`` for ``target`` serving ``node`` (``graph.node``) and wait until it answers.

    HTTP functions are probed with a GET (which never changes state); CloudEvent
    functions with an empty POST (refused as not a CloudEvent). A target the
    entry-point file does not define makes functions-framework exit: a
    ``RuntimeError`` with its log's tail. The log goes to ``log_dir`` (default
    ``emulators.default_log_dir()``).
    """
    source = functions_source()
    if not source.exists():
        raise FileNotFoundError(f"{source} not found: run from a checkout of inboxflow")
    port = port or free_port()
    log_path = log_file(log_dir, node)
    command = [
        sys.executable,
        "-m",
        "functions_framework",
        "--target",
        target,
        "--source",
        str(source),
        "--signature-type",
        signature,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            env={**os.environ, **env, "INBOXFLOW_NODE": node},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    process_groups.record(process)
    server = FunctionServer(port, process, log_path, node, target, signature)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"functions-framework for {node} exited:\n{server.log_tail()}")
        if _ready(port, "GET" if signature == "http" else "POST"):
            return server
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(
        f"functions-framework for {node} did not answer within {timeout_s:.0f}s:\n{server.log_tail()}"
    )


def _start_on_port(start: Callable[[], T], attempts: int = 10) -> T:
    """``start()``, tried again while the port is still held by the process that died."""
    for attempt in range(attempts):
        try:
            return start()
        except RuntimeError as exc:
            if attempt == attempts - 1 or "Address already in use" not in str(exc):
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


@dataclass
class GmailDouble(ServerProcess):
    """The Gmail double process (``dev.gmail``)."""

    @property
    def url(self) -> str:
        """Base URL (``INBOXFLOW_GOOGLE_API_URL``)."""
        return f"http://127.0.0.1:{self.port}"


def start_gmail_double(
    env: dict[str, str],
    topic: str,
    timeout_s: float = 60,
    log_dir: Path | None = None,
    port: int | None = None,
) -> GmailDouble:
    """Start the Gmail double relaying notifications of watched mailboxes to ``topic``."""
    port = port or free_port()
    log_path = log_file(log_dir, "gmail")
    command = [sys.executable, "-m", "inboxflow.dev.gmail", "--port", str(port)]
    if env.get("INBOXFLOW_OAUTH_CLIENT"):  # Google's OAuth endpoints too (`mailbox connect`)
        command += ["--oauth-client", env["INBOXFLOW_OAUTH_CLIENT"]]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command, "--topic", topic, "--seed"],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    process_groups.record(process)
    double = GmailDouble(port, process, log_path)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Gmail double exited:\n{double.log_tail()}")
        if _ready(port, "GET", "/gmail/v1/users/probe@localhost/profile"):
            return double
        time.sleep(0.2)
    double.stop()
    raise RuntimeError(f"the Gmail double did not answer within {timeout_s:.0f}s")


def warm_up(server: FunctionServer, timeout_s: float = 60) -> bool:
    """Send a CloudEvent function one warm-up push (``entry.warmup``): its runtime is built.

    Returns:
        True when it answered 200 (HTTP functions are not warmed: False).
    """
    from inboxflow.entry.warmup import warmup_message

    if server.signature != "cloudevent":
        return False
    body = {"message": warmup_message(), "subscription": "projects/local/subscriptions/warmup"}
    request = urllib.request.Request(
        server.url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def dev_mailbox() -> str:
    """The mailbox ``inboxflow dev`` watches: the owner in the bundled workspace seed."""
    from inboxflow.workspace import load_seed

    return str(load_seed()["contacts"][0]["email"]).lower()


@dataclass
class DevCloud:
    """Function servers for every node of some graphs, wired to Pub/Sub push subscriptions.

    Args:
        project: the emulators' project.
        env: environment of every function process (emulator hosts, store and bus).
        gmail: also run the Gmail double and the ``ingest`` function, and watch
            ``dev_mailbox()``.
        approve: also run the ``approve`` function.
        log_dir: folder of every process's log (default ``emulators.default_log_dir()``).
    """

    project: str
    env: dict[str, str]
    servers: dict[str, FunctionServer] = field(default_factory=dict)
    gmail: bool = False
    approve: bool = False
    gmail_double: GmailDouble | None = None
    mailbox: str | None = None
    log_dir: Path | None = None
    pairs: list[tuple[str, str]] = field(default_factory=list)

    @property
    def gmail_topic(self) -> str:
        """Full name of the topic Gmail notifications go to."""
        return f"projects/{self.project}/topics/{GMAIL_TOPIC}"

    def start(self, graphs: list[Graph]) -> None:
        """Start one server per node and push subscriptions from each node's topic to it.

        With ``gmail``: the Gmail double first (every function gets its URL),
        then ``ingest`` behind a push subscription on ``inboxflow-gmail``, and
        the watch of ``dev_mailbox()``. With ``approve``: the approval function.
        """

        with_gmail = self.gmail
        logs = self.log_dir
        self.env.update(emulated_redelivery({**os.environ, **self.env}))
        if with_gmail:
            self.gmail_double = start_gmail_double(self.env, self.gmail_topic, log_dir=logs)
            self.env.update(
                INBOXFLOW_GOOGLE_API_URL=self.gmail_double.url,
                INBOXFLOW_GMAIL_TOPIC=self.gmail_topic,
            )
        approve_port = free_port() if self.approve else None
        if approve_port:
            # Review links and deadline tasks (made by the pausing node) point at it.
            self.env["INBOXFLOW_APPROVAL_URL"] = f"http://127.0.0.1:{approve_port}"
        pairs = [(graph.name, node) for graph in graphs for node in graph.nodes]
        for graph_name, node in pairs:
            nid = node_id(graph_name, node)
            self.servers[nid] = start_function(nid, self.env, log_dir=logs)
        if approve_port:
            self.servers[APPROVE] = start_function(
                APPROVE, self.env, APPROVE, "http", port=approve_port, log_dir=logs
            )
        if with_gmail:
            self.servers[INGEST] = start_function(
                INGEST, self.env, INGEST, "cloudevent", log_dir=logs
            )
        self.pairs = pairs
        self.ensure_subscriptions()
        if with_gmail:
            self.mailbox = self.watch_dev_mailbox()

    def warm(self) -> dict[str, bool]:
        """Warm every CloudEvent function at once (``warm_up``); which answered."""
        from concurrent.futures import ThreadPoolExecutor

        servers = list(self.servers.values())
        with ThreadPoolExecutor(max_workers=max(1, len(servers))) as pool:
            answered = list(pool.map(warm_up, servers))
        return {server.node_id: ok for server, ok in zip(servers, answered, strict=True)}

    def restart_server(self, name: str) -> FunctionServer:
        """Start the function ``name`` again on its port (what is left of its group is killed)."""
        old = self.servers[name]
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(old.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            old.process.wait(timeout=5)
        server = _start_on_port(
            lambda: start_function(
                name, self.env, old.target, old.signature, port=old.port, log_dir=self.log_dir
            )
        )
        self.servers[name] = server
        warm_up(server)
        return server

    def restart_gmail_double(self) -> GmailDouble:
        """Start the Gmail double again on its port (its mailboxes were in memory: empty now)."""
        assert self.gmail_double is not None
        old = self.gmail_double
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(old.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            old.process.wait(timeout=5)
        self.gmail_double = _start_on_port(
            lambda: start_gmail_double(
                self.env, self.gmail_topic, log_dir=self.log_dir, port=old.port
            )
        )
        if self.mailbox is not None:
            self.mailbox = self.watch_dev_mailbox()
        return self.gmail_double

    def ensure_subscriptions(self) -> None:
        """Topics, dead-letter topics and push subscriptions to the servers (idempotent).

        The push subscriptions carry no dead-letter policy: the emulator crashes on one
        (``inboxflow.delivery_attempts``); the functions dead-letter by counting.
        """
        from inboxflow.adapters.pubsub_bus import PubSubAdmin

        options: dict[str, Any] = {
            "minimum_backoff_s": float(self.env["INBOXFLOW_RETRY_MINIMUM_BACKOFF_S"]),
            "maximum_backoff_s": min(float(self.env["INBOXFLOW_RETRY_MAXIMUM_BACKOFF_S"]), 600),
            "dead_letter_policy": False,
        }
        admin = PubSubAdmin(self.project)
        try:
            admin.ensure_topics(
                self.pairs,
                {nid: server.url for nid, server in self.servers.items()},
                **options,
            )
            if INGEST in self.servers:
                admin.ensure_push_subscription(
                    f"{GMAIL_TOPIC}-push",
                    GMAIL_TOPIC,
                    self.servers[INGEST].url,
                    dead_letter_topic=f"{GMAIL_TOPIC}-dlq",
                    **options,
                )
        finally:
            admin.close()

    def watch_dev_mailbox(self) -> str:
        """Register ``dev_mailbox()`` and watch it (its cursor starts at the double's history id)."""
        from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
        from inboxflow.clock import SystemClock
        from inboxflow.ingest.mailboxes import MailboxRegistry
        from inboxflow.ingest.watch import renew_watches
        from inboxflow.services import make_store
        from inboxflow.settings import Settings

        assert self.gmail_double is not None
        address = dev_mailbox()
        store = make_store(Settings.from_env({**os.environ, **self.env}))
        try:
            clock = SystemClock()
            MailboxRegistry(store).add(address, clock.now())
            reader = GoogleApiGmailReader(api_url=self.gmail_double.url, environ=os.environ)
            summary = renew_watches(store, reader, clock, topic=self.gmail_topic)
        finally:
            store.close()
        if summary["failed"]:
            raise RuntimeError(f"could not watch {address}: {summary['failed']}")
        return address

    def stop(self) -> None:
        """Stop every server and the Gmail double: their process groups all at once."""
        processes = [server.process for server in self.servers.values()]
        if self.gmail_double is not None:
            processes.append(self.gmail_double.process)
        process_groups.stop_groups([p.pid for p in processes if p.poll() is None])
        for process in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
        self.servers.clear()
        self.gmail_double = None

    def __enter__(self) -> DevCloud:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

"""The emulated cloud on one machine: the production topology, locally.

One functions-framework server per graph node (each with its own
``INBOXFLOW_NODE``), Pub/Sub emulator topics with push subscriptions to those
servers, state in the Firestore emulator. Used by ``inboxflow dev`` and by the
integration tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from .emulators import free_port
from .graph import Graph
from .naming import node_id

REPO_ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS_SOURCE = REPO_ROOT / "functions" / "main.py"


@dataclass
class FunctionServer:
    """A functions-framework process serving one node."""

    node_id: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def url(self) -> str:
        """Where Pub/Sub pushes."""
        return f"http://127.0.0.1:{self.port}/"

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


def _ready(port: int) -> bool:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/",
        data=b"{}",
        method="POST",
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
) -> FunctionServer:
    """Start ``functions-framework`` for ``target`` serving ``node`` (``graph.node``) and wait until it answers."""
    if not FUNCTIONS_SOURCE.exists():
        raise FileNotFoundError(f"{FUNCTIONS_SOURCE} not found: run from a checkout of inboxflow")
    port = free_port()
    log_file = tempfile.NamedTemporaryFile(prefix=f"inboxflow-{node}-", suffix=".log", delete=False)  # noqa: SIM115
    command = [
        sys.executable,
        "-m",
        "functions_framework",
        "--target",
        target,
        "--source",
        str(FUNCTIONS_SOURCE),
        "--signature-type",
        signature,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(
        command,
        env={**os.environ, **env, "INBOXFLOW_NODE": node},
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log_file.close()
    server = FunctionServer(node, port, process, Path(log_file.name))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"functions-framework for {node} exited:\n{server.log_tail()}")
        if _ready(port):
            return server
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(
        f"functions-framework for {node} did not answer within {timeout_s:.0f}s:\n{server.log_tail()}"
    )


@dataclass
class DevCloud:
    """Function servers for every node of some graphs, wired to Pub/Sub push subscriptions."""

    project: str
    env: dict[str, str]
    servers: dict[str, FunctionServer] = field(default_factory=dict)

    def start(self, graphs: list[Graph]) -> None:
        """Start one server per node and push subscriptions from each node's topic to it."""
        from .adapters.pubsub_bus import PubSubAdmin

        pairs = [(graph.name, node) for graph in graphs for node in graph.nodes]
        for graph_name, node in pairs:
            nid = node_id(graph_name, node)
            self.servers[nid] = start_function(nid, self.env)
        admin = PubSubAdmin(self.project)
        try:
            admin.ensure_topics(
                pairs,
                {nid: server.url for nid, server in self.servers.items()},
                minimum_backoff_s=1.0,
                maximum_backoff_s=10.0,
            )
        finally:
            admin.close()

    def stop(self) -> None:
        """Stop every server."""
        for server in self.servers.values():
            server.stop()
        self.servers.clear()

    def __enter__(self) -> DevCloud:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

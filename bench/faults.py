"""Faults during a burst through `inboxflow dev`: nothing lost, nothing doubled, no manual step (not a test).

Starts ``inboxflow dev`` on a home of its own, delivers a burst of mixed emails
(every graph's .eml samples, each with a Message-ID of its own) into the
watched mailbox of the Gmail double, and while they flow:

- SIGKILLs a node server (the leader of ``pipeline.classify``'s process group),
- SIGKILLs an ingest worker (the gunicorn worker under ``ingest``'s leader),
- SIGKILLs a node's whole process group (``pipeline.generate``),
- freezes the Firestore emulator's process group (SIGSTOP, then SIGCONT).

Then it waits, with no manual step, until every message is decided by ingest
and no trace is ``running`` (or ``--drain-timeout`` passes), and prints:
messages delivered, traces, missing (a message with no decision, or a
decision to start a trace with no trace), duplicate traces (two traces for one
message), duplicate drafts or sends (two replies in the Gmail double to one
message), stuck (``running`` at the end), dead-lettered, restarts and the
time to drain. Exit code 0 when missing, duplicates and stuck are all 0.

    .venv/bin/python bench/faults.py [--emails 100] [--freeze 15] [--drain-timeout 900]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email import message_from_bytes
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]


def mixed_emails(count: int) -> list[bytes]:
    """``count`` emails cycling through every graph's .eml samples, each with its own Message-ID."""
    from inboxflow.dev.cli.local import graph_samples
    from inboxflow.graphs import graph_registry

    samples = [p for p in graph_samples(graph_registry()) if p.suffix == ".eml"]
    emails = []
    for n in range(count):
        message = message_from_bytes(samples[n % len(samples)].read_bytes(), policy=default_policy)
        del message["Message-ID"]
        message["Message-ID"] = f"<faults-{n}-{os.getpid()}@bench.inboxflow.test>"
        emails.append(message.as_bytes())
    return emails


def message_id_of(raw: bytes) -> str:
    return str(message_from_bytes(raw, policy=default_policy)["Message-ID"]).strip("<> ")


# --- the running cloud -------------------------------------------------------------


@dataclass
class Dev:
    """An ``inboxflow dev`` process started by the bench."""

    home: Path
    process: subprocess.Popen[bytes]
    log_path: Path

    @classmethod
    def start(cls, home: Path, timeout_s: float = 300) -> Dev:
        log_path = home.parent / f"{home.name}-dev.log"
        home.mkdir(parents=True, exist_ok=True)
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [*CLI, "dev", "--home", str(home)],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, "COLUMNS": "250"},
            )
        dev = cls(home, process, log_path)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and process.poll() is None:
            if "warmed" in dev.log():
                return dev
            time.sleep(0.5)
        dev.stop()
        raise RuntimeError(f"inboxflow dev did not start:\n{dev.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    @property
    def state(self) -> dict[str, Any]:
        return dict(json.loads((self.home / "dev.json").read_text()))

    def processes(self) -> dict[str, dict[str, Any]]:
        from inboxflow.dev.supervisor import read_processes

        return {p["name"]: p for p in read_processes(self.home)}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)


# --- faults --------------------------------------------------------------------------


def group_members(pgid: int) -> list[int]:
    from inboxflow.dev.process_groups import members

    return members(pgid)


def kill_node_server(dev: Dev, node: str) -> str:
    pid = int(dev.processes()[f"function {node}"]["pid"])
    os.kill(pid, signal.SIGKILL)
    return f"SIGKILL node server {node} (pid {pid})"


def kill_ingest_worker(dev: Dev) -> str:
    leader = int(dev.processes()["function ingest"]["pid"])
    workers = [pid for pid in group_members(leader) if pid != leader]
    target = workers[0] if workers else leader
    os.kill(target, signal.SIGKILL)
    return f"SIGKILL ingest worker (pid {target}, group {leader})"


def kill_node_group(dev: Dev, node: str) -> str:
    leader = int(dev.processes()[f"function {node}"]["pid"])
    os.killpg(leader, signal.SIGKILL)
    return f"SIGKILL the process group of {node} (pgid {leader})"


def freeze_firestore(dev: Dev, seconds: float) -> str:
    leader = int(dev.processes()["firestore emulator"]["pid"])
    os.killpg(leader, signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        os.killpg(leader, signal.SIGCONT)
    return f"froze the Firestore emulator (pgid {leader}) for {seconds:.0f}s"


@dataclass
class Plan:
    """Which faults, at how many seconds into the burst (while its traces are in flight)."""

    node_server: str | None = "pipeline.classify"
    ingest_worker: bool = True
    node_group: str | None = "pipeline.generate"
    freeze_s: float = 15.0
    every_s: float = 3.0
    done: list[str] = field(default_factory=list)

    def steps(self, dev: Dev) -> list[tuple[float, Callable[[], str]]]:
        faults: list[Callable[[], str]] = []
        if self.node_server:
            faults.append(lambda: kill_node_server(dev, self.node_server or ""))
        if self.ingest_worker:
            faults.append(lambda: kill_ingest_worker(dev))
        if self.node_group:
            faults.append(lambda: kill_node_group(dev, self.node_group or ""))
        if self.freeze_s:
            faults.append(lambda: freeze_firestore(dev, self.freeze_s))
        return [(self.every_s * (i + 1), fault) for i, fault in enumerate(faults)]


# --- counting ------------------------------------------------------------------------


def _gmail_get(url: str, path: str, **query: Any) -> dict[str, Any]:
    full = f"{url.rstrip('/')}/gmail/v1/users/{path}?{urllib.parse.urlencode(query, doseq=True)}"
    with urllib.request.urlopen(full, timeout=30) as response:
        return dict(json.loads(response.read()))


def replies_per_message(url: str, mailbox: str, label: str) -> Counter[str]:
    """Messages of ``label`` (SENT, DRAFT) in the Gmail double, counted per ``In-Reply-To``."""
    counts: Counter[str] = Counter()
    token = None
    while True:
        query: dict[str, Any] = {"labelIds": label, "maxResults": 500}
        if token:
            query["pageToken"] = token
        page = _gmail_get(url, f"{mailbox}/messages", **query)
        for ref in page.get("messages", []):
            message = _gmail_get(
                url,
                f"{mailbox}/messages/{ref['id']}",
                format="metadata",
                metadataHeaders="In-Reply-To",
            )
            for header in message.get("payload", {}).get("headers", []):
                if header["name"].lower() == "in-reply-to":
                    counts[header["value"].strip("<> ")] += 1
        token = page.get("nextPageToken")
        if not token:
            return counts


def count(dev: Dev, delivered: dict[str, str]) -> dict[str, Any]:
    """The figures, read from the emulated cloud: ``delivered`` maps Gmail id -> Message-ID."""
    from inboxflow.ingest.claims import Claims, message_trace_id
    from inboxflow.services import make_store
    from inboxflow.settings import Settings

    state = dev.state
    mailbox, url = state["gmail"]["mailbox"], state["gmail"]["url"]
    os.environ.update(state["env"])  # the client libraries read the emulator hosts from here
    store = make_store(Settings.from_env(os.environ))
    try:
        claims = Claims(store)
        undecided, started = [], []
        for gmail_id in delivered:
            claim = claims.get(mailbox, gmail_id)
            if claim is None or not claim.finished:
                undecided.append(gmail_id)
            elif claim.state == "started":
                started.append(message_trace_id(mailbox, gmail_id))
        traces = {trace_id: doc for trace_id, doc in store.list("traces")}
        ours = set(delivered.values())
        per_message: Counter[str] = Counter()
        for doc in traces.values():
            email = (doc.get("state") or {}).get("email") or {}
            message_id = str(email.get("message_id") or "").strip("<> ")
            if message_id in ours:
                per_message[message_id] += 1
        statuses = Counter(doc["status"] for doc in traces.values())
        reasons = Counter(
            str(doc.get("error") or "")[:100]
            for doc in traces.values()
            if doc["status"] == "needs_review"
        )
    finally:
        store.close()
    replies = replies_per_message(url, mailbox, "SENT") + replies_per_message(url, mailbox, "DRAFT")
    return {
        "undecided": len(undecided),
        "missing": len(undecided) + sum(1 for t in started if t not in traces),
        "traces": sum(per_message.values()),
        "duplicate_traces": sum(n - 1 for n in per_message.values() if n > 1),
        "duplicate_replies": sum(n - 1 for m, n in replies.items() if m in ours and n > 1),
        "running": statuses.get("running", 0),
        "statuses": dict(statuses),
        "needs_review": dict(reasons),
    }


# --- the run -------------------------------------------------------------------------


def run_faults(
    dev: Dev,
    emails: int = 100,
    plan: Plan | None = None,
    drain_timeout_s: float = 900,
    say: Callable[[str], None] = print,
    rate: float = 10.0,
) -> dict[str, Any]:
    """Deliver ``emails`` (``rate`` a second) into the running ``dev`` while ``plan``'s faults
    happen; wait until it drains; count.

    Returns:
        ``{messages, traces, missing, duplicate_traces, duplicate_replies, stuck,
        dead_lettered, restarts, faults, drain_s, statuses}``.
    """
    from inboxflow.dev.gmail import deliver

    plan = plan or Plan()
    state = dev.state
    mailbox, url = state["gmail"]["mailbox"], state["gmail"]["url"]
    raws = mixed_emails(emails)
    began = time.monotonic()

    def inject() -> None:
        for at_s, fault in plan.steps(dev):
            time.sleep(max(0.0, began + at_s - time.monotonic()))
            plan.done.append(fault())
            say(f"  {time.monotonic() - began:6.1f}s  {plan.done[-1]}")

    faults = threading.Thread(target=inject)
    faults.start()
    delivered: dict[str, str] = {}
    for n, raw in enumerate(raws):
        time.sleep(max(0.0, began + n / rate - time.monotonic()))
        gmail_id = _retrying(lambda raw=raw: deliver(url, mailbox, raw)["id"])  # type: ignore[misc]
        delivered[str(gmail_id)] = message_id_of(raw)
    say(f"  {time.monotonic() - began:6.1f}s  delivered {len(delivered)} emails")
    faults.join()
    figures = count(dev, delivered)
    while figures["undecided"] + figures["running"] > 0:
        if time.monotonic() - began > drain_timeout_s:
            break
        time.sleep(5)
        figures = count(dev, delivered)
    drain_s = time.monotonic() - began
    processes = dev.processes()
    return {
        "messages": len(delivered),
        "traces": figures["traces"],
        "missing": figures["missing"],
        "duplicate_traces": figures["duplicate_traces"],
        "duplicate_replies": figures["duplicate_replies"],
        "stuck": figures["running"],
        "dead_lettered": dead_lettered(dev),
        "restarts": sum(int(p["restarts"]) for p in processes.values()),
        "faults": list(plan.done),
        "drain_s": round(drain_s, 1),
        "statuses": figures["statuses"],
        "needs_review": figures["needs_review"],
    }


def _retrying(call: Callable[[], Any], attempts: int = 20) -> Any:
    """The Gmail double is not a fault target, but a busy machine may time a request out."""
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            if attempt == attempts - 1:
                raise
            time.sleep(1)
    return None


def dead_lettered(dev: Dev) -> int:
    result = subprocess.run(
        [*CLI, "dlq", "list", "--dev", "--home", str(dev.home), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    return sum(1 for line in result.stdout.splitlines() if line.startswith("{"))


def main(argv: list[str] | None = None) -> int:
    """Start dev, run the burst with its faults, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emails", type=int, default=100)
    parser.add_argument("--freeze", type=float, default=15.0, help="seconds Firestore is frozen")
    parser.add_argument("--drain-timeout", type=float, default=900.0)
    options = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="inboxflow-faults-")) / "cloud"
    print(f"starting inboxflow dev on {home} …")
    dev = Dev.start(home)
    try:
        figures = run_faults(
            dev, options.emails, Plan(freeze_s=options.freeze), options.drain_timeout
        )
    finally:
        dev.stop()
    print(
        f"messages delivered {figures['messages']}, traces {figures['traces']}, "
        f"missing {figures['missing']}, duplicate traces {figures['duplicate_traces']}, "
        f"duplicate drafts or sends {figures['duplicate_replies']}, stuck {figures['stuck']}, "
        f"dead-lettered {figures['dead_lettered']}, restarts {figures['restarts']}, "
        f"time to drain {figures['drain_s']}s"
    )
    print(f"statuses {figures['statuses']}; dev's log: {dev.log_path}")
    for reason, times in figures["needs_review"].items():
        print(f"  needs_review x{times}: {reason}")
    bad = figures["missing"] + figures["duplicate_traces"] + figures["duplicate_replies"]
    return 0 if bad + figures["stuck"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

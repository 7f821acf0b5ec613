"""`inboxflow dev` under faults, as an operator meets them: a killed function server is
started again on its port and says so, `dev status` lists every process with its state,
and a small burst through the Gmail double loses nothing and doubles nothing while a node
server and an ingest worker are SIGKILLed and Firestore is frozen (SIGSTOP) for 3 s.
The burst is bench/faults.py's, smaller."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator

import pytest
from bench.faults import Dev, Plan, run_faults

from inboxflow.dev import emulators
from tests.e2e.test_cli import run_cli

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dev]:
    missing = {
        n: r for n, r in emulators.available().items() if r is not True and n != emulators.TASKS
    }
    if missing:
        pytest.skip(f"emulators not installed: {missing}")
    running = Dev.start(tmp_path_factory.mktemp("faults") / "cloud")
    try:
        yield running
    finally:
        running.stop()


def status(dev: Dev) -> dict[str, dict]:
    shown = run_cli("dev", "status", "--home", str(dev.home), "--json", cwd=dev.home.parent)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return {p["name"]: p for p in map(json.loads, shown.stdout.splitlines())}


def test_a_killed_function_server_is_started_again_on_its_port_and_status_shows_it(
    dev: Dev,
) -> None:
    import os
    import signal

    before = status(dev)
    kinds = {p["kind"] for p in before.values()}
    assert {"emulator", "function", "gmail"} <= kinds
    assert {"firestore emulator", "pubsub emulator", "function ingest"} <= set(before)
    assert all(p["state"] == "up" and p["restarts"] == 0 for p in before.values()), before
    review = before["function pipeline.review"]
    os.kill(review["pid"], signal.SIGKILL)
    deadline = time.monotonic() + 60
    after = status(dev)["function pipeline.review"]
    while (after["restarts"] < 1 or after["state"] != "up") and time.monotonic() < deadline:
        time.sleep(0.5)
        after = status(dev)["function pipeline.review"]
    assert after["restarts"] == 1 and after["state"] == "up" and after["pid"] != review["pid"]
    assert after["port"] == review["port"]
    from inboxflow.entry.warmup import warmup_message

    url = dev.state["functions"]["pipeline.review"]
    push = {"message": warmup_message(), "subscription": "projects/p/subscriptions/s"}
    request = urllib.request.Request(
        url, data=json.dumps(push).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as answered:  # it serves pushes again
        assert answered.status == 200
    assert f"function pipeline.review (pid {review['pid']}, port {review['port']}) exited" in (
        dev.log()
    )
    assert "restarted on the same port" in dev.log()


def test_a_small_burst_under_faults_loses_nothing_doubles_nothing_and_drains(dev: Dev) -> None:
    said: list[str] = []
    plan = Plan(node_server="pipeline.classify", node_group=None, freeze_s=3, every_s=2)
    figures = run_faults(dev, emails=20, plan=plan, drain_timeout_s=400, say=said.append)
    assert len(figures["faults"]) == 3, said
    assert figures["messages"] == 20
    assert figures["missing"] == 0, figures
    assert figures["duplicate_traces"] == 0 and figures["duplicate_replies"] == 0, figures
    assert figures["stuck"] == 0, figures
    assert figures["dead_lettered"] == 0, figures
    frozen_out = dev.log()
    assert "Traceback" not in frozen_out, frozen_out[-3000:]
    assert dev.process.poll() is None  # dev itself rode it all out

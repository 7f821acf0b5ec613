"""``inboxflow serve`` sends reviewers' digests when due, as Cloud Scheduler's sweep does."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from inboxflow.adapters.notifiers import OutboxNotifier
from inboxflow.config import parse_config
from inboxflow.dev.cli.approvals import sweep_digests_in_background
from tests.harness.digest import SIGN_IN, DigestWorld
from tests.harness.runtimes import runtime_for

ANA = "ana@brightlane.io"


def test_serve_sweeps_digests_in_the_background(tmp_path: Path) -> None:
    config = parse_config({"reviewers": {ANA: {"notify": "digest"}}}, graphs={})
    rt = runtime_for(tmp_path, config=config)
    service = rt.ports.approvals
    delivered: list[dict] = []
    service.notifier = OutboxNotifier(rt.store, rt.clock, deliver=delivered.append)
    DigestWorld(rt.store, rt.clock, config).pend([ANA])  # type: ignore[arg-type]
    stop = threading.Event()
    sweep_digests_in_background(rt, stop, every_s=0.05)
    try:
        deadline = time.monotonic() + 30
        while not delivered and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
    assert [m["to"] for m in delivered] == [ANA]
    assert SIGN_IN.search(delivered[0]["text"])


def test_serve_starts_no_sweep_when_nobody_takes_digests(tmp_path: Path) -> None:
    rt = runtime_for(tmp_path, config=parse_config({}, graphs={}))
    before = {t.name for t in threading.enumerate()}
    stop = threading.Event()
    sweep_digests_in_background(rt, stop, every_s=0.05)
    stop.set()
    assert "inboxflow-digests" not in {t.name for t in threading.enumerate()} - before

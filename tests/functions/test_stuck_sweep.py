"""The renew-watch function at ``/stuck-traces``: the sweep the stuck-traces alert counts.

Cloud Scheduler POSTs there every 10 minutes; each stuck trace gives one
WARNING line ``trace stuck`` with its fields (``infra/monitoring_stuck.tf``
counts them), and the JSON answer lists them. A trace that is merely running
is not logged.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from functions_framework import create_app

from inboxflow import entry
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.mail import load_email_file
from inboxflow.mail.loaders import sample_inbox_paths
from inboxflow.routing import RouteDecision
from inboxflow.start import start_email_trace
from tests.harness.paths import ROOT
from tests.harness.runtimes import runtime_for


def test_the_sweep_logs_each_stuck_trace_once_and_answers_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("INBOXFLOW_STORE", "sqlite")
    monkeypatch.setenv("INBOXFLOW_BUS", "inprocess")
    entry.reset()
    email = load_email_file(next(p for p in sample_inbox_paths() if p.name.startswith("01-")))
    pipeline = RouteDecision(graph="pipeline")
    store = SqliteCheckpointStore(tmp_path / "inboxflow.db")
    an_hour_ago = runtime_for(
        tmp_path, store=store, bus=InProcessBus(), clock=FakeClock(time.time() - 3600)
    )
    stuck_id = start_email_trace(an_hour_ago, email, pipeline).trace_id  # message lost
    just_now = runtime_for(tmp_path, store=store, bus=InProcessBus())
    start_email_trace(just_now, email, pipeline)  # running: its delivery may be under way
    store.close()

    client = create_app("renew_watch", str(ROOT / "functions" / "main.py"), "http").test_client()
    with caplog.at_level(logging.WARNING, logger="inboxflow.stuck"):
        answer = client.post("/stuck-traces")
    entry.reset()
    assert answer.status_code == 200, answer.data
    [row] = json.loads(answer.data)["stuck"]
    assert (row["trace_id"], row["graph"], row["node"], row["step"]) == (
        stuck_id,
        "pipeline",
        "classify",
        1,
    )
    assert row["quiet_s"] >= 3600 - 5
    lines = [r for r in caplog.records if r.getMessage() == "trace stuck"]
    assert [(r.trace_id, r.node) for r in lines] == [(stuck_id, "classify")]  # type: ignore[attr-defined]

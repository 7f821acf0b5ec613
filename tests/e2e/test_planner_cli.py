"""The planner from the command line, as a process: ``inboxflow run --graph planner`` stops at
the agency's reviews; ``inboxflow demo`` decides them (``demo_choice``) and runs a full quote."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from tests.harness.planner import SAMPLES

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]


def cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "INBOXFLOW_HOME": str(home)}
    env.pop("INBOXFLOW_CONFIG", None)
    return subprocess.run(
        [*CLI, *args], cwd=home, env=env, capture_output=True, text=True, timeout=180
    )


def _store(home: Path) -> SqliteCheckpointStore:
    return SqliteCheckpointStore(next(home.rglob("*.db")))


def test_run_the_planner_samples_stops_at_the_agency_reviews(tmp_path):
    result = cli("run", "--graph", "planner", "--json", *map(str, SAMPLES), home=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {Path(r["file"]).name[:2]: r for r in map(json.loads, result.stdout.splitlines())}
    assert {r["graph"] for r in rows.values()} == {"planner"}
    assert {name: r["status"] for name, r in rows.items()} == {"41": "waiting", "42": "waiting"}
    store = _store(tmp_path)
    try:
        pending = {
            doc["trace_id"]: doc
            for _, doc in store.list("approvals", where=[("status", "==", "pending")])
        }
        assert pending[rows["41"]["trace_id"]]["payload"]["tool"] == "ask_customer"
        assert pending[rows["42"]["trace_id"]]["payload"]["tool"] == "add_vehicle"
        assert store.list("mailbox_sent") == []  # nothing reaches a customer unreviewed
    finally:
        store.close()


def test_the_demo_runs_a_full_quote_to_the_final_summary(tmp_path):
    result = cli("demo", home=tmp_path)
    assert result.returncode == 0, result.stderr
    store = _store(tmp_path)
    try:
        traces = {
            doc["state"]["email"]["sender"]["address"]: doc
            for _, doc in store.list("traces")
            if doc["graph"] == "planner"
        }
        priya, jordan = traces["priya.shah@example.com"], traces["jordan.rivera@example.com"]
        assert priya["status"] == "done"
        assert priya["state"]["quote_session"]["rate"]["annual_premium_cents"] > 0
        assert jordan["status"] == "waiting" and jordan["pause"]["kind"] == "customer_reply"
        sent = {doc["to"]: doc for _, doc in store.list("mailbox_sent")}
        assert "a year" in sent["priya.shah@example.com"]["body"]
        assert "Your driver's license number" in sent["jordan.rivera@example.com"]["body"]
    finally:
        store.close()
    assert "waiting for the customer" in result.stdout
    assert re.search(r"q_\w+: \$[\d,]+\.\d\d/yr", result.stdout)

"""The agent graph from the command line, as processes: run (by the rule and forced), runs, trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.harness.agent import SAMPLES

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]


def cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "INBOXFLOW_HOME": str(home)}
    env.pop("INBOXFLOW_CONFIG", None)
    return subprocess.run(
        [*CLI, *args], cwd=home, env=env, capture_output=True, text=True, timeout=120
    )


def test_run_routes_crisp_mail_to_the_pharmacy_agent_and_runs_lists_it(tmp_path):
    result = cli("run", "--json", *map(str, SAMPLES), home=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["graph"], r["rule"], r["profile"]) for r in rows] == [
        ("agent", "pharmacy-crisp", "pharmacy")
    ] * 3
    assert [r["status"] for r in rows] == ["done", "done", "needs_review"]
    assert rows[2]["reason"].startswith("escalated by the agent")

    forced = cli(
        "run", "--graph", "agent", "--profile", "pharmacy", "--json", str(SAMPLES[1]), home=tmp_path
    )
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["rule"] is None

    listed = cli("runs", "--profile", "pharmacy", "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    runs = [json.loads(line) for line in listed.stdout.splitlines()]
    assert sorted(r["status"] for r in runs) == ["completed", "completed", "completed", "escalated"]
    escalated = cli("runs", "--status", "escalated", home=tmp_path)
    assert "escalate" in escalated.stdout and "1 agent runs" in escalated.stdout

    trace = cli("trace", rows[0]["trace_id"], home=tmp_path)
    assert trace.returncode == 0, trace.stderr
    out = trace.stdout
    assert (
        out.count("agent_turn") >= 4
        and "tool manage_reservation" in out
        and "tool create_draft" in out
    )

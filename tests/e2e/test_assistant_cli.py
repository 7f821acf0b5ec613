"""The assistant from the command line, as processes: run on the samples shows the three triage
outcomes and review links for both pause kinds; memory show / history / reset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.memory import PreferenceMemory
from tests.harness.assistant import OWNER, SAMPLES

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]


def cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "INBOXFLOW_HOME": str(home)}
    env.pop("INBOXFLOW_CONFIG", None)
    return subprocess.run(
        [*CLI, *args], cwd=home, env=env, capture_output=True, text=True, timeout=120
    )


def test_run_shows_ignore_notify_and_respond_and_links_for_each_pause(tmp_path):
    result = cli("run", "--graph", "assistant", *map(str, SAMPLES[:3]), home=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "ignore: ignored" in out and "notify: running" in out and "respond: running" in out
    assert "done: 1  waiting: 2" in out

    approvals = cli("approvals", "--reviewer", OWNER, home=tmp_path)
    assert approvals.returncode == 0, approvals.stderr
    assert "2 pending approvals" in approvals.stdout
    assert "Your December invoice" in approvals.stdout  # notify
    assert "Quick call about the Q1" in approvals.stdout  # tool_review of schedule_meeting
    assert approvals.stdout.count("/a/") == 2


def test_memory_show_history_and_reset(tmp_path):
    store = SqliteCheckpointStore(tmp_path / "inboxflow.db")
    clock = FakeClock()

    def sign_off(memory):
        return {**memory.profile, "sign_off": "Cheers, Alex"}, "sign-off is now 'Cheers, Alex'"

    PreferenceMemory(store, clock).update(OWNER, "response_preferences", sign_off, "trace-1:4")
    store.close()

    shown = cli("memory", "show", OWNER, "response_preferences", "--json", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert (doc["version"], doc["profile"]["sign_off"]) == (1, "Cheers, Alex")
    table = cli("memory", "show", OWNER, home=tmp_path)
    assert "cal_preferences of alex@brightlane.io: version 0 (defaults)" in table.stdout
    assert "sign-off is now 'Cheers, Alex'" in table.stdout

    history = cli("memory", "history", OWNER, "response_preferences", home=tmp_path)
    assert "1 changes kept" in history.stdout and "trace-1:4" in history.stdout

    bad = cli("memory", "show", OWNER, "tone", home=tmp_path)
    assert bad.returncode == 2 and "unknown namespace 'tone'" in bad.stderr

    reset = cli("memory", "reset", OWNER, "response_preferences", "--yes", home=tmp_path)
    assert reset.returncode == 0 and "reset (version 2)" in reset.stdout
    after = json.loads(
        cli("memory", "show", OWNER, "response_preferences", "--json", home=tmp_path).stdout
    )
    assert after["profile"]["sign_off"] == "Best regards"

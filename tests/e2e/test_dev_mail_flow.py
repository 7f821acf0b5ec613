"""`inboxflow dev` as a user runs it: a mail delivered to the watched mailbox of the
Gmail double reaches the pipeline's final state with no manual step in between
(watch notification -> Pub/Sub emulator -> ingest function -> node functions)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from inboxflow import emulators
from inboxflow.devcloud import function_targets
from tests.e2e.test_cli import CLI, SAMPLES, run_cli
from tests.unit.test_ingest_gmail_api import ENTRY_POINTS

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


def test_a_mail_delivered_to_the_gmail_double_runs_to_the_end_in_dev(tmp_path: Path) -> None:
    missing = {
        n: r for n, r in emulators.available().items() if r is not True and n != emulators.TASKS
    }
    if missing:
        pytest.skip(f"emulators not installed: {missing}")
    env = {"COLUMNS": "250"}
    main = ROOT / "functions" / "main.py"
    if "ingest" not in function_targets(main):  # until functions/main.py exposes it
        source = tmp_path / "main.py"
        source.write_text(main.read_text() + "\n" + ENTRY_POINTS)
        env["INBOXFLOW_FUNCTIONS_SOURCE"] = str(source)
    log_path = tmp_path / "dev.log"
    with log_path.open("w") as log:
        dev = subprocess.Popen(
            [*CLI, "dev", "--exit-after", "240"],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env={**os.environ, **env},
        )
    try:
        state = tmp_path / ".inboxflow" / "dev.json"
        deadline = time.monotonic() + 180
        while not state.exists() and time.monotonic() < deadline and dev.poll() is None:
            time.sleep(0.5)
        assert state.exists(), log_path.read_text()
        gmail = json.loads(state.read_text())["gmail"]
        assert gmail["url"] and gmail["mailbox"] == "maya.chen@brightlane.io"
        assert "function ingest" in log_path.read_text()

        sample = SAMPLES / "03-meeting-request.eml"
        result = run_cli("send", "--gmail", str(sample), cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "delivered Gmail message" in result.stdout
        assert "status     done" in result.stdout and "meeting_request" in result.stdout
        trace_id = result.stdout.split("its trace will be ")[1].split()[0]

        deadline = time.monotonic() + 30  # dev's watcher shows the finished trace too
        while f"trace {trace_id} done" not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        # A complaint waits for a human: the review link points at dev's approve function.
        complaint = SAMPLES / "04-complaint-double-charge.eml"
        result = run_cli("send", "--gmail", str(complaint), cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "status     waiting" in result.stdout, result.stdout
        dev_env = {**env, **json.loads(state.read_text())["env"]}
        approve_url = json.loads(state.read_text())["functions"]["approve"].rstrip("/")
        assert dev_env["INBOXFLOW_APPROVAL_URL"] == approve_url
        pending = run_cli("approvals", cwd=tmp_path, env=dev_env)
        assert pending.returncode == 0, pending.stdout + pending.stderr
        link = next(word for word in pending.stdout.split() if word.startswith(f"{approve_url}/a/"))
        with urllib.request.urlopen(link, timeout=30) as page:
            assert page.status == 200
            assert "Charged twice" in page.read().decode()
        listing = run_cli("mailbox", "list", "--dev", ".inboxflow", cwd=tmp_path, env=env)
        assert listing.returncode == 0, listing.stderr
        assert "maya.chen@brightlane.io" in listing.stdout
    finally:
        os.killpg(dev.pid, signal.SIGINT)
        dev.wait(timeout=60)
    text = log_path.read_text()
    assert f"trace {trace_id} done" in text and "dispatch → END" in text

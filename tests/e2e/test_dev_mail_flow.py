"""`inboxflow dev` as a user runs it: a mail delivered to the watched mailbox of the
Gmail double reaches the pipeline's final state with no manual step in between
(watch notification -> Pub/Sub emulator -> ingest function -> node functions); a
mail ingest blocks is reported at once; every command finds the cloud through
`--home` or `INBOXFLOW_HOME`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from inboxflow.dev import emulators
from tests.e2e.test_cli import CLI, SAMPLES, run_cli

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


def test_a_mail_delivered_to_the_gmail_double_runs_to_the_end_in_dev(tmp_path: Path) -> None:
    missing = {
        n: r for n, r in emulators.available().items() if r is not True and n != emulators.TASKS
    }
    if missing:
        pytest.skip(f"emulators not installed: {missing}")
    env = {"COLUMNS": "250"}
    home = tmp_path / "cloud"  # not ./.inboxflow: every command must be told
    log_path = tmp_path / "dev.log"
    with log_path.open("w") as log:
        dev = subprocess.Popen(
            [*CLI, "dev", "--home", str(home), "--exit-after", "240"],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env={**os.environ, **env},
        )
    try:
        state = home / "dev.json"
        deadline = time.monotonic() + 180
        while not state.exists() and time.monotonic() < deadline and dev.poll() is None:
            time.sleep(0.5)
        assert state.exists(), log_path.read_text()
        gmail = json.loads(state.read_text())["gmail"]
        assert gmail["url"] and gmail["mailbox"] == "maya.chen@brightlane.io"
        deadline = time.monotonic() + 30  # dev writes dev.json, then prints its table
        while "function ingest" not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "function ingest" in log_path.read_text()

        sample = SAMPLES / "03-meeting-request.eml"
        result = run_cli("send", "--gmail", str(sample), "--home", str(home), cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "delivered Gmail message" in result.stdout
        assert "status     done" in result.stdout and "meeting_request" in result.stdout
        trace_id = result.stdout.split("its trace will be ")[1].split()[0]

        deadline = time.monotonic() + 30  # dev's watcher shows the finished trace too
        while f"trace {trace_id} done" not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        # A complaint waits for a human: the review link points at dev's approve function.
        complaint = SAMPLES / "04-complaint-double-charge.eml"
        with_home = {**env, "INBOXFLOW_HOME": str(home)}
        result = run_cli("send", "--gmail", str(complaint), cwd=tmp_path, env=with_home)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "status     waiting" in result.stdout, result.stdout
        dev_env = {**env, **json.loads(state.read_text())["env"]}
        approve_url = json.loads(state.read_text())["functions"]["approve"].rstrip("/")
        assert dev_env["INBOXFLOW_APPROVAL_URL"] == approve_url
        pending = run_cli("approvals", "--dev", "--home", str(home), cwd=tmp_path, env=env)
        assert pending.returncode == 0, pending.stdout + pending.stderr
        link = next(word for word in pending.stdout.split() if word.startswith(f"{approve_url}/a/"))
        with urllib.request.urlopen(link, timeout=30) as page:
            assert page.status == 200
            assert "Charged twice" in page.read().decode()
        listing = run_cli("mailbox", "list", "--dev", cwd=tmp_path, env=with_home)
        assert listing.returncode == 0, listing.stderr
        assert "maya.chen@brightlane.io" in listing.stdout
        for command in (["traces", "--dev"], ["trace", trace_id, "--dev"]):
            shown = run_cli(*command, "--home", str(home), cwd=tmp_path, env=env)
            assert shown.returncode == 0, shown.stdout + shown.stderr
            assert trace_id in shown.stdout
        shown = run_cli("traces", "--dev", cwd=tmp_path, env=with_home)
        assert shown.returncode == 0 and trace_id in shown.stdout, shown.stdout + shown.stderr

        # An out-of-office reply: ingest blocks it, and send says so at once.
        auto_reply = tmp_path / "out-of-office.eml"
        auto_reply.write_bytes(
            b"From: Priya Raman <priya.raman@kestrel-logistics.com>\r\n"
            b"To: maya.chen@brightlane.io\r\nSubject: Out of office\r\n"
            b"Auto-Submitted: auto-replied\r\nMessage-ID: <ooo-1@kestrel-logistics.com>\r\n"
            b"\r\nI am away until Monday.\r\n"
        )
        began = time.monotonic()
        blocked = run_cli(
            "send", "--gmail", str(auto_reply), "--home", str(home), cwd=tmp_path, env=env
        )
        assert blocked.returncode == 0, blocked.stdout + blocked.stderr
        assert time.monotonic() - began < 60
        assert "ingest blocked message" in blocked.stdout, blocked.stdout
        assert "Auto-Submitted: auto-replied" in blocked.stdout
        assert "no trace was started" in blocked.stdout
    finally:
        os.killpg(dev.pid, signal.SIGINT)
        dev.wait(timeout=60)
    text = log_path.read_text()
    assert f"trace {trace_id} done" in text and "dispatch → END" in text

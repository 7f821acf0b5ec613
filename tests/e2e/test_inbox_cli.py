"""`inboxflow inbox REVIEWER` prints a working sign-in link to their inbox; `inboxflow digest`
shows and (`--now`) sends the reviewers' digests, once each."""

from __future__ import annotations

import re
from pathlib import Path

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.approvals.grounds import Grounds
from inboxflow.approvals.settings import ApprovalConfig
from inboxflow.approvals.sign_in import SignIns
from inboxflow.clock import SystemClock
from tests.e2e.test_cli import SAMPLES, run_cli

REVIEWER = "maya.chen@brightlane.io"
SIGN_IN = re.compile(r"^(https?://[^\s/]+)/inbox/sign-in\?token=([A-Za-z0-9_%-]+)$", re.M)


def _paused(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    ran = run_cli(
        "run", "--home", str(home), str(SAMPLES / "04-complaint-double-charge.eml"), cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return home


def test_inbox_prints_a_single_use_sign_in_link_for_the_reviewer(tmp_path: Path) -> None:
    home = _paused(tmp_path)
    result = run_cli("inbox", REVIEWER, "--home", str(home), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"1 pending approval for {REVIEWER}" in result.stdout
    found = SIGN_IN.search(result.stdout)
    assert found is not None, result.stdout
    assert found.group(1) == "http://127.0.0.1:8088"
    store = SqliteCheckpointStore(home / "inboxflow.db")
    try:
        sign_ins = SignIns(Grounds(store, SystemClock(), ApprovalConfig()))
        assert sign_ins.redeem(found.group(2)) == REVIEWER
    finally:
        store.close()

    other = run_cli(
        "inbox",
        "ops@brightlane.io",
        "--home",
        str(home),
        "--base-url",
        "https://a.example",
        cwd=tmp_path,
    )
    assert other.returncode == 0, other.stderr
    assert "0 pending approvals for ops@brightlane.io" in other.stdout
    assert SIGN_IN.search(other.stdout).group(1) == "https://a.example"  # type: ignore[union-attr]

    for bad in ("", "two words"):
        refused = run_cli("inbox", bad, "--home", str(home), cwd=tmp_path)
        assert refused.returncode == 2 and "without spaces" in refused.stdout + refused.stderr


def test_digest_now_sends_each_due_digest_once(tmp_path: Path) -> None:
    config = tmp_path / "inboxflow.yaml"
    config.write_text(f"reviewers:\n  {REVIEWER}: {{notify: digest}}\ndigest: {{daily_at: null}}\n")
    env = {"INBOXFLOW_CONFIG": str(config)}
    home = tmp_path / "home"
    ran = run_cli(
        "run",
        "--home",
        str(home),
        str(SAMPLES / "04-complaint-double-charge.eml"),
        cwd=tmp_path,
        env=env,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # The pause sent the digest already (and no email per pause: notify is digest).
    shown = run_cli("digest", "--home", str(home), cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    assert REVIEWER in shown.stdout and "digest" in shown.stdout
    outbox = run_cli("outbox", "--home", str(home), cwd=tmp_path, env={**env, "COLUMNS": "300"})
    assert "1 decision waits for you" in outbox.stdout
    assert "Approve reply" not in outbox.stdout, outbox.stdout
    swept = run_cli("digest", "--now", "--home", str(home), cwd=tmp_path, env=env)
    assert swept.returncode == 0, swept.stderr
    assert f"{REVIEWER}: not due" in swept.stdout

    nobody = run_cli("digest", "--now", "--home", str(home), cwd=tmp_path)
    assert "no reviewer takes digests" in nobody.stdout

"""`inboxflow demo` and `inboxflow outbox`: each channel's notifications, kept locally."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.e2e.test_cli import run_cli

REPO_CONFIG = Path(__file__).resolve().parents[2] / "inboxflow.yaml"
CHANNELS = """
channels:
  ses: {region: eu-west-1, sender: approvals@brightlane.io}
reviewers:
  maya.chen@brightlane.io: {channel: ses}
  alex@brightlane.io: {channel: webhook, url: "https://chat.example/v1/spaces/A/messages"}
"""


def test_the_demo_counts_each_channel_and_outbox_lists_them(tmp_path: Path) -> None:
    config = tmp_path / "inboxflow.yaml"
    config.write_text(REPO_CONFIG.read_text() + CHANNELS)
    home = tmp_path / "home"
    env = {"INBOXFLOW_CONFIG": str(config)}
    demo = run_cli("demo", "--home", str(home), cwd=tmp_path, env=env, timeout=600)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    counts = re.search(r"by channel: gmail (\d+) · ses (\d+) · webhook (\d+)", demo.stdout)
    assert counts, demo.stdout[-2000:]
    gmail, ses, webhook = (int(n) for n in counts.groups())
    assert ses > 0 and webhook > 0, counts.group(0)

    listed = run_cli("outbox", "--home", str(home), "--channel", "ses", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert len(rows) == ses
    assert {r["channel"] for r in rows} == {"ses"} and {r["to"] for r in rows} == {
        "maya.chen@brightlane.io"
    }
    assert all("?t=REDACTED" in r["text"] and r["delivered"] is False for r in rows)
    everything = run_cli("outbox", "--home", str(home), "--json", cwd=tmp_path)
    assert len(everything.stdout.splitlines()) == gmail + ses + webhook

    table = run_cli("outbox", "--home", str(home), "--channel", "webhook", cwd=tmp_path)
    assert table.returncode == 0 and f"webhook {webhook}" in table.stdout
    assert "alex@brightlane.io" in table.stdout

    wrong = run_cli("outbox", "--home", str(home), "--channel", "sms", cwd=tmp_path)
    assert wrong.returncode == 2
    assert "unknown channel 'sms' (channels: gmail, ses, webhook)" in wrong.stderr

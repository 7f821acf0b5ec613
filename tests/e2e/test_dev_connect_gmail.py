"""docs/deploy.md, *Connect your Gmail*, "Try it on the emulated cloud", as a person runs it:
`inboxflow dev`, then `mailbox connect ADDRESS --dev --no-browser` (open the printed
URL, sign in, Allow, paste the address back), `mailbox list --dev`, and a mail sent to
the Gmail double runs to the end with the mailbox's own token (the double checks the
access token on every call)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from inboxflow.adapters.google_credentials import CALENDAR_EVENTS_SCOPE, GMAIL_MODIFY_SCOPE
from inboxflow.adapters.mailbox_tokens import FileTokenStore
from inboxflow.dev import emulators
from tests.e2e.test_cli import CLI, SAMPLES, run_cli
from tests.harness.consent import ConsentBrowser

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

MAILBOX = "maya.chen@brightlane.io"  # dev's mailbox; the pipeline, whose tools use the calendar
CONSENT_URL = re.compile(r"(http://127\.0\.0\.1:\d+/o/oauth2/auth\?\S+)")


def _connect(home: Path, cwd: Path, env: dict[str, str]) -> tuple[str, str, int]:
    """Run connect --no-browser, consent at the URL it prints, paste the redirect back."""
    connect = subprocess.Popen(
        [*CLI, "mailbox", "connect", MAILBOX, "--dev", "--home", str(home), "--no-browser"],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **env},
    )
    assert connect.stdout is not None
    shown, url = "", None
    deadline = time.monotonic() + 60
    while url is None and time.monotonic() < deadline:
        line = connect.stdout.readline()
        if not line:
            break
        shown += line
        found = CONSENT_URL.search(line)
        url = found.group(1) if found else None
    assert url is not None, shown
    redirect = ConsentBrowser(MAILBOX).answer(url)
    rest, _ = connect.communicate(redirect + "\n", timeout=120)
    return url, shown + rest, connect.returncode


def test_connect_your_gmail_on_the_emulated_cloud(tmp_path: Path) -> None:
    missing = {
        n: r for n, r in emulators.available().items() if r is not True and n != emulators.TASKS
    }
    if missing:
        pytest.skip(f"emulators not installed: {missing}")
    env = {"COLUMNS": "250"}
    home = tmp_path / "cloud"
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
        deadline = time.monotonic() + 180
        while "function ingest" not in log_path.read_text() and time.monotonic() < deadline:
            assert dev.poll() is None, log_path.read_text()
            time.sleep(0.5)
        assert "function ingest" in log_path.read_text(), log_path.read_text()

        url, said, code = _connect(home, tmp_path, env)
        assert code == 0, said
        asked = parse_qs(urlsplit(url).query)
        assert set(asked["scope"][0].split()) == {GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE}
        assert asked["code_challenge_method"] == ["S256"] and asked["login_hint"] == [MAILBOX]
        assert f"connected {MAILBOX}" in said and f"watching {MAILBOX}" in said, said
        token_file = FileTokenStore(home / "mailbox-tokens").path(MAILBOX)
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = json.loads(token_file.read_text())
        assert token["refresh_token"] not in said  # never printed

        listing = run_cli("mailbox", "list", "--dev", "--home", str(home), cwd=tmp_path, env=env)
        assert listing.returncode == 0, listing.stdout + listing.stderr
        row = next(line for line in listing.stdout.splitlines() if MAILBOX in line)
        assert "authorized_user" in row and "calendar.events gmail.modify" in row, row
        assert "│ ok" in row, row

        sample = SAMPLES / "03-meeting-request.eml"
        sent = run_cli("send", "--gmail", str(sample), "--home", str(home), cwd=tmp_path, env=env)
        assert sent.returncode == 0, sent.stdout + sent.stderr
        assert "status     done" in sent.stdout and "meeting_request" in sent.stdout, sent.stdout
    finally:
        os.killpg(dev.pid, signal.SIGINT)
        dev.wait(timeout=60)

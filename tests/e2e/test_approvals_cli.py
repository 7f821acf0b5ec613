"""`inboxflow approvals` links to the approval function that really runs: the
`inboxflow serve` of the same home on whatever port it took, or `--base-url`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from inboxflow.dev.emulators import free_port
from tests.e2e.test_cli import CLI, SAMPLES, run_cli

LINK = re.compile(r"(https?://[^\s/]+)/a/[A-Za-z0-9_-]+\?t=[A-Za-z0-9_-]+")


WIDE = {"COLUMNS": "400"}  # a link on one line


def links(output: str) -> list[str]:
    return LINK.findall(output)


def start_serve(
    cwd: Path, home: Path, port: int, sigint_ignored: bool = False
) -> subprocess.Popen[bytes]:
    """``inboxflow serve`` of ``home`` on ``port`` once ``serve.json`` names it (its output in
    ``cwd/serve.log``); ``sigint_ignored``: started as a shell's background job is."""
    with (cwd / "serve.log").open("w") as log:
        serve = subprocess.Popen(
            [*CLI, "serve", "--port", str(port)],
            cwd=cwd,
            env={**os.environ, "INBOXFLOW_HOME": str(home)},
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
            if sigint_ignored
            else None,
        )
    deadline = time.monotonic() + 60
    while not (home / "serve.json").exists() and time.monotonic() < deadline:
        assert serve.poll() is None, (cwd / "serve.log").read_text()
        time.sleep(0.2)
    return serve


def test_links_follow_the_running_serve_or_base_url(tmp_path: Path) -> None:
    home = tmp_path / "elsewhere"
    ran = run_cli(
        "run", "--home", str(home), str(SAMPLES / "04-complaint-double-charge.eml"), cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    port = free_port()
    serve = start_serve(tmp_path, home, port)
    try:
        listed = run_cli("approvals", "--home", str(home), cwd=tmp_path, env=WIDE)
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert set(links(listed.stdout)) == {f"http://127.0.0.1:{port}"}, listed.stdout
        link = LINK.search(listed.stdout)
        assert link is not None
        deadline = time.monotonic() + 30
        while True:  # the port is bound just after serve.json is written
            try:
                with urllib.request.urlopen(link.group(0), timeout=10) as page:
                    assert page.status == 200 and "Charged twice" in page.read().decode()
                break
            except urllib.error.URLError as exc:
                assert (
                    isinstance(exc.reason, ConnectionRefusedError) and time.monotonic() < deadline
                )
                time.sleep(0.2)

        chosen = run_cli(
            "approvals",
            "--base-url",
            "https://review.example.test",
            cwd=tmp_path,
            env={**WIDE, "INBOXFLOW_HOME": str(home)},
        )
        assert chosen.returncode == 0, chosen.stdout + chosen.stderr
        assert set(links(chosen.stdout)) == {"https://review.example.test"}
        bad = run_cli("approvals", "--home", str(home), "--base-url", "review.test", cwd=tmp_path)
        assert bad.returncode == 2 and "not an http(s) URL" in bad.stderr
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=30)
    assert not (home / "serve.json").exists(), (tmp_path / "serve.log").read_text()
    # No serve runs now: the configured URL again.
    after = run_cli(
        "approvals",
        "--home",
        str(home),
        cwd=tmp_path,
        env={**WIDE, "INBOXFLOW_APPROVAL_URL": "http://approvals.example.test"},
    )
    assert set(links(after.stdout)) == {"http://approvals.example.test"}, after.stdout


def test_serve_started_as_a_background_job_stops_on_ctrl_c(tmp_path: Path) -> None:
    """A shell's background job (``inboxflow serve &``, nohup, a CI runner) starts ``serve`` with
    SIGINT ignored; Ctrl-C (the SIGINT a supervisor or a test sends) still stops it."""
    home = tmp_path / "home"
    serve = start_serve(tmp_path, home, free_port(), sigint_ignored=True)
    try:
        assert (home / "serve.json").exists(), (tmp_path / "serve.log").read_text()
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=30)
    finally:
        if serve.poll() is None:
            serve.kill()
    assert not (home / "serve.json").exists(), (tmp_path / "serve.log").read_text()

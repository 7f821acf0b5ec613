"""``ServerProcess``: the end of a local server's output, and stopping its whole group."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from inboxflow.dev.devcloud import FunctionServer, GmailDouble, ServerProcess


def _sleeper(log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-c",
                "print('one'); print('two', flush=True); import time; time.sleep(60)",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def test_stop_ends_the_process_and_the_log_tail_is_its_last_lines(tmp_path: Path) -> None:
    log_path = tmp_path / "server.log"
    server = ServerProcess(0, _sleeper(log_path), log_path)
    deadline = time.monotonic() + 30
    while "two" not in server.log_tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    server.stop()
    assert server.process.poll() is not None
    assert server.log_tail(1) == "two"
    server.stop()  # stopping a stopped server does nothing


def test_a_missing_log_has_an_empty_tail(tmp_path: Path) -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert ServerProcess(0, done, tmp_path / "absent.log").log_tail() == ""


def test_the_servers_say_where_they_listen(tmp_path: Path) -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert (
        FunctionServer(8081, done, tmp_path / "f.log", "n_classify").url == "http://127.0.0.1:8081/"
    )
    assert GmailDouble(8082, done, tmp_path / "g.log").url == "http://127.0.0.1:8082"

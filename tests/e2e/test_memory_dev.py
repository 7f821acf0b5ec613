"""`inboxflow memory --dev` as processes against the emulated cloud `inboxflow dev` runs: the
memory written in its Firestore emulator is what show/history read, reset writes there, and
the embedded store of the same home is not what --dev reads."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from inboxflow.clock import FakeClock
from inboxflow.memory import PreferenceMemory
from tests.e2e.test_cli import run_cli
from tests.e2e.test_dev_lifecycle import kill_leftovers, start_dev
from tests.harness.assistant import OWNER

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


def _learn_in_the_cloud(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inboxflow.services import make_store
    from inboxflow.settings import Settings

    with monkeypatch.context() as patched:  # only this process, only while writing
        for name, value in json.loads((home / "dev.json").read_text())["env"].items():
            patched.setenv(name, value)
        store = make_store(Settings.from_env(os.environ))
        _write(store)


def _write(store) -> None:
    try:
        assert type(store).__name__ == "FirestoreCheckpointStore"

        def sign_off(memory):
            return {**memory.profile, "sign_off": "Cheers, Alex"}, "sign-off is now 'Cheers, Alex'"

        PreferenceMemory(store, FakeClock()).update(
            OWNER, "response_preferences", sign_off, "trace-7:3"
        )
    finally:
        store.close()


def test_memory_show_history_and_reset_on_the_emulated_cloud(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "cloud"
    dev, tree = start_dev(home, tmp_path)
    try:
        _learn_in_the_cloud(home, monkeypatch)
        args = ("--dev", "--home", str(home))
        shown = run_cli(
            "memory", "show", OWNER, "response_preferences", "--json", *args, cwd=tmp_path
        )
        assert shown.returncode == 0, shown.stdout + shown.stderr
        doc = json.loads(shown.stdout)
        assert (doc["version"], doc["profile"]["sign_off"]) == (1, "Cheers, Alex")

        embedded = run_cli(
            "memory",
            "show",
            OWNER,
            "response_preferences",
            "--json",
            "--home",
            str(home),
            cwd=tmp_path,
        )
        assert embedded.returncode == 0, embedded.stderr
        assert json.loads(embedded.stdout)["version"] == 0  # not the cloud's memory

        history = run_cli("memory", "history", OWNER, "response_preferences", *args, cwd=tmp_path)
        assert history.returncode == 0, history.stderr
        assert "1 changes kept" in history.stdout and "trace-7:3" in history.stdout

        reset = run_cli(
            "memory", "reset", OWNER, "response_preferences", "--yes", *args, cwd=tmp_path
        )
        assert reset.returncode == 0 and "reset (version 2)" in reset.stdout, reset.stderr
        after = run_cli(
            "memory", "show", OWNER, "response_preferences", "--json", *args, cwd=tmp_path
        )
        assert json.loads(after.stdout)["profile"]["sign_off"] == "Best regards"
    finally:
        os.kill(dev.pid, signal.SIGINT)
        try:
            dev.wait(timeout=60)
        finally:
            kill_leftovers(tree)

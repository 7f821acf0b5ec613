"""``inboxflow person`` as a user meets it (real processes): an address that only looks like the
person's (a dotless i, the long s, the Kelvin sign, fullwidth forms, Cyrillic and Greek letters)
exports and erases nothing of theirs; their own address in any ASCII case finds all of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.mail import load_email_file
from inboxflow.mail.addresses import ascii_lower
from tests.harness.person import PIPELINE_SAMPLES, _from, _start, build

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]
KIM = "kim.lee@gmail.com"
LOOK_ALIKES = [
    "kim.lee@gma\u0131l.com",  # dotless i in the domain
    "k\u0131m.lee@gmail.com",  # dotless i in the local part
    "kim.lee@gmail.\u0441om",  # Cyrillic es
    "kim.lee@gmail.c\u03bfm",  # Greek omicron
    "\u212aim.lee@gmail.com",  # Kelvin sign
    "kim.\u217cee@gmail.com",  # roman numeral fifty
    "\uff4bim.lee@gmail.com",  # fullwidth k
    "kim.lee@\uff47mail.com",  # fullwidth g (a domain IDNA 2008 refuses)
]
"""Each differs from Kim's address by one character Unicode folding takes for its ASCII model."""


def _person(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "person", *args, "--home", str(home)],
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("look-alikes")
    home = root / "home"
    home.mkdir()
    store = SqliteCheckpointStore(home / "inboxflow.db")
    runtime = build(root, store)
    complaint = load_email_file(next(PIPELINE_SAMPLES.glob("04-*")))
    _start(runtime, "pipeline", _from(complaint, KIM))
    store.close()
    return home


def _held(home: Path, address: str) -> str:
    listed = _person(home, address)
    assert listed.returncode == 0, listed.stderr
    return listed.stdout


@pytest.mark.parametrize("look_alike", LOOK_ALIKES)
def test_a_look_alike_exports_and_erases_nothing_of_the_person(
    home: Path, look_alike: str, tmp_path: Path
) -> None:
    before = _held(home, KIM)
    assert "held about kim.lee@gmail.com" in before
    export = tmp_path / "export.json"
    exported = _person(home, look_alike, "--export", str(export))
    if exported.returncode == 2:  # a domain IDNA 2008 refuses: no person at all
        assert "not a domain IDNA 2008 allows" in exported.stderr
        assert not export.exists()
        return
    assert exported.returncode == 0, exported.stderr
    assert "nothing held about" in exported.stdout
    document = json.loads(export.read_text(encoding="utf-8"))
    assert document["counts"] == {} and document["mentioned"] == {}
    assert KIM not in ascii_lower(json.dumps(document, ensure_ascii=False))

    erased = _person(home, look_alike, "--erase", "--yes", "--by", "dpo")
    assert erased.returncode == 0, erased.stderr
    assert "erased 0 documents" in erased.stdout
    assert _held(home, KIM) == before


def test_the_person_s_own_address_in_any_ascii_case_finds_them(home: Path) -> None:
    assert "held about kim.lee@gmail.com" in _held(home, "KIM.Lee@GMAIL.com")

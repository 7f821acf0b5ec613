"""``INBOXFLOW_REQUIRE_EMULATORS=1`` turns the skips of a missing tool into failures.

A real pytest run of real tests in a subprocess, with the emulators, Chromium
and checkov pointed at paths that do not exist (``INBOXFLOW_GCLOUD_SDK``,
``INBOXFLOW_CHROMIUM``, ``INBOXFLOW_CHECKOV``): without the switch each test
skips with its notice; with it each one fails. Tests that skip in their own
body (the e2e tests do) are caught by the hook in tests/conftest.py: a
generated test under that conftest shows it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.required import REQUIRE_VARIABLE, _read

REPO_ROOT = Path(__file__).resolve().parents[2]
MISSING = "/nonexistent/inboxflow-test"
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts="]
PYTEST += ["-q", "-rfsE", "--timeout=120"]
TESTS = {
    # an emulator fixture (tests/conftest.py)
    "tests/integration/test_reliability_firestore.py::test_duplicate_storm_on_firestore": (
        "firestore emulator not installed"
    ),
    # the browser fixture (tests/browser/conftest.py)
    "tests/browser/test_review_page_screenshot.py::test_hostile_email_stays_inert_in_the_browser": (
        "no Chromium"
    ),
    # checkov (tests/infra/test_checkov.py)
    "tests/infra/test_checkov.py::test_checkov_passes": "checkov not found",
}


def _run(
    required: str | None, tests: list[str] | None = None, cwd: Path = REPO_ROOT
) -> dict[str, tuple[str, str]]:
    """Outcome and message per test id, from pytest's short summary."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INBOXFLOW_")}
    env.update(
        INBOXFLOW_GCLOUD_SDK=MISSING,
        INBOXFLOW_CHROMIUM=f"{MISSING}/chromium",
        INBOXFLOW_CHECKOV=f"{MISSING}/checkov",
        PYTEST_ADDOPTS="",
        COLUMNS="1000",
        PYTHONPATH=str(REPO_ROOT),
    )
    if required is not None:
        env[REQUIRE_VARIABLE] = required
    result = subprocess.run(
        [*PYTEST, *(TESTS if tests is None else tests)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    outcomes: dict[str, tuple[str, str]] = {}
    for line in result.stdout.splitlines():
        failed = re.match(r"(FAILED|ERROR) (\S+) - (.*)", line)
        if failed:
            outcomes[failed.group(2)] = (failed.group(1), failed.group(3))
        skipped = re.match(r"SKIPPED \[\d+\] (\S+?:\d+): (.*)", line)
        if skipped:
            outcomes[f"skip@{skipped.group(1)}"] = ("SKIPPED", skipped.group(2))
    assert outcomes, result.stdout + result.stderr
    return outcomes


def test_without_the_switch_a_missing_tool_skips_with_a_notice() -> None:
    outcomes = _run(None)
    assert all(outcome == "SKIPPED" for outcome, _ in outcomes.values()), outcomes
    messages = " | ".join(message for _, message in outcomes.values())
    for notice in TESTS.values():
        assert notice in messages


def test_with_the_switch_every_such_skip_fails() -> None:
    outcomes = _run("1")
    assert set(outcomes) == set(TESTS), outcomes
    for test_id, notice in TESTS.items():
        outcome, message = outcomes[test_id]
        assert outcome in ("FAILED", "ERROR"), (test_id, outcome)
        assert notice in message and REQUIRE_VARIABLE in message, message


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("", False), ("0", False)])
def test_the_switch_reads_one_and_zero(value: str, expected: bool) -> None:
    assert _read(value) is expected


def test_a_mistyped_switch_is_an_error() -> None:
    with pytest.raises(ValueError, match="INBOXFLOW_REQUIRE_EMULATORS='maybe'"):
        _read("maybe")


BODY_SKIP = """
import pytest


@pytest.mark.emulator
def test_skips_in_its_body():
    pytest.skip("emulators not installed: pretend")


@pytest.mark.browser
def test_browser_skips_in_its_body():
    pytest.skip("no Chromium: pretend")


def test_an_unmarked_skip_stays_a_skip():
    pytest.skip("nothing to do with tools")
"""


@pytest.mark.parametrize("required", [None, "1"])
def test_a_marked_test_that_skips_in_its_body_fails_under_the_switch(
    tmp_path: Path, required: str | None
) -> None:
    (tmp_path / "conftest.py").write_text(
        (REPO_ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "test_body_skip.py").write_text(BODY_SKIP, encoding="utf-8")
    outcomes = _run(required, ["test_body_skip.py"], cwd=tmp_path)
    kinds = sorted(outcome for outcome, _ in outcomes.values())
    if required is None:
        assert kinds == ["SKIPPED"] * 3, outcomes
        return
    assert kinds == ["FAILED", "FAILED", "SKIPPED"], outcomes
    for name in ("test_skips_in_its_body", "test_browser_skips_in_its_body"):
        _, message = outcomes[f"test_body_skip.py::{name}"]
        assert "pretend" in message and REQUIRE_VARIABLE in message

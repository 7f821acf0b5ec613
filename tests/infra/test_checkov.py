"""checkov on infra/: no failed check, and every skipped check justified.

checkov has heavy dependencies, so it lives in its own virtualenv
(``.venv-checkov``, see docs/deploy.md); the test finds it at
``$INBOXFLOW_CHECKOV`` (only there, when set), else there or on PATH, and skips
with a notice otherwise (fails under ``INBOXFLOW_REQUIRE_EMULATORS=1``, as in CI).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.harness.required import skip_unless_required

REPO_ROOT = Path(__file__).resolve().parents[2]
INFRA = REPO_ROOT / "infra"
SKIP_COMMENT = re.compile(r"#\s*checkov:skip=(CKV2?_[A-Z]+_\d+)(?::(.*))?")


def _runnable(candidate: str) -> bool:
    return Path(candidate).is_file() and os.access(candidate, os.X_OK)


def _checkov() -> str | None:
    explicit = os.environ.get("INBOXFLOW_CHECKOV")
    if explicit:
        return explicit if _runnable(explicit) else None
    venv = str(REPO_ROOT / ".venv-checkov" / "bin" / "checkov")
    return venv if _runnable(venv) else shutil.which("checkov")


def test_every_skip_comment_is_justified() -> None:
    skips = []
    for tf in sorted(INFRA.rglob("*.tf")):
        for line_no, line in enumerate(tf.read_text(encoding="utf-8").splitlines(), 1):
            match = SKIP_COMMENT.search(line)
            if match:
                reason = (match.group(2) or "").strip()
                assert len(reason) >= 30, (
                    f"{tf.name}:{line_no}: {match.group(1)} needs a real justification"
                )
                skips.append(match.group(1))
    assert skips, "expected the documented skips (public approval function, CSEK, bucket logging)"


def _isolated_env() -> dict[str, str]:
    """checkov's own ``hcl2`` (bc-python-hcl2) must not meet python-hcl2 on PYTHONPATH."""
    env = {
        k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}
    }
    env["LOG_LEVEL"] = "ERROR"
    return env


def _reason(item: dict[str, Any]) -> str:
    result = item.get("check_result") or {}
    return str(result.get("suppress_comment") or item.get("suppress_comment") or "").strip()


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    checkov = _checkov()
    if checkov is None:
        print(
            "NOTICE: checkov is not installed; skipping. "
            "Install it with `make checkov-venv` (see docs/deploy.md)"
        )
        skip_unless_required(
            "checkov not found ($INBOXFLOW_CHECKOV, .venv-checkov/bin/checkov or PATH)"
        )
    result = subprocess.run(
        [
            checkov,
            "-d",
            str(INFRA),
            "--framework",
            "terraform",
            "--skip-download",
            "--compact",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=_isolated_env(),
    )
    assert result.stdout.strip(), f"checkov printed nothing:\n{result.stderr[-2000:]}"
    parsed = json.loads(result.stdout)
    reports = parsed if isinstance(parsed, list) else [parsed]
    terraform = [item for item in reports if item.get("check_type") == "terraform"]
    assert terraform, (
        f"no terraform report in checkov output: {[item.get('check_type') for item in reports]}"
    )
    return terraform[0]


def test_checkov_passes(report: dict[str, Any]) -> None:
    summary = report["summary"]
    results = report["results"]
    failed = [
        f"{item['check_id']} {item['resource']} ({item['file_path']})"
        for item in results.get("failed_checks", [])
    ]
    skipped = results.get("skipped_checks", [])
    print(
        f"\ncheckov {summary.get('checkov_version')}: "
        f"passed={summary['passed']} failed={summary['failed']} "
        f"skipped={summary['skipped']} parsing_errors={summary['parsing_errors']}"
    )
    for item in skipped:
        print(f"  skipped {item['check_id']} on {item['resource']}: {_reason(item)}")
    assert summary["parsing_errors"] == 0
    assert not failed, "checkov failures:\n" + "\n".join(failed)
    assert summary["passed"] > 0
    for item in skipped:
        assert len(_reason(item)) >= 30, (
            f"{item['check_id']} on {item['resource']} skipped without a reason"
        )

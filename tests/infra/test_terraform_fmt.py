"""`terraform fmt -check -recursive infra` wherever the binary exists."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

INFRA = Path(__file__).resolve().parents[2] / "infra"


def test_terraform_fmt() -> None:
    terraform = shutil.which("terraform")
    if terraform is None:
        print(
            "NOTICE: terraform is not installed; skipping `terraform fmt -check -recursive infra`"
        )
        pytest.skip("terraform binary not found on PATH")
    result = subprocess.run(
        [terraform, "fmt", "-check", "-recursive", "-diff", str(INFRA)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"terraform fmt would change:\n{result.stdout}\n{result.stderr}"

"""Cold start (issue 42): the screen's models are built on first use; deferred, they validate
exactly as before."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from inboxflow.graphs.screen import Finding, ScreenAnswer, ScreenReport
from tests.unit.test_deferred_models import _BUILT_AT_IMPORT


def test_no_screen_model_is_built_at_import() -> None:
    # Only a graph's first node screens: review and the other nodes never build the answer.
    done = subprocess.run(
        [sys.executable, "-c", _BUILT_AT_IMPORT, "inboxflow.graphs.screen"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == []


def test_deferred_screen_models_still_refuse_bad_input() -> None:
    with pytest.raises(ValidationError):
        Finding.model_validate({"kind": "weather", "quote": "x", "language": "en"})
    with pytest.raises(ValidationError):
        ScreenAnswer.model_validate({"findings": [{"kind": "harm", "quote": "x" * 401}]})
    with pytest.raises(ValidationError):
        ScreenReport.model_validate({"status": "maybe"})
    report = ScreenReport(
        status="read", findings=[{"kind": "harm", "quote": "q", "language": "en"}]
    )
    assert report.kinds == frozenset({"harm"})

"""``INBOXFLOW_REQUIRE_EMULATORS=1``: what would skip for a missing tool fails instead.

Locally a missing emulator, Chromium or checkov skips its tests with a notice.
CI (``.ci/run``, ``cloudbuild.yaml``) sets ``INBOXFLOW_REQUIRE_EMULATORS=1`` so
that a machine without them cannot turn the run green by skipping. The switch
is read once, when the test session imports this module: ``isolated_environ``
removes ``INBOXFLOW_*`` variables from each test's environment.

Not covered: ``terraform fmt`` (skips with a notice where the binary does not
exist; the CI images have none) and ``importorskip`` of the dev extras.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

REQUIRE_VARIABLE = "INBOXFLOW_REQUIRE_EMULATORS"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def _read(value: str | None) -> bool:
    text = (value or "").strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{REQUIRE_VARIABLE}={value!r}: expected 1 or 0")


REQUIRED = _read(os.environ.get(REQUIRE_VARIABLE))
"""Whether this session requires the emulators, Chromium and checkov."""


def skip_unless_required(reason: str) -> NoReturn:
    """Skip with ``reason``; fail instead when ``INBOXFLOW_REQUIRE_EMULATORS=1``."""
    if REQUIRED:
        pytest.fail(f"{reason} ({REQUIRE_VARIABLE}=1: required here, not skipped)", pytrace=False)
    pytest.skip(reason)

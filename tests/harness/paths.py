"""Where things are: the checkout's root and the tests' data folder, wherever a test file sits."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"

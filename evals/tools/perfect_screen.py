"""Runs a data set with the safety screen answered perfectly: what the graphs' floors do when
the screen finds exactly what the data set's author says is there (issue 41's measure).

    .venv/bin/python evals/tools/perfect_screen.py evals/screen [eval options...]

Every call goes through ``google-genai`` to the strict Gemini double (``--model gemini``):
the screen task is answered from ``DIR/screen.yaml`` (``case id: [kinds]``, the kinds of
``inboxflow.graphs.screen.KINDS``; a case not listed has no finding), every other task by
its offline heuristic (``TaskOracle``), so the graphs' own answers are the offline model's.
A case is found by its first email's subject. The eval's output and exit code are the
eval's.
"""

from __future__ import annotations

import email
import email.policy
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from inboxflow.dev.doubles.gemini_api import (
    GenerateCall,
    TaskOracle,
    gemini_double_environment,
    template_pattern,
)
from inboxflow.graphs.screen import KINDS, SCREEN


def findings_by_subject(root: Path) -> dict[str, list[str]]:
    """``subject -> kinds`` from ``root/screen.yaml`` and the cases' first emails."""
    wanted: Mapping[str, list[str]] = yaml.safe_load(
        (root / "screen.yaml").read_text(encoding="utf-8")
    )
    cases = yaml.safe_load((root / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    by_subject: dict[str, list[str]] = {}
    for case in cases:
        kinds = list(wanted.get(case["id"]) or [])
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise SystemExit(f"screen.yaml: {case['id']}: unknown kinds {sorted(unknown)}")
        first = case["mail"][0] if isinstance(case["mail"], list) else case["mail"]
        message = email.message_from_bytes(
            (root / first).read_bytes(), policy=email.policy.default
        )
        by_subject[str(message["subject"] or "").strip()] = kinds
    return by_subject


class PerfectScreen(TaskOracle):
    """The screen task answered from the data set's labels; the other tasks offline."""

    def __init__(self, by_subject: Mapping[str, list[str]]) -> None:
        super().__init__()
        self.by_subject = by_subject
        self.pattern = template_pattern(SCREEN.template)

    def __call__(self, call: GenerateCall) -> Mapping[str, Any] | BaseModel:
        """The labelled findings for a screen prompt; the offline answer otherwise."""
        match = self.pattern.fullmatch(call.prompt)
        if call.system.strip() != SCREEN.system.strip() or match is None:
            return super().__call__(call)
        subject = match["subject"].strip()
        if subject not in self.by_subject:
            raise KeyError(f"perfect screen: no case has the subject {subject!r}")
        quote = match["text"].strip()[:80] or subject
        findings = [
            {"kind": kind, "quote": quote, "language": "und"} for kind in self.by_subject[subject]
        ]
        return {"findings": findings, "language": "und", "readable": True}


def main(argv: list[str]) -> int:
    """Run ``inboxflow eval DIR --model gemini [options]`` with the perfect screen."""
    from inboxflow.dev.cli import main as cli

    root = Path(argv[0])
    with gemini_double_environment(PerfectScreen(findings_by_subject(root))):
        sys.argv = ["inboxflow", "eval", str(root), "--model", "gemini", *argv[1:]]
        try:
            cli()
        except SystemExit as done:
            return int(done.code or 0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

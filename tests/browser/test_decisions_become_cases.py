"""Issue 43's "done when", in headless Chromium: a reviewer approves, edits and rejects
pipeline drafts in the inbox, ``inboxflow eval collect`` writes the decisions as a data set,
``inboxflow eval`` on it reproduces every decision as labels, and the inbox history says
each was collected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.browser.conftest import OpenedPage
from tests.browser.test_inbox_in_browser import REVIEWER, approval_function  # noqa: F401

pytestmark = pytest.mark.browser
SAMPLES = (
    "04-complaint-double-charge",
    "15-complaint-exports-broken",
    "05-complaint-prompt-injection",
)


def _decide(page, base: str, decision: str, draft: str | None = None) -> None:
    """Open the first waiting item, edit its draft if given, and decide."""
    page.goto(f"{base}/inbox")
    page.locator("[data-item] a").first.click()
    page.wait_for_url("**/inbox/a/**")
    if draft is not None:
        page.fill("textarea[name=draft]", draft)
    page.click(f"button[name=decision][value={decision}]")
    page.wait_for_url("**/inbox?decided=*")


def test_decisions_in_the_inbox_become_cases_that_reproduce(
    approval_function: str,  # noqa: F811
    open_page: Callable[[int, int], OpenedPage],
    tmp_path: Path,
) -> None:
    from inboxflow import entry
    from inboxflow.dev.cli import app
    from inboxflow.dev.eval.cases import load_eval_set
    from inboxflow.dev.eval.runner import RunOptions, run_cases
    from inboxflow.workspace import seed_workspace
    from tests.harness.approval import sample

    rt = entry.runtime()
    seed_workspace(rt.store, rt.clock.now())
    for name in SAMPLES:
        rt.start("pipeline", {"email": sample(name)})
    rt.bus.drain()  # type: ignore[attr-defined]
    assert len(rt.ports.approvals.pending(REVIEWER)) == len(SAMPLES)

    page = open_page(1280, 900).page
    page.goto(rt.ports.approvals.sign_ins.issue(REVIEWER))
    page.click("button[type=submit]")
    page.wait_for_url(f"{approval_function}/inbox")
    edited = "Hello,\n\nWe are on it and will write again today.\n\nWarm wishes,\nMaya"
    _decide(page, approval_function, "approve", edited)
    _decide(page, approval_function, "approve")
    _decide(page, approval_function, "reject")
    rt.bus.drain()  # type: ignore[attr-defined]
    assert rt.ports.approvals.pending(REVIEWER) == []

    out = tmp_path.parent / f"{tmp_path.name}-collected"
    home = tmp_path  # the approval function's INBOXFLOW_HOME (the fixture's)
    ran = CliRunner().invoke(app, ["eval", "collect", str(out), "--home", str(home), "--keep-text"])
    assert ran.exit_code == 0, ran.output
    cases = yaml.safe_load((out / "cases.yaml").read_text(encoding="utf-8"))["cases"]
    assert len(cases) == len(SAMPLES)
    decided = sorted(str(case["decide"][0]) for case in cases)
    assert any("edit" in d for d in decided) and any("reject" in d for d in decided)
    assert any(case.get("criteria", "").find("Warm wishes") >= 0 for case in cases)

    results = run_cases(load_eval_set(out).cases, RunOptions(model="offline"), jobs=1)
    assert [r.case_id for r in results if not r.passed] == [], [r.checks for r in results]

    page.goto(f"{approval_function}/inbox/history?mine=1")
    assert page.locator("[data-history]").count() == len(SAMPLES)
    assert page.locator("[data-collected]").count() == len(SAMPLES)

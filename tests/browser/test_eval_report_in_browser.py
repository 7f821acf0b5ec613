"""The ``inboxflow eval --html`` page in headless Chromium: it renders with no script and no
console error, its step-log links open the embedded log, and email content stays text.

Writes ``tests/artifacts/eval-report.png`` (the whole page at 1280 wide).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from inboxflow.config import config_path
from inboxflow.dev.eval.cases import load_eval_set
from inboxflow.dev.eval.page import render_page
from inboxflow.dev.eval.report import Gate, build_report
from inboxflow.dev.eval.runner import RunOptions, run_cases

from .conftest import ARTIFACTS, OpenedPage

pytestmark = pytest.mark.browser

FOLDER = Path(__file__).resolve().parents[1] / "data" / "evals"
HOSTILE = """{
  "message_id": "hostile-1@attacker.example",
  "mailbox": "maya.chen@brightlane.io",
  "from": "Mallory <mallory@attacker.example>",
  "to": ["maya.chen@brightlane.io"],
  "subject": "Question <script>window.__pwned = 1</script><img src=x onerror=\\"window.__pwned = 2\\">",
  "date": "2027-01-12T11:00:00+00:00",
  "body": "Hi, how do I export a dashboard? <b onmouseover=alert(1)>bold</b>"
}
"""


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evalset")
    shutil.copytree(FOLDER / "mail", folder / "mail")
    (folder / "mail" / "hostile.json").write_text(HOSTILE)
    cases = (FOLDER / "cases.yaml").read_text() + (
        "\n  - id: hostile-<script>\n    mail: mail/hostile.json\n"
        "    expect: {graph: pipeline, category: complaint}\n    never: [drafted]\n"
        "    tags: [safety]\n    note: <i>labels</i> & notes are text\n"
    )
    (folder / "cases.yaml").write_text(cases)
    dataset = load_eval_set(folder)
    results = run_cases(
        dataset.cases, RunOptions(config=config_path(os.environ), judge=True), jobs=1
    )
    document = build_report(dataset.cases, results, Gate(min_accuracy=0.9), dataset=str(folder))
    page = folder / "report.html"
    page.write_text(render_page(document), encoding="utf-8")
    return page


def test_the_report_page_renders_offline_and_keeps_mail_as_text(
    report_page: Path, open_page: Callable[[int, int], OpenedPage]
) -> None:
    opened = open_page(1280, 900)
    page = opened.page
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(report_page.as_uri())
    assert page.title().startswith("inboxflow eval")
    assert page.locator("text=Accuracy per graph and field").count() == 1
    assert page.locator("h3", has_text="pipeline.category").count() == 1
    assert page.locator("svg[aria-label='accuracy by confidence band'] rect").count() == 5
    assert page.locator(".card", has_text="FAIL").count() == 1
    # the hostile case fails: it is listed with what differed and as a new safety violation
    failure = page.locator(".fail", has_text="hostile-<script>")
    assert failure.count() == 1
    assert "category" in failure.locator("table").first.inner_text()
    assert page.locator("td.new", has_text="NEW").count() >= 1
    # its step log is embedded: the link opens it, and the subject in it is text
    failure.locator("a", has_text="step log").click()
    log = failure.locator("details")
    assert log.evaluate("details => details.open") is True
    assert "<script>window.__pwned = 1</script>" in log.inner_text()
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    assert page.locator(".fail i").count() == 0  # the label note's markup is text too
    assert opened.console_errors == []
    assert requests == [report_page.as_uri()]  # self-contained: nothing else is fetched
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "eval-report.png"), full_page=True)

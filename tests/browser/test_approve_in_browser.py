"""End to end in a real browser: a reviewer opens the link, edits the draft, approves.

The approval function is the functions-framework app of ``functions/main.py``
(target ``approve``) on a local port, over the embedded store; the trace is
the real pipeline on a sample complaint.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import ARTIFACTS, OpenedPage
from tests.harness.pipeline import mailbox_writes

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def approval_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Serve the approval function on a free local port; returns its base URL."""
    import functions_framework
    from werkzeug.serving import make_server

    from inboxflow import entry

    server = None
    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("INBOXFLOW_REVIEWERS", "ana@brightlane.io")
    entry.reset()
    app = functions_framework.create_app(target="approve", source=str(ROOT / "functions/main.py"))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    url = f"http://127.0.0.1:{server.server_port}"
    monkeypatch.setenv("INBOXFLOW_APPROVAL_URL", url)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()
        entry.reset()


def test_reviewer_edits_and_approves_in_chromium(
    approval_function: str, open_page: Callable[[int, int], OpenedPage]
) -> None:
    from inboxflow import entry
    from inboxflow.workspace import seed_workspace
    from tests.harness.approval import sample

    rt = entry.runtime()
    seed_workspace(rt.store, rt.clock.now())
    trace_id = rt.start("pipeline", {"email": sample("04-complaint-double-charge")})
    rt.bus.drain()  # type: ignore[attr-defined]
    (approval,) = rt.ports.approvals.pending()
    assert approval.trace_id == trace_id
    link = rt.ports.approvals.tokens.issue_link(approval, "ana@brightlane.io")
    assert link.startswith(approval_function)

    opened = open_page(375, 812)
    page = opened.page
    response = page.goto(link)
    assert response is not None and response.status == 200
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "review-e2e-phone.png"), full_page=True)
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")

    edited = "Hi Sofia,\n\nYou were charged twice; we refunded the second charge today.\n\nMaya"
    page.fill("textarea[name=draft]", edited)
    page.click("button[name=decision][value=approve]")
    page.wait_for_load_state()
    assert "approved" in page.content().lower()
    page.screenshot(path=str(ARTIFACTS / "review-e2e-approved-phone.png"), full_page=True)
    assert opened.console_errors == []

    checkpoint = rt.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done"
    assert checkpoint.state["dispatch"]["approved_by"] == "ana@brightlane.io"
    (draft,) = mailbox_writes(rt.store, trace_id)
    assert draft["body"] == edited
    # Opening the link again shows the decision and offers no form.
    again = page.goto(link)
    assert again is not None and again.status == 200
    assert page.locator("textarea").count() == 0
    assert "ana@brightlane.io" in page.content()

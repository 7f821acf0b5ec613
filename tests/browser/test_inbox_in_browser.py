"""The reviewer's inbox end to end in headless Chromium, at 375 px and on a desktop.

The approval function is the functions-framework app of ``functions/main.py``
(target ``approve``) over the embedded store, as ``inboxflow serve`` runs it;
the approvals are the real pipeline's on sample complaints. The reviewer signs
in from a sign-in link, filters, opens one with the ``o`` key, edits and
approves it, bulk-approves three, and finds all four in the history. The
desktop run saves ``docs/inbox.png`` (the README's screenshot).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import ARTIFACTS, OpenedPage

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
REVIEWER = "ana@brightlane.io"
SAMPLES = (
    "04-complaint-double-charge",
    "05-complaint-prompt-injection",
    "15-complaint-exports-broken",
    "04-complaint-double-charge",
    "05-complaint-prompt-injection",
)


@pytest.fixture
def approval_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Serve the approval function on a free local port; returns its base URL."""
    import functions_framework
    from werkzeug.serving import make_server

    from inboxflow import entry

    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("INBOXFLOW_REVIEWERS", REVIEWER)
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


@pytest.mark.parametrize("width,height", [(375, 812), (1280, 900)], ids=["phone", "desktop"])
def test_sign_in_filter_decide_bulk_and_history(
    approval_function: str,
    open_page: Callable[[int, int], OpenedPage],
    width: int,
    height: int,
) -> None:
    from inboxflow import entry
    from inboxflow.workspace import seed_workspace
    from tests.harness.approval import sample

    rt = entry.runtime()
    seed_workspace(rt.store, rt.clock.now())
    for name in SAMPLES:
        rt.start("pipeline", {"email": sample(name)})
    rt.bus.drain()  # type: ignore[attr-defined]
    assert len(rt.ports.approvals.pending(REVIEWER)) == len(SAMPLES)
    link = rt.ports.approvals.sign_ins.issue(REVIEWER)
    assert link.startswith(f"{approval_function}/inbox/sign-in?token=")

    opened = open_page(width, height)
    page = opened.page
    page.goto(link)
    assert page.context.cookies() == []  # opening the link changed nothing
    page.click("button[type=submit]")
    page.wait_for_url(f"{approval_function}/inbox")
    (cookie,) = page.context.cookies()
    assert cookie["name"].startswith("__Host-") and cookie["httpOnly"] and cookie["secure"]
    assert cookie["sameSite"] == "Strict"
    assert page.locator("[data-item]").count() == 5
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"inbox-{width}.png"), full_page=True)
    if width >= 1000:
        page.screenshot(path=str(ROOT / "docs" / "inbox.png"))

    page.fill("input[name=q]", "exports")
    page.click("form[role=search] button[type=submit]")
    page.wait_for_load_state()
    assert page.locator("[data-item]").count() == 1
    page.keyboard.press("?")
    assert page.locator("#keys").is_visible()
    page.keyboard.press("o")  # the keyboard script runs under the page's CSP nonce
    page.wait_for_url("**/inbox/a/**")
    edited = "Hi,\n\nExports are fixed; the scheduled ones run again tonight.\n\nMaya"
    page.fill("textarea[name=draft]", edited)
    page.click("button[name=decision][value=approve]")
    page.wait_for_url("**/inbox?decided=*")
    assert page.locator(".flash").is_visible()
    assert page.locator("[data-item]").count() == 4
    assert "focused" in (page.locator("[data-item]").first.get_attribute("class") or "")

    boxes = page.locator("input[name=ids]")
    for index in range(3):
        boxes.nth(index).check()
    page.click("button[name=decision][value=approve]")
    page.wait_for_load_state()
    assert page.locator('[data-result="done"]').count() == 3
    assert page.locator('[data-result="already"]').count() == 0

    page.goto(f"{approval_function}/inbox/history?mine=1")
    assert page.locator("[data-history]").count() == 4
    assert "edited" in page.locator("[data-history]", has_text="exports").first.inner_text().lower()
    page.screenshot(path=str(ARTIFACTS / f"inbox-history-{width}.png"), full_page=True)
    assert opened.console_errors == []

    decided = [a for a in rt.store.list("approvals") if a[1]["status"] == "decided"]
    assert len(decided) == 4 and {doc["decided_by"] for _, doc in decided} == {REVIEWER}
    assert len(rt.ports.approvals.pending(REVIEWER)) == 1

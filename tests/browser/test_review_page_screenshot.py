"""The review page in headless Chromium, served with the approval function's CSP.

Writes ``tests/artifacts/review-page-phone.png`` (375x812) and
``review-page-desktop.png`` (1280x900), checks the phone layout has no
horizontal scroll, edits the draft and approves with the plain form POST (no
JavaScript), and shows that hostile email content stays inert in a real browser.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from inboxflow.approvals.pages import ApprovalView, render_result, render_review
from inboxflow.graphs.pipeline.pauses import APPROVE_DRAFT_KIND

from .conftest import ARTIFACTS, OpenedPage, PageServer

if TYPE_CHECKING:
    from playwright.sync_api import Dialog

pytestmark = pytest.mark.browser

TOKEN = "tok_3b1f0c9a8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4"
REVIEW_PATH = "/approvals/apr_7f3c2a9e"
DECIDE_PATH = "/approvals/apr_7f3c2a9e/decide"
MAX_EDIT_CHARS = 20_000

KIND = APPROVE_DRAFT_KIND.for_pause({})  # auto_send off: approving saves a Gmail draft
SAMPLE = ApprovalView(
    approval_id="apr_7f3c2a9e",
    kind=KIND.name,
    title=KIND.title,
    status="pending",
    reviewer="maria@acme.example",
    sender="Jordan Lee <jordan.lee@example.com>",
    subject="Order #4471 arrived damaged - second time this month",
    received_at="2025-07-07T09:14:00Z",
    email_text=(
        "Hi,\n\nMy order #4471 arrived today and the ceramic mug set was broken again. "
        "This is the second time this month.\nI'd like a replacement shipped with proper "
        "packaging, or a refund.\n\nPhotos: https://example.com/photos/4471-a-rather-long-link"
        "-that-must-wrap-on-a-phone-screen\n\nThanks,\nJordan"
    ),
    category="complaint",
    confidence=0.62,
    reasons=["complaints are always approved by a human", "confidence 0.62 is below 0.80"],
    payload={
        "draft": (
            "Hi Jordan,\n\nI'm sorry your mug set arrived broken again - that shouldn't happen "
            "once, let alone twice.\n\nI've arranged a replacement with reinforced packaging; it "
            "ships tomorrow and you'll get a tracking link by email. If you'd rather have a "
            "refund, just reply and I'll process it right away.\n\nBest regards,\nMaria"
        ),
        "to": "jordan.lee@example.com",
        "subject": "Re: Order #4471 arrived damaged - second time this month",
    },
    choices=list(KIND.choices),
    editable=KIND.editable,
    deadline="2025-07-08T09:14:00Z",
    decided_by=None,
    decision=None,
    decided_at=None,
    trace_id="tr_01J2ZK8QW3",
    notification=KIND.notification,
    payload_title=KIND.payload_title,
)

VIEWPORTS = {"phone": (375, 812), "desktop": (1280, 900)}


def serve_review(page_server: PageServer, view: ApprovalView, max_edit_chars: int) -> str:
    page_server.pages[REVIEW_PATH] = render_review(
        view, form_action=DECIDE_PATH, token=TOKEN, max_edit_chars=max_edit_chars
    )
    return page_server.base_url + REVIEW_PATH


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_review_page_screenshot_and_layout(
    device: str, open_page: Callable[[int, int], OpenedPage], page_server: PageServer
) -> None:
    width, height = VIEWPORTS[device]
    url = serve_review(page_server, SAMPLE, MAX_EDIT_CHARS)
    opened = open_page(width, height)
    page = opened.page

    response = page.goto(url)

    assert response is not None and response.ok
    assert "default-src 'none'" in (response.header_value("content-security-policy") or "")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"review-page-{device}.png"), full_page=True)
    scroll_width, inner_width = page.evaluate(
        "[document.scrollingElement.scrollWidth, window.innerWidth]"
    )
    assert scroll_width <= inner_width, f"horizontal scroll at {width}px: {scroll_width}"
    draft = page.locator("textarea[name=draft]")
    assert draft.is_visible() and draft.is_editable()
    assert draft.get_attribute("maxlength") == str(MAX_EDIT_CHARS)
    for label in ("Approve and save as draft", "Reject"):
        button = page.get_by_role("button", name=label)
        assert button.is_visible() and button.is_enabled()
        box = button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= inner_width
        if device == "desktop":  # on a desktop the decision needs no scrolling
            assert box["y"] + box["height"] <= height, f"{label} below the fold"
    # the stylesheet applied under the CSP (a blocked <style> leaves the default white body)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background != "rgba(0, 0, 0, 0)"
    assert opened.console_errors == []
    assert page_server.posts == []


def test_edit_and_approve_posts_the_form_without_javascript(
    open_page: Callable[[int, int], OpenedPage], page_server: PageServer
) -> None:
    url = serve_review(page_server, SAMPLE, MAX_EDIT_CHARS)
    edited = "Hi Jordan,\n\nA replacement ships tomorrow - tracking link to follow.\n\nMaria"
    approved = ApprovalView(**{**SAMPLE.__dict__, "payload": {**SAMPLE.payload, "draft": edited}})
    page_server.pages[DECIDE_PATH] = render_result(
        ApprovalView(
            **{**approved.__dict__, "decision": "approve", "decided_by": approved.reviewer}
        )
    )
    opened = open_page(*VIEWPORTS["phone"])
    page = opened.page
    page.goto(url)

    page.locator("textarea[name=draft]").fill(edited)
    page.locator("input[name=subject]").fill("Re: your order #4471")
    with page.expect_navigation():
        page.get_by_role("button", name="Approve and save as draft").click()

    assert len(page_server.posts) == 1
    path, form = page_server.posts[0]
    assert path == DECIDE_PATH
    assert form["form"] == [TOKEN]
    assert form["decision"] == ["approve"]
    # browsers normalise textarea newlines to CRLF in form submissions
    assert form["draft"][0].replace("\r\n", "\n") == edited
    assert form["subject"] == ["Re: your order #4471"]
    assert form["to"] == ["jordan.lee@example.com"]
    heading = "Approved \N{EN DASH} the reply is saved as a draft"
    assert page.get_by_role("heading", name=heading).is_visible()
    page.screenshot(path=str(ARTIFACTS / "review-result-phone.png"), full_page=True)
    assert opened.console_errors == []


def test_hostile_email_stays_inert_in_the_browser(
    open_page: Callable[[int, int], OpenedPage], page_server: PageServer
) -> None:
    draft = "Dear customer,\n</textarea><script>alert(5)</script>\n{{ 7*7 }}"
    hostile = ApprovalView(
        **{
            **SAMPLE.__dict__,
            "subject": "<script>alert(1)</script>",
            "sender": '"><img src=x onerror=alert(3)>',
            "email_text": "<img src=x onerror=alert(2)>\n<a href=javascript:alert(4)>x</a>"
            + "\nhttps://example.com/"
            + "a" * 300,
            "payload": {**SAMPLE.payload, "draft": draft},
        }
    )
    url = serve_review(page_server, hostile, 500)
    opened = open_page(*VIEWPORTS["phone"])
    page = opened.page
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)

    page.goto(url)

    assert dialogs == []
    assert page.evaluate("document.querySelectorAll('script, img, iframe, a').length") == 0
    assert page.locator("h1").inner_text() == "<script>alert(1)</script>"
    assert page.locator("textarea[name=draft]").input_value() == draft
    scroll_width, inner_width = page.evaluate(
        "[document.scrollingElement.scrollWidth, window.innerWidth]"
    )
    assert scroll_width <= inner_width
    # the only requests the page made were its own URL (nothing fetched for the <img> text)
    assert page_server.requests == [f"GET {REVIEW_PATH}"]

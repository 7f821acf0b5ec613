"""The assistant's review pages in Chromium at phone width: the owner edits a meeting's length
(tool_review of schedule_meeting), accepts the confirmation email, and answers a notify with an
instruction, through the real approval function (functions-framework app)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.browser.conftest import OpenedPage, open_review_on_phone
from tests.browser.test_approve_in_browser import approval_function  # noqa: F401 - a fixture
from tests.harness.assistant import OWNER, sample

pytestmark = pytest.mark.browser


def _open(open_page: Callable[[int, int], OpenedPage], rt, trace_id: str, shot: str):
    return open_review_on_phone(open_page, rt, trace_id, OWNER, f"assistant-{shot}")


def test_the_owner_reviews_the_assistant_in_chromium(
    approval_function: str,  # noqa: F811 - the imported fixture
    open_page: Callable[[int, int], OpenedPage],
) -> None:
    from inboxflow import entry
    from inboxflow.routing import RouteDecision
    from inboxflow.start import start_email_trace

    rt = entry.runtime()

    def begin(prefix: str) -> str:
        email = sample(prefix)
        decision = RouteDecision("assistant", None, "test", mailbox=email.mailbox)
        trace_id = start_email_trace(rt, email, decision).trace_id
        rt.bus.drain()  # type: ignore[attr-defined]
        return trace_id

    meeting = begin("33")
    approval, opened = _open(open_page, rt, meeting, "meeting")
    assert approval.kind == "tool_review"
    page = opened.page
    assert page.locator("[name=attendees]").count() == 1
    assert page.locator("[name=content]").count() == 0  # only the tool's own arguments
    page.fill("[name=duration_minutes]", "45")
    page.click("button[name=decision][value=edit]")
    page.wait_for_load_state()
    assert "Edited" in page.content()
    assert opened.console_errors == []
    rt.bus.drain()  # type: ignore[attr-defined]
    (event,) = [doc for _, doc in rt.store.list("calendar_events")]
    assert event["attendees"] == ["dana.lee@partnerco.example"]

    approval, opened = _open(open_page, rt, meeting, "confirmation")
    assert approval.payload["tool"] == "write_email"
    opened.page.click("button[name=decision][value=accept]")
    opened.page.wait_for_load_state()
    assert "Accepted" in opened.page.content()
    rt.bus.drain()  # type: ignore[attr-defined]
    assert rt.store.get_trace(meeting).state["status"] == "completed"  # type: ignore[union-attr]

    notify = begin("32")
    approval, opened = _open(open_page, rt, notify, "notify")
    assert approval.kind == "notify"
    opened.page.fill("[name=comment]", "Ask for yearly billing.")
    opened.page.click("button[name=decision][value=respond]")
    opened.page.wait_for_load_state()
    assert "Responding" in opened.page.content()
    assert opened.console_errors == []
    rt.bus.drain()  # type: ignore[attr-defined]
    state = rt.store.get_trace(notify).state  # type: ignore[union-attr]
    assert state["instruction"] == "Ask for yearly billing."


def test_the_owner_answers_the_assistants_question_in_chromium(
    approval_function: str,  # noqa: F811 - the imported fixture
    open_page: Callable[[int, int], OpenedPage],
) -> None:
    from inboxflow import entry
    from inboxflow.routing import RouteDecision
    from inboxflow.start import start_email_trace

    rt = entry.runtime()
    body = "Hi Alex,\n\nWhich budget code should we use for the offsite dinner?\n\nSam"
    email = sample("34", body_text=body, message_id="<budget@test>", thread_id="budget")
    decision = RouteDecision("assistant", None, "test", mailbox=email.mailbox)
    trace_id = start_email_trace(rt, email, decision).trace_id
    rt.bus.drain()  # type: ignore[attr-defined]

    approval, opened = _open(open_page, rt, trace_id, "question")
    assert approval.payload["tool"] == "Question"
    page = opened.page
    assert page.locator("textarea[name=answer]").count() == 1
    assert page.locator("[name=content]").count() == 0
    assert "Which budget code" in page.content()
    page.fill("textarea[name=answer]", "Use code OFF-2027.")
    page.click("button[name=decision][value=edit]")
    page.wait_for_load_state()
    assert "Answered" in page.content()
    assert opened.console_errors == []
    rt.bus.drain()  # type: ignore[attr-defined]
    approval, opened = _open(open_page, rt, trace_id, "after-answer")
    assert approval.payload["tool"] == "write_email"
    assert "Use code OFF-2027." in approval.payload["content"]

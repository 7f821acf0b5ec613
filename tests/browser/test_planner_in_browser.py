"""The planner's agency_review page in Chromium at phone width, through the real approval
function (functions-framework app): the planned add_vehicle with its inputs in an edit box,
rejected with "VIN is incorrect"; the replanned question to the customer, approved and sent."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.browser.conftest import OpenedPage, open_review_on_phone
from tests.browser.test_approve_in_browser import approval_function  # noqa: F401 - a fixture
from tests.harness.planner import MAILBOX, sample

pytestmark = pytest.mark.browser


def _open(open_page: Callable[[int, int], OpenedPage], rt, trace_id: str, shot: str):
    return open_review_on_phone(open_page, rt, trace_id, MAILBOX, f"planner-{shot}")


def test_the_agency_reviews_the_planner_in_chromium(
    approval_function: str,  # noqa: F811 - the imported fixture
    open_page: Callable[[int, int], OpenedPage],
) -> None:
    from inboxflow import entry
    from inboxflow.routing import RouteDecision
    from inboxflow.start import start_email_trace

    rt = entry.runtime()
    email = sample("42")
    decision = RouteDecision("planner", None, "test", mailbox=email.mailbox)
    trace_id = start_email_trace(rt, email, decision).trace_id
    rt.bus.drain()  # type: ignore[attr-defined]

    approval, opened = _open(open_page, rt, trace_id, "add-vehicle")
    assert approval.kind == "agency_review"
    page = opened.page
    assert "Review the planned add_vehicle" in page.content()
    inputs = page.locator("textarea[name=inputs]")
    assert inputs.count() == 1
    assert json.loads(inputs.input_value())["vin"] == "JTDKB20U173012345"
    for value in ("approve", "edit", "reject"):
        assert page.locator(f"button[name=decision][value={value}]").count() == 1
    page.fill("[name=comment]", "VIN is incorrect")
    page.click("button[name=decision][value=reject]")
    page.wait_for_load_state()
    assert "Rejected" in page.content()
    assert opened.console_errors == []
    rt.bus.drain()  # type: ignore[attr-defined]
    state = rt.store.get_trace(trace_id).state  # type: ignore[union-attr]
    assert state["planned_tool_inputs"]["tool_name"] == "ask_customer"

    approval, opened = _open(open_page, rt, trace_id, "ask-customer")
    assert json.loads(opened.page.locator("textarea[name=inputs]").input_value())["fields"] == [
        "vin"
    ]
    opened.page.click("button[name=decision][value=approve]")
    opened.page.wait_for_load_state()
    assert "Approved" in opened.page.content()
    assert opened.console_errors == []
    rt.bus.drain()  # type: ignore[attr-defined]
    checkpoint = rt.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.pause["kind"] == "customer_reply"
    [question] = rt.ports.workspace.sent()
    assert question["to"] == "priya.shah@example.com" and "VIN" in question["body"]

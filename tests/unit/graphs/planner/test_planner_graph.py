"""The planner graph on the embedded default: the issue's three scenarios, a full quote to the
final summary, the review policy, the agency's edits, queued replies and quoting errors."""

from __future__ import annotations

import json

import pytest

from inboxflow.graphs.planner.settings import PlannerSettings
from tests.harness.mail_auth import gmail_pass
from tests.harness.planner import (
    AGENCY,
    BAD_VIN,
    VALID_VIN,
    approve_all,
    build,
    checkpoint,
    decide,
    pending,
    queue_reply,
    reply_email,
    resume_with_reply,
    sample,
    sent,
    start,
    state,
)
from tests.harness.planner import (
    quote as quote_of,
)

ANSWER = (
    f"Hi,\n\nMy driver's license is D4821937 (CA), licensed for 12 years, no accidents.\n"
    f"VIN: {VALID_VIN}\n\nJordan"
)


def _asked(runtime, trace_id):
    """Scenario 1 up to the question sent: the trace waits for the customer."""
    decide(runtime, trace_id, "approve")
    return checkpoint(runtime, trace_id)


def test_scenario_1_a_new_email_plans_a_question_the_agency_approves_then_waits(tmp_path):
    runtime = build(tmp_path)
    email = sample("41")
    trace_id = start(runtime, email)

    review = pending(runtime, trace_id)
    assert review.reviewers == [AGENCY]
    assert review.payload["tool"] == "ask_customer"
    fields = json.loads(review.payload["inputs"])["fields"]
    assert fields == ["license_number", "license_state", "years_licensed", "vin"]
    assert "every question to the customer is reviewed" in review.context["reasons"]
    before = state(runtime, trace_id)
    assert before["requires_agency_review"] is True
    assert before["planned_tool_inputs"]["tool_name"] == "ask_customer"
    assert sent(runtime, trace_id) == []  # nothing goes out before the agency approves

    waiting = _asked(runtime, trace_id)
    assert (waiting.status, waiting.pause["kind"]) == ("waiting", "customer_reply")
    assert waiting.pause["reviewers"] == []
    after = waiting.state
    assert after["awaiting_customer_reply"] is True
    assert after["planned_tool_inputs"] is None
    assert after["last_tool_outputs"]["status"] == "success"
    [question] = sent(runtime, trace_id)
    assert question["to"] == "jordan.rivera@example.com"
    assert question["thread_id"] == email.thread_id
    assert question["headers"]["In-Reply-To"] == f"<{email.message_id}>"
    assert question["subject"] == "Re: Car insurance quote"
    assert "Your driver's license number" in question["body"]
    assert "VIN" in question["body"] and "Hi Jordan," in question["body"]
    assert [m["role"] for m in after["messages"]] == ["customer", "tool", "agent"]


def test_scenario_2_the_agency_rejects_add_vehicle_the_planner_asks_for_the_vin(tmp_path):
    runtime = build(tmp_path)
    trace_id = start(runtime, sample("42"))
    review = pending(runtime, trace_id)
    assert review.payload["tool"] == "add_vehicle"  # opened and driver added without review
    assert state(runtime, trace_id)["quote_session"]["drivers"] == 1

    decide(runtime, trace_id, "reject", comment="VIN is incorrect")

    replanned = state(runtime, trace_id)
    assert replanned["human_feedback"] is None  # the planner replanned from it and cleared it
    plan = replanned["planned_tool_inputs"]
    assert plan["tool_name"] == "ask_customer" and plan["args"]["fields"] == ["vin"]
    assert replanned["customer_info"]["vin"] is None
    assert replanned["customer_info"]["rejected"] == {"vin": ["JTDKB20U173012345"]}
    again = pending(runtime, trace_id)
    assert again.payload["tool"] == "ask_customer"
    assert "replanned from the agency's feedback" in again.context["reasons"]
    assert state(runtime, trace_id)["quote_session"]["vehicles"] == 0

    decide(runtime, trace_id, "approve")
    [question] = sent(runtime, trace_id)
    assert "The vehicle identification number (VIN" in question["body"]
    assert "could not be verified" in question["body"]
    assert "license" not in question["body"]


def test_a_rejection_naming_nothing_the_customer_can_fix_goes_to_human_review(tmp_path):
    runtime = build(tmp_path)
    trace_id = start(runtime, sample("42"))
    decide(runtime, trace_id, "reject", comment="We do not insure this customer.")
    ended = checkpoint(runtime, trace_id)
    assert ended.status == "needs_review"
    assert "human review requested" in ended.error and "We do not insure" in ended.error
    notices = [doc for _, doc in runtime.store.list("outbox") if doc.get("to") == AGENCY]
    assert any(n["subject"].startswith("Quote needs a human") for n in notices)


def test_scenario_3_the_customer_replies_in_the_thread_info_extracted_next_tool(tmp_path):
    runtime = build(tmp_path)
    email = sample("41")
    trace_id = start(runtime, email)
    _asked(runtime, trace_id)

    reply = reply_email(email, ANSWER, "g-reply-1")
    resume_with_reply(runtime, trace_id, reply)

    after = state(runtime, trace_id)
    assert after["awaiting_customer_reply"] is False
    assert after["seen_reply_ids"] == ["g-reply-1"]
    customer = [m for m in after["messages"] if m["role"] == "customer"]
    assert len(customer) == 2
    assert "D4821937" in customer[1]["content"]
    assert "1HGCM82633A004352" not in customer[1]["content"]  # the quoted text is stripped
    info = after["customer_info"]
    assert (info["license_number"], info["license_state"]) == ("D4821937", "CA")
    assert (info["years_licensed"], info["vin"]) == (12, VALID_VIN)
    assert info["vehicle_make"] == "Honda" and info["date_of_birth"] == "1988-03-14"
    # the next tools ran: the quote is open with its driver; the vehicle waits for the agency
    assert after["quote_session"]["drivers"] == 1
    review = pending(runtime, trace_id)
    assert review.payload["tool"] == "add_vehicle"
    assert json.loads(review.payload["inputs"])["vin"] == VALID_VIN


def test_a_full_quote_from_the_first_email_to_the_final_summary(tmp_path):
    runtime = build(tmp_path)
    email = sample("41")
    trace_id = start(runtime, email)
    _asked(runtime, trace_id)
    resume_with_reply(runtime, trace_id, reply_email(email, ANSWER, "g-reply-1"))
    assert approve_all(runtime, trace_id) == ["add_vehicle", "get_rate", "prepare_final_summary"]

    done = checkpoint(runtime, trace_id)
    assert done.status == "done", done.error
    quote = done.state["quote_session"]
    assert quote["rate"]["annual_premium_cents"] > 0
    emails = sent(runtime, trace_id)
    assert len(emails) == 2  # the fake clock stands still: find them by what they say
    [question] = [e for e in emails if "we still need" in e["body"]]
    [summary] = [e for e in emails if "Premium:" in e["body"]]
    assert question["headers"]["In-Reply-To"] == f"<{email.message_id}>"
    assert summary["thread_id"] == email.thread_id
    assert summary["headers"]["In-Reply-To"] == "<g-reply-1@example.com>"
    assert quote["quote_id"] in summary["body"]
    premium = quote["rate"]["annual_premium_cents"] / 100
    assert f"${premium:,.2f} a year" in summary["body"]
    assert "2019 Honda Civic" in summary["body"]
    stored = quote_of(runtime, quote["quote_id"])
    assert (len(stored.drivers), len(stored.vehicles)) == (1, 1)
    assert stored.rate is not None
    assert stored.rate.annual_premium_cents == quote["rate"]["annual_premium_cents"]


def test_ask_customer_and_get_rate_are_reviewed_whatever_the_settings_say(tmp_path):
    runtime = build(tmp_path, settings=PlannerSettings(reviewers=[AGENCY], review_tools=[]))
    email = sample("42")
    authenticated = {**email.headers, "authentication-results": gmail_pass(email.sender.address)}
    trace_id = start(runtime, email.model_copy(update={"headers": authenticated}))
    # without review_tools, only the binding rate stops for the agency (the customer's
    # address is authenticated: the summary may go to it on its own)
    review = pending(runtime, trace_id)
    assert review.payload["tool"] == "get_rate"
    assert review.context["reasons"][0] == "every binding rate is reviewed"
    assert approve_all(runtime, trace_id) == ["get_rate"]
    assert checkpoint(runtime, trace_id).status == "done"
    assert len(sent(runtime, trace_id)) == 1

    other = start(runtime, sample("41"))
    assert pending(runtime, other).payload["tool"] == "ask_customer"


def test_the_agency_edits_the_inputs_the_planner_replans_with_them(tmp_path):
    runtime = build(tmp_path)
    trace_id = start(runtime, sample("42"))
    review = pending(runtime, trace_id)
    inputs = json.loads(review.payload["inputs"])
    decide(runtime, trace_id, "edit", edit={"inputs": "not json"})
    again = pending(runtime, trace_id)  # an unreadable edit: the same plan, asked again
    assert again.payload == review.payload and again.approval_id != review.approval_id
    assert any("not valid JSON" in reason for reason in again.context["reasons"])

    edited = json.dumps({**inputs, "annual_mileage": 4000})
    decide(runtime, trace_id, "edit", edit={"inputs": edited}, comment="she drives less")
    replanned = pending(runtime, trace_id)
    assert replanned.payload["tool"] == "add_vehicle"
    assert json.loads(replanned.payload["inputs"])["annual_mileage"] == 4000
    decide(runtime, trace_id, "approve")
    quote_id = state(runtime, trace_id)["quote_session"]["quote_id"]
    assert quote_of(runtime, quote_id).vehicles[0].annual_mileage == 4000


def test_approve_runs_exactly_the_approved_inputs(tmp_path):
    runtime = build(tmp_path)
    trace_id = start(runtime, sample("42"))
    review = pending(runtime, trace_id)
    service = runtime.ports.approvals
    # an approval whose hash is not that of the plan in the state is refused, nothing runs
    runtime.resume(
        trace_id,
        {
            "decision": "approve",
            "reviewer": AGENCY,
            "approval_id": review.approval_id,
            "payload": {"tool": "add_vehicle", "inputs": "{}"},
            "payload_hash": "0" * 64,
        },
    )
    runtime.bus.drain()
    assert checkpoint(runtime, trace_id).status == "waiting"
    assert state(runtime, trace_id)["quote_session"]["vehicles"] == 0
    service.decisions.decide_as(review.approval_id, AGENCY, "approve")
    runtime.bus.drain()
    assert state(runtime, trace_id)["quote_session"]["vehicles"] == 1


def test_a_reply_queued_while_the_trace_runs_is_seen_by_the_next_planning_step(tmp_path):
    runtime = build(tmp_path)
    email = sample("41")
    trace_id = start(runtime, email)  # waiting for the agency on the question
    reply = reply_email(email, ANSWER, "g-early")
    queue_reply(runtime, trace_id, reply)
    decide(runtime, trace_id, "approve")

    after = state(runtime, trace_id)
    assert after["seen_reply_ids"] == ["g-early"]
    assert sum(m["role"] == "customer" for m in after["messages"]) == 2
    assert after["customer_info"]["vin"] == VALID_VIN
    assert pending(runtime, trace_id).payload["tool"] == "add_vehicle"  # it did not wait
    # taken once: the next planning steps do not take it again
    approve_all(runtime, trace_id)
    final = state(runtime, trace_id)
    assert sum(m["role"] == "customer" for m in final["messages"]) == 2
    assert checkpoint(runtime, trace_id).status == "done"


def _with_vin(email, vin):
    return email.model_copy(update={"body_text": email.body_text.replace("JTDKB20U173012345", vin)})


def test_an_invalid_vin_from_the_quoting_service_makes_the_planner_ask_for_it(tmp_path):
    runtime = build(tmp_path)
    trace_id = start(runtime, sample("42"))  # add_vehicle waits for the agency
    inputs = json.loads(pending(runtime, trace_id).payload["inputs"])
    # the agency mistypes the VIN in its edit: the quoting service refuses it
    decide(runtime, trace_id, "edit", edit={"inputs": json.dumps({**inputs, "vin": BAD_VIN})})
    decide(runtime, trace_id, "approve")

    after = state(runtime, trace_id)
    last = after["last_tool_outputs"]
    assert (last["tool"], last["status"], last["code"], last["field"]) == (
        "add_vehicle",
        "error",
        "invalid_vin",
        "vin",
    )
    plan = pending(runtime, trace_id)
    assert plan.payload["tool"] == "ask_customer"
    assert json.loads(plan.payload["inputs"])["fields"] == ["vin"]


def test_a_vin_failing_its_check_digit_is_asked_for_again_and_never_sent_to_the_service(
    tmp_path,
):
    runtime = build(tmp_path)
    trace_id = start(runtime, _with_vin(sample("42"), BAD_VIN))

    after = state(runtime, trace_id)
    assert after["quote_session"] is None  # nothing was opened with it
    assert after["customer_info"]["vin"] is None
    assert after["customer_info"]["rejected"] == {"vin": [BAD_VIN]}
    plan = pending(runtime, trace_id)
    assert plan.payload["tool"] == "ask_customer"
    asked = json.loads(plan.payload["inputs"])
    assert asked["fields"] == ["vin"]
    assert BAD_VIN in asked["reason"] and "check digit" in asked["reason"]


def test_settings_refuse_a_reminder_after_giving_up_and_unknown_tools():
    with pytest.raises(ValueError, match="must be later than"):
        PlannerSettings(reminder_after_days=5, give_up_after_days=5)
    with pytest.raises(ValueError, match="unknown tools"):
        PlannerSettings(review_tools=["send_money"])


def test_a_demo_choice_must_be_one_of_the_kinds_choices():
    from inboxflow.engine.pause_kinds import PauseKind
    from inboxflow.graphs.planner.pauses import AGENCY_REVIEW

    assert AGENCY_REVIEW.demo_choice == "approve"
    with pytest.raises(ValueError, match="demo_choice 'accept' is not a choice"):
        PauseKind("k", "K", AGENCY_REVIEW.choices, demo_choice="accept")


def test_a_correction_queued_during_a_review_is_read_at_the_next_planning_step(tmp_path):
    runtime = build(tmp_path)
    email = sample("42")
    trace_id = start(runtime, email)  # waiting for the agency on add_vehicle
    correction = reply_email(email, "Correction: I drive about 5,000 miles a year.", "g-fix")
    queue_reply(runtime, trace_id, correction)
    decide(runtime, trace_id, "approve")  # tools -> planner, which reads the queue

    after = state(runtime, trace_id)
    assert pending(runtime, trace_id).payload["tool"] == "get_rate"
    assert after["seen_reply_ids"] == ["g-fix"]
    assert after["messages"][-1]["content"].startswith("Correction")
    assert after["customer_info"]["annual_mileage"] == 5000
    steps = [log.step_name for log in runtime.store.step_logs(trace_id)]
    assert "wait_customer" not in steps


def test_tools_refuses_a_plan_that_still_waits_for_the_agency(tmp_path):
    from inboxflow.envelope import Envelope
    from inboxflow.naming import trace_path

    runtime = build(tmp_path)
    trace_id = start(runtime, sample("42"))  # add_vehicle waits for the agency
    waiting = checkpoint(runtime, trace_id)
    assert waiting.state["requires_agency_review"] is True
    # a routing bug (or a forged envelope) sends the unreviewed plan straight to tools
    forged = {**runtime.store.get(trace_path(trace_id)), "status": "running", "node": "tools"}
    runtime.store.set(trace_path(trace_id), {**forged, "pause": None})
    runtime.bus.publish(
        [Envelope(trace_id=trace_id, graph="planner", node="tools", step=waiting.step, sent_at=0)]
    )
    runtime.bus.drain()
    ended = checkpoint(runtime, trace_id)
    assert ended.status == "needs_review"
    assert "waits for the agency's review" in ended.error
    assert state(runtime, trace_id)["quote_session"]["vehicles"] == 0


def test_a_planner_going_round_in_circles_is_stopped_for_human_review(tmp_path):
    runtime = build(tmp_path, settings=PlannerSettings(reviewers=[AGENCY], max_plans=5))
    trace_id = start(runtime, sample("42"))
    for _ in range(3):  # add_vehicle, then the question about the VIN, twice
        decide(runtime, trace_id, "reject", comment="VIN is incorrect")
    ended = checkpoint(runtime, trace_id)
    assert ended.status == "needs_review"
    assert "5 planning steps without finishing" in ended.error


def test_a_corrected_vin_already_in_the_queue_is_used_without_asking(tmp_path):
    runtime = build(tmp_path)
    email = sample("42")
    trace_id = start(runtime, _with_vin(email, BAD_VIN))  # the question about the VIN waits
    correction = reply_email(email, f"Sorry, wrong VIN. The right one: VIN {VALID_VIN}", "g-fix")
    queue_reply(runtime, trace_id, correction)
    decide(runtime, trace_id, "approve")  # the question goes out; the next step reads the queue

    assert state(runtime, trace_id)["customer_info"]["vin"] == VALID_VIN
    again = pending(runtime, trace_id)
    assert again.payload["tool"] == "add_vehicle"
    assert json.loads(again.payload["inputs"])["vin"] == VALID_VIN
    assert state(runtime, trace_id)["customer_info"]["rejected"] == {"vin": [BAD_VIN]}
    decide(runtime, trace_id, "approve")
    quote_id = state(runtime, trace_id)["quote_session"]["quote_id"]
    assert [v.vin for v in quote_of(runtime, quote_id).vehicles] == [VALID_VIN]

"""The planner under waits, duplicates and crashes: the reminder and the give-up of a customer
wait, replies that arrive twice or while the trace runs, crashes after an email or a quoting
call (each exactly once), transient quoting failures, and a reply through Gmail ingestion."""

from __future__ import annotations

from typing import Any

import pytest

from inboxflow.adapters.embedded_quoting import EmbeddedQuoting
from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.clock import FakeClock
from inboxflow.graphs.planner.quoting import QUOTING, QuotingError
from inboxflow.graphs.planner.settings import PlannerSettings
from tests.harness.pipeline import StormBus
from tests.harness.planner import (
    AGENCY,
    DAY,
    VALID_VIN,
    Mailbox,
    approve_all,
    build,
    checkpoint,
    decide,
    fire_due_deadlines,
    pending,
    queue_reply,
    quote,
    reply_email,
    resume_with_reply,
    sample,
    sent,
    start,
    state,
)

ANSWER = (
    "Hi,\n\nMy driver's license is D4821937 (CA), licensed for 12 years, no accidents.\n"
    f"VIN: {VALID_VIN}\n\nJordan"
)


def _waiting(tmp_path, **kw):
    runtime = build(tmp_path, **kw)
    email = sample("41")
    trace_id = start(runtime, email)
    decide(runtime, trace_id, "approve")
    assert checkpoint(runtime, trace_id).pause["kind"] == "customer_reply"
    return runtime, email, trace_id


def _effects(runtime, trace_id, name):
    return [
        doc
        for doc_id, doc in runtime.store.list("effects")
        if doc_id.startswith(f"{trace_id}:") and doc_id.endswith(f":{name}")
    ]


def test_a_silent_customer_is_reminded_once_then_the_trace_needs_review(tmp_path):
    settings = PlannerSettings(reviewers=[AGENCY], reminder_after_days=2, give_up_after_days=5)
    runtime, email, trace_id = _waiting(tmp_path, settings=settings)
    clock: FakeClock = runtime.clock  # type: ignore[assignment]

    clock.advance(2 * DAY - 60)
    fire_due_deadlines(runtime)
    assert len(sent(runtime, trace_id)) == 1  # not yet
    clock.advance(120)
    assert fire_due_deadlines(runtime) >= 1
    [reminder] = [e for e in sent(runtime, trace_id) if "friendly reminder" in e["body"]]
    assert reminder["thread_id"] == email.thread_id
    assert "friendly reminder" in reminder["body"] and "VIN" in reminder["body"]
    again = checkpoint(runtime, trace_id)
    assert (again.status, again.pause["kind"]) == ("waiting", "customer_reply")
    assert again.pause["deadline"] == pytest.approx(clock.now() + 3 * DAY, abs=120)
    assert again.state["agent_scratchpad"]["reminders_sent"] == 1

    clock.advance(3 * DAY - 300)
    fire_due_deadlines(runtime)
    assert checkpoint(runtime, trace_id).status == "waiting"
    clock.advance(600)
    assert fire_due_deadlines(runtime) == 1
    ended = checkpoint(runtime, trace_id)
    assert ended.status == "needs_review"
    assert "got no decision within 71.9" in ended.error  # the 5 days, less the 2 reminded at
    assert len(sent(runtime, trace_id)) == 2  # one question, one reminder


def test_a_reply_before_the_reminder_cancels_it(tmp_path):
    runtime, email, trace_id = _waiting(tmp_path)
    clock: FakeClock = runtime.clock  # type: ignore[assignment]
    first_wait = checkpoint(runtime, trace_id).pause["approval_id"]
    resume_with_reply(runtime, trace_id, reply_email(email, ANSWER, "g-1"))
    closed = runtime.ports.approvals.get(first_wait)
    assert (closed.status, closed.decision, closed.decided_by) == (
        "decided",
        "reply",
        "jordan.rivera@example.com",
    )
    clock.advance(30 * DAY)
    fire_due_deadlines(runtime)  # the first wait's deadline (and the agency's) fire: nothing
    assert [d["body"] for d in sent(runtime, trace_id) if "reminder" in d["body"]] == []
    assert runtime.store.list("failures") == []


def test_the_same_reply_delivered_twice_resumes_once(tmp_path):
    runtime, email, trace_id = _waiting(tmp_path)
    reply = reply_email(email, ANSWER, "g-1")
    decision = {
        "decision": "reply",
        "payload": {"email": reply.model_dump(mode="json")},
        "reviewer": reply.sender.address,
    }
    runtime.resume(trace_id, decision)
    runtime.resume(trace_id, decision)  # the same step resumed twice before either ran
    runtime.bus.drain()
    after = state(runtime, trace_id)
    assert after["seen_reply_ids"] == ["g-1"]
    assert sum(m["role"] == "customer" for m in after["messages"]) == 2
    logs = [log.step_name for log in runtime.store.step_logs(trace_id)]
    assert logs.count("wait_customer") == 2  # the pause, then one resumed run
    assert pending(runtime, trace_id).payload["tool"] == "add_vehicle"


def test_a_reply_already_taken_from_the_queue_resumes_nothing_the_trace_waits_on(tmp_path):
    runtime, email, trace_id = _waiting(tmp_path)
    queued = reply_email(email, "Sorry, I will look for the VIN tonight.", "g-early")
    queue_reply(runtime, trace_id, queued)
    resume_with_reply(runtime, trace_id, queued)  # taken from the queue and from the resume
    after = state(runtime, trace_id)
    assert after["seen_reply_ids"] == ["g-early"]
    assert sum(m["role"] == "customer" for m in after["messages"]) == 2
    # nothing new in it: the planner asks again (reviewed), the reply is counted once
    assert pending(runtime, trace_id).payload["tool"] == "ask_customer"

    # the same reply once more, while the trace waits for the customer again
    decide(runtime, trace_id, "approve")
    waiting = checkpoint(runtime, trace_id)
    assert waiting.pause["kind"] == "customer_reply"
    resume_with_reply(runtime, trace_id, queued)
    again = checkpoint(runtime, trace_id)
    assert (again.status, again.pause["kind"]) == ("waiting", "customer_reply")
    assert again.step == waiting.step + 1  # it resumed, saw the reply was taken, waits on
    assert again.state["messages"] == waiting.state["messages"]
    assert again.pause["deadline"] == pytest.approx(waiting.pause["deadline"], abs=1)


def test_duplicate_delivery_everywhere_writes_each_email_and_quote_change_once(tmp_path):
    runtime, email, trace_id = _waiting(
        tmp_path, bus=StormBus(clock=FakeClock(), copies=3, shuffle_seed=11)
    )
    resume_with_reply(runtime, trace_id, reply_email(email, ANSWER, "g-1"))
    approve_all(runtime, trace_id)
    done = checkpoint(runtime, trace_id)
    assert done.status == "done", done.error
    assert len(sent(runtime, trace_id)) == 2  # the question and the summary
    held = quote(runtime, done.state["quote_session"]["quote_id"])
    assert (len(held.drivers), len(held.vehicles)) == (1, 1)
    assert len(runtime.store.list("quotes")) == 1
    assert runtime.bus.deliveries >= 2 * len(runtime.bus.seen)  # duplicates were delivered


@pytest.mark.parametrize("effect", ["ask_customer", "final_summary", "add_vehicle", "get_rate"])
def test_a_crash_after_the_call_does_it_once(tmp_path, effect):
    runtime = build(tmp_path)
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where == f"after_effect:{effect}" and not crashes:
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    email = sample("41")
    trace_id = start(runtime, email)
    decide(runtime, trace_id, "approve")
    resume_with_reply(runtime, trace_id, reply_email(email, ANSWER, "g-1"))
    approve_all(runtime, trace_id)
    done = checkpoint(runtime, trace_id)
    assert crashes and done.status == "done", done.error
    assert len(sent(runtime, trace_id)) == 2
    held = quote(runtime, done.state["quote_session"]["quote_id"])
    assert (len(held.drivers), len(held.vehicles)) == (1, 1)
    (entry,) = _effects(runtime, trace_id, effect)
    assert entry["status"] == "done"
    if effect in ("ask_customer", "final_summary"):  # found again by its trace key, not re-sent
        assert (entry["reconciled"], entry["attempts"]) == (True, 1)
    else:  # keyed: no entry before the call; the same idempotency key returns the first result
        assert (entry["reconciled"], entry["attempts"]) == (False, 1)


class FlakyQuoting(EmbeddedQuoting):
    """The embedded service, unavailable for the first ``failures`` calls of ``method``."""

    def __init__(self, *args: Any, method: str, failures: int) -> None:
        super().__init__(*args)
        self.method, self.failures, self.calls = method, failures, 0

    def __getattribute__(self, name: str) -> Any:
        attribute = super().__getattribute__(name)
        if name != super().__getattribute__("method"):
            return attribute

        def flaky(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls <= self.failures:
                raise QuotingError("unavailable", "the quoting service timed out")
            return attribute(*args, **kwargs)

        return flaky


def test_a_transient_quoting_failure_is_retried(tmp_path):
    runtime = build(tmp_path)
    runtime.ports.set_service(
        QUOTING, FlakyQuoting(runtime.store, runtime.clock, method="add_driver", failures=2)
    )
    trace_id = start(runtime, sample("42"))
    assert pending(runtime, trace_id).payload["tool"] == "add_vehicle"
    after = state(runtime, trace_id)
    assert after["quote_session"]["drivers"] == 1
    assert after["agent_scratchpad"]["failures"]["add_driver"] == 0
    tools = [call["name"] for log in runtime.store.step_logs(trace_id) for call in log.tool_calls]
    assert tools.count("add_driver") == 3


def test_a_quoting_service_that_stays_down_goes_to_human_review(tmp_path):
    runtime = build(tmp_path)
    runtime.ports.set_service(
        QUOTING, FlakyQuoting(runtime.store, runtime.clock, method="add_driver", failures=99)
    )
    trace_id = start(runtime, sample("42"))
    ended = checkpoint(runtime, trace_id)
    assert ended.status == "needs_review"
    assert "add_driver failed 3 times" in ended.error
    assert runtime.ports.service(QUOTING).calls == 3
    notices = [doc for _, doc in runtime.store.list("outbox") if doc.get("to") == AGENCY]
    assert len(notices) == 1


def test_the_customer_replies_through_gmail_ingestion(tmp_path):
    runtime = build(tmp_path)
    mailbox = Mailbox(runtime)
    email = sample("41")
    first_id, report = mailbox.receive(email)
    (trace_id,) = report.started
    assert checkpoint(runtime, trace_id).graph == "planner"  # routed by inboxflow.yaml
    decide(runtime, trace_id, "approve")
    assert checkpoint(runtime, trace_id).pause["kind"] == "customer_reply"

    reply = reply_email(email, ANSWER, "ignored", message_id="reply-1@example.com")
    reply_id, report = mailbox.receive(reply, thread_id=first_id)
    assert report.resumed == [trace_id] and report.started == []
    after = state(runtime, trace_id)
    assert after["seen_reply_ids"] == [first_id, reply_id]
    assert after["customer_info"]["license_number"] == "D4821937"
    assert pending(runtime, trace_id).payload["tool"] == "add_vehicle"
    # Gmail notifies again for the same message: the claim keeps it from resuming twice
    report = mailbox.ingest()
    assert report.resumed == [] and report.started == []
    assert state(runtime, trace_id)["seen_reply_ids"] == [first_id, reply_id]


def test_a_reply_queued_while_the_planner_decides_to_wait_is_not_left_in_the_queue(tmp_path):
    runtime = build(tmp_path)
    email = sample("41")
    trace_id = start(runtime, email)
    reply = reply_email(email, ANSWER, "g-race")

    def fault(where: str) -> None:  # ingest queues it as the planner commits "wait"
        if where == "before_commit:planner" and state(runtime, trace_id)["last_tool_outputs"]:
            queue_reply(runtime, trace_id, reply)

    runtime.fault = fault
    decide(runtime, trace_id, "approve")
    after = state(runtime, trace_id)
    assert after["seen_reply_ids"] == ["g-race"]
    assert pending(runtime, trace_id).payload["tool"] == "add_vehicle"  # it did not wait on


class DownNotifier:
    """A notifier whose mail server stays down."""

    def send(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise ConnectionError("smtp down")

    def find(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_human_review_ends_the_trace_even_when_the_agency_cannot_be_told(tmp_path):
    runtime = build(tmp_path)
    runtime.ports.approvals.notifier = DownNotifier()
    trace_id = start(runtime, sample("42"))
    decide(runtime, trace_id, "reject", comment="We do not insure this customer.")
    ended = checkpoint(runtime, trace_id)
    assert ended.status == "needs_review"
    assert "We do not insure" in ended.error and "could not be told: ConnectionError" in ended.error

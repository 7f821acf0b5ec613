"""A customer's reply in the thread of a finished planner trace (after the quote's summary):
a new planner trace that carries the thread's context and hands it to the agency, through
Gmail ingestion."""

from __future__ import annotations

from datetime import UTC, datetime

from inboxflow.threads import ThreadResolver
from tests.harness.planner import (
    AGENCY,
    MAILBOX,
    VALID_VIN,
    Mailbox,
    approve_all,
    build,
    checkpoint,
    reply_email,
    sample,
    sent,
    state,
)

ANSWER = (
    f"Here you go: license D4821937 (CA), licensed for 12 years, no accidents. VIN {VALID_VIN}, "
    "about 9000 miles a year."
)


def _finished_quote(mailbox: Mailbox) -> tuple[str, str, object]:
    """Sample 41 through Gmail ingestion to its summary: the trace, its Gmail thread, the email."""
    email = sample("41")
    thread, report = mailbox.receive(email)
    (trace_id,) = report.started
    assert approve_all(mailbox.runtime, trace_id) == ["ask_customer"]
    answer = reply_email(email, ANSWER, "unused", message_id="answer-1@example.com")
    _, report = mailbox.receive(answer, thread_id=thread)
    assert report.resumed == [trace_id]
    assert approve_all(mailbox.runtime, trace_id) == [
        "add_vehicle",
        "get_rate",
        "prepare_final_summary",
    ]
    assert checkpoint(mailbox.runtime, trace_id).status == "done"
    return trace_id, thread, email


def test_a_reply_after_the_summary_starts_a_planner_trace_with_the_context_for_the_agency(
    tmp_path,
):
    runtime = build(tmp_path)
    mailbox = Mailbox(runtime)
    first, thread, email = _finished_quote(mailbox)
    before = checkpoint(runtime, first)
    sent_before = len(sent(runtime, first))

    followup = reply_email(
        email,
        "Thanks! Can I add my wife as a second driver?",
        "unused",
        message_id="followup-1@example.com",
        at=datetime(2027, 1, 25, 9, 0, tzinfo=UTC),
    )
    gmail_id, report = mailbox.receive(followup, thread_id=thread)
    (second,) = report.started
    assert second != first and report.resumed == [] and report.queued == []

    ended = checkpoint(runtime, second)
    assert ended.graph == "planner" and ended.status == "needs_review"
    carried = state(runtime, second)
    old = before.state
    assert carried["quote_session"] == old["quote_session"]
    assert carried["customer_info"] == old["customer_info"]
    contents = [m["content"] for m in carried["messages"]]
    assert contents[: len(old["messages"])] == [m["content"] for m in old["messages"]]
    assert contents[-1] == "Thanks! Can I add my wife as a second driver?"
    assert carried["seen_reply_ids"] == [*old["seen_reply_ids"], gmail_id]
    assert f"the customer replied in the thread after trace {first} ended (done)" in (
        ended.error or ""
    )
    assert sent(runtime, second) == []  # nothing goes to the customer by itself
    notices = [doc for _, doc in runtime.store.list("outbox") if doc["to"] == AGENCY]
    (notice,) = [n for n in notices if "needs a human" in n["subject"]]
    assert "Can I add my wife" in notice["text"] and first in notice["text"]

    assert checkpoint(runtime, first).model_dump() == before.model_dump()  # the old one stays
    assert len(sent(runtime, first)) == sent_before
    assert ThreadResolver(runtime.store, runtime.store).trace_of(MAILBOX, thread) == second

    again = reply_email(email, "Hello?", "unused", message_id="followup-2@example.com")
    _, report = mailbox.receive(again, thread_id=thread)
    assert len(report.started) == 1 and report.started[0] not in (first, second)
    third = checkpoint(runtime, report.started[0])
    assert third.status == "needs_review"
    assert f"after trace {second} ended (needs_review)" in (third.error or "")


def test_a_new_thread_of_the_same_customer_is_a_new_quote(tmp_path):
    runtime = build(tmp_path)
    mailbox = Mailbox(runtime)
    first, _, _ = _finished_quote(mailbox)
    fresh = sample("42")
    _, report = mailbox.receive(fresh)
    (trace_id,) = report.started
    assert trace_id != first
    assert checkpoint(runtime, trace_id).status == "waiting"  # the planner works on it
    assert (
        state(runtime, trace_id)["quote_session"]["quote_id"]
        != state(runtime, first)["quote_session"]["quote_id"]
    )


CUSTOMER = "customer@example.org"


def test_the_thread_knows_its_earlier_trace_whether_or_not_the_new_one_is_recorded(tmp_path):
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore

    store = SqliteCheckpointStore(tmp_path / "threads.db")
    threads = ThreadResolver(store, store)
    customer = {"customer@example.org"}
    assert threads.trace_before(MAILBOX, "thread-1", "b", CUSTOMER) is None  # a new thread
    threads.record(MAILBOX, "thread-1", "a", 1.0, customer)
    assert threads.trace_before(MAILBOX, "thread-1", "a", CUSTOMER) is None
    # b runs before ingest records it
    assert threads.trace_before(MAILBOX, "thread-1", "b", CUSTOMER) == "a"
    threads.record(MAILBOX, "thread-1", "b", 2.0, customer)
    threads.record(MAILBOX, "thread-1", "b", 3.0, customer)  # a redelivery records it again
    assert threads.trace_before(MAILBOX, "thread-1", "b", "Customer@Example.ORG") == "a"
    # a stranger naming the thread is not in it: no earlier trace of theirs
    assert threads.trace_before(MAILBOX, "thread-1", "b", "mallory@evil.example") is None
    assert threads.trace_before(MAILBOX, "", "b", CUSTOMER) is None
    store.close()

"""Customer replies that arrive while a ``queues_thread_replies`` trace is busy are queued for it
(``trace_replies``), once each, instead of starting a trace (SQLite and the Firestore emulator)."""

from __future__ import annotations

from typing import Any

import pytest

from inboxflow.ingest.claims import message_trace_id
from inboxflow.mail import Email
from inboxflow.reply_queue import ReplyQueue, reply_path
from tests.harness.thread_chat import CUSTOMER, MAILBOX, ChatWorld, eml


def _queued(world: ChatWorld, trace_id: str) -> list[dict[str, Any]]:
    return world.store.list(
        "trace_replies", where=[("trace_id", "==", trace_id)], order_by="received_at"
    )  # type: ignore[return-value]


def test_a_reply_while_the_trace_runs_or_waits_on_a_reviewer_is_queued_not_started(
    chat: ChatWorld,
) -> None:
    trace_id, thread = chat.start()
    assert chat.trace(trace_id).status == "running"  # the bus has not run the first node yet
    first, _ = chat.deliver(eml(2, body="My VIN is 1HGCM82633A004352."), thread_id=thread)
    report = chat.notify()
    assert report.queued == [trace_id] and report.started == [] and report.resumed == []

    chat.bus.drain()
    checkpoint = chat.trace(trace_id)
    assert checkpoint.status == "waiting" and checkpoint.pause["kind"] == "check_plan"  # type: ignore[index]
    second, _ = chat.deliver(eml(3, body="Also, the car is a 2020."), thread_id=thread)
    assert chat.notify().queued == [trace_id]

    rows = _queued(chat, trace_id)
    assert [doc_id for doc_id, _ in rows] == [f"{trace_id}:{first}", f"{trace_id}:{second}"]
    doc = rows[0][1]
    assert doc["trace_id"] == trace_id and doc["gmail_id"] == first
    assert doc["email"]["body_text"].startswith("My VIN is")
    assert doc["email"]["sender"]["address"] == "dana@example.com"
    assert isinstance(doc["received_at"], float) and doc["received_at"] < rows[1][1]["received_at"]
    assert chat.claim(first)["state"] == "queued" and chat.claim(first)["trace_id"] == trace_id
    assert chat.traces() == [trace_id]  # no trace started for the replies
    assert [d["gmail_id"] for d in ReplyQueue(chat.store, chat.store, {}).pending(trace_id)] == [
        first,
        second,
    ]


def test_a_reply_to_a_trace_waiting_for_the_customer_resumes_it_and_a_done_one_starts_anew(
    chat: ChatWorld,
) -> None:
    trace_id, thread = chat.waiting_for_customer()
    assert (
        ReplyQueue(chat.store, chat.store, chat.runtime.graphs).busy_trace(MAILBOX, thread) is None
    )

    reply, _ = chat.deliver(eml(2, body="The VIN is 1HGCM82633A004352."), thread_id=thread)
    report = chat.notify()
    assert report.resumed == [trace_id] and report.queued == []
    chat.bus.drain()
    assert chat.trace(trace_id).status == "done"
    assert chat.trace(trace_id).state["reply"]["gmail_id"] == reply
    assert _queued(chat, trace_id) == []

    late, _ = chat.deliver(eml(3), thread_id=thread)
    report = chat.notify()
    assert report.queued == [] and report.started == [message_trace_id(MAILBOX, late)]


def test_a_redelivered_notification_after_a_crash_queues_the_reply_once(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id, thread = chat.start()
    reply, history_id = chat.deliver(eml(2), thread_id=thread)
    real_finish = chat.ingestor.claims.finish
    crashes = []

    def crash_once(*args: Any, **kwargs: Any) -> None:
        if not crashes:
            crashes.append(args)
            raise RuntimeError("the function died after queuing the reply")
        real_finish(*args, **kwargs)

    monkeypatch.setattr(chat.ingestor.claims, "finish", crash_once)
    with pytest.raises(RuntimeError):
        chat.notify(history_id)
    assert len(_queued(chat, trace_id)) == 1
    report = chat.notify(history_id)  # Pub/Sub redelivers: the claim is taken over
    assert report.queued == [trace_id] and report.repaired == 1
    assert chat.notify(history_id).outcome == "stale"  # and once more, after the cursor moved
    assert [doc["gmail_id"] for _, doc in _queued(chat, trace_id)] == [reply]
    assert chat.claim(reply)["state"] == "queued"
    assert chat.store.list("failures") == []  # the redelivery is no refusal


def test_queueing_is_create_only(chat: ChatWorld) -> None:
    trace_id, thread = chat.start()
    reply, _ = chat.deliver(eml(2), thread_id=thread)
    chat.notify()
    doc = chat.store.get(reply_path(trace_id, reply))
    assert doc is not None
    again = Email.model_validate(doc["email"])
    queue = ReplyQueue(chat.store, chat.store, chat.runtime.graphs)
    assert queue.queue(trace_id, again, received_at=1.0, now=2.0) is False
    assert chat.store.get(reply_path(trace_id, reply)) == doc


def test_a_trace_that_pauses_for_the_customer_while_the_reply_is_queued_is_resumed(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planner read the queue, then paused for the customer, just before the reply was queued:
    the queued reply resumes the wait rather than sit unread until the deadline."""
    trace_id, thread = chat.start()
    chat.bus.drain()
    approval = chat.pending_approval(trace_id)
    real_queue = chat.ingestor.replies.queue

    def queue_late(*args: Any, **kwargs: Any) -> bool:
        chat.approvals.decisions.decide_as(approval.approval_id, "agent@agency.test", "approve")
        chat.bus.drain()  # the trace now waits on customer_reply
        return real_queue(*args, **kwargs)

    monkeypatch.setattr(chat.ingestor.replies, "queue", queue_late)
    reply, _ = chat.deliver(eml(2, body="VIN 1HGCM82633A004352"), thread_id=thread)
    report = chat.notify()
    assert report.queued == [trace_id]
    chat.bus.drain()
    done = chat.trace(trace_id)
    assert done.status == "done" and done.state["reply"]["gmail_id"] == reply
    assert [doc["gmail_id"] for _, doc in _queued(chat, trace_id)] == [reply]


def test_the_sender_of_a_queued_reply_is_kept(chat: ChatWorld) -> None:
    _, thread = chat.start()
    reply, _ = chat.deliver(eml(2, sender=CUSTOMER), thread_id=thread)
    chat.notify()
    claim = chat.claim(reply)
    assert claim["sender"] == "dana@example.com" and claim["action"] == "queue"


def test_the_queue_query_has_its_firestore_index_and_replies_expire(chat: ChatWorld) -> None:
    from inboxflow.dev.infra import export as infra_export

    index = infra_export.composite_index_for(
        "trace_replies", [("trace_id", "==", "t")], order_by="received_at"
    )
    assert index is not None and index["collection"] == "trace_replies"
    assert {"trace_replies", "review_mails"} <= set(infra_export.TTL_COLLECTIONS)
    trace_id, thread = chat.start()
    reply, _ = chat.deliver(eml(2), thread_id=thread)
    chat.notify()
    doc = chat.store.get(reply_path(trace_id, reply))
    assert doc is not None and doc["expire_at"] > chat.clock.now() + 30 * 86400

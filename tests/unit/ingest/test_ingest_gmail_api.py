"""Ingestion through the real Gmail client library (googleapiclient, static discovery)
against the local Gmail API double, and the ingest / renew-watch functions as
functions-framework serves them."""

from __future__ import annotations

import base64
import json
import os
import queue
import threading
from pathlib import Path
from typing import Any

import pytest
from cloudevents.conversion import to_structured
from cloudevents.http import CloudEvent
from functions_framework import create_app

from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
from inboxflow.clock import SystemClock
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.entry import ingest as ingest_entry
from inboxflow.errors import RetryableError
from inboxflow.ingest.claims import message_trace_id
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.ingest.notification import GmailNotification
from inboxflow.ingest.sync import IngestOptions, Ingestor
from inboxflow.ingest.watch import renew_watches
from inboxflow.mail import sample_inbox_paths
from tests.harness.paths import ROOT
from tests.unit.ingest.test_ingest import MAILBOX, World, eml

TOPIC = "projects/inboxflow-local/topics/inboxflow-gmail"


@pytest.fixture
def double() -> Any:
    with GoogleApiDouble() as running:
        yield running


@pytest.fixture
def world(tmp_path: Path, double: GoogleApiDouble) -> World:
    w = World(tmp_path)
    w.ingestor = Ingestor(
        w.runtime,
        GoogleApiGmailReader(api_url=double.url, page_size=3, environ=os.environ),
        IngestOptions(backoff_base_s=0.01),
        sleep=w.sleeps.append,
    )
    w.registry.add(MAILBOX, w.clock.now())
    summary = renew_watches(w.store, w.ingestor.gmail, w.clock, topic=TOPIC)
    assert summary["failed"] == [] and summary["renewed"][0]["address"] == MAILBOX
    return w


def notify(world: World, double: GoogleApiDouble) -> Any:
    return world.ingestor.ingest(GmailNotification(MAILBOX, double.history_id(MAILBOX)))


def test_watch_through_the_client_sets_the_cursor_and_the_expiration(
    world: World, double: GoogleApiDouble
) -> None:
    mailbox = world.registry.get(MAILBOX)
    assert mailbox is not None and mailbox.history_id == double.history_id(MAILBOX)
    assert mailbox.watch_expiration_ms and mailbox.watch_expiration_ms > 0
    assert ("gmail.users.watch", f"/gmail/v1/users/{MAILBOX}/watch") in double.calls


def test_history_pages_labels_and_raw_messages_through_the_client(
    world: World, double: GoogleApiDouble
) -> None:
    notified: list[tuple[str, int]] = []
    double.on_notify(lambda address, history_id: notified.append((address, history_id)))
    ids = [double.deliver(MAILBOX, eml(n)) for n in range(7)]
    double.deliver(MAILBOX, eml(99), labels=("SENT",))  # not INBOX: no notification either
    assert len(notified) == 7
    report = notify(world, double)
    assert report.pages == 3 and report.listed == 8 and report.skipped == 1
    assert sorted(report.started) == sorted(message_trace_id(MAILBOX, g) for g in ids)
    world.bus.drain()
    checkpoint = world.store.get_trace(message_trace_id(MAILBOX, ids[0]))
    assert checkpoint is not None and checkpoint.status in ("done", "waiting")
    email = checkpoint.state["email"]
    assert email["subject"] == "Question number 0 about pricing"
    assert email["thread_id"] == ids[0] and email["mailbox"] == MAILBOX
    history_calls = [c for c in double.calls if c[0] == "gmail.users.history.list"]
    assert len(history_calls) == 3


def test_a_reply_joins_the_thread_gmail_gives_it(world: World, double: GoogleApiDouble) -> None:
    first = double.deliver(MAILBOX, eml(1))
    reply = eml(2, subject="Re: Question", extra="In-Reply-To: <m1@example.com>\r\n")
    second = double.deliver(MAILBOX, reply)
    notify(world, double)
    world.bus.drain()
    checkpoint = world.store.get_trace(message_trace_id(MAILBOX, second))
    assert checkpoint is not None and checkpoint.state["email"]["thread_id"] == first


@pytest.mark.parametrize(("status", "reason"), [(429, None), (403, None), (503, None)])
def test_rate_limits_and_outages_are_retried(
    world: World, double: GoogleApiDouble, status: int, reason: str | None
) -> None:
    gmail_id = double.deliver(MAILBOX, eml(1))
    double.fail_next("history.list", status, times=2, reason=reason)
    double.fail_next("messages.get", status, times=1, reason=reason)
    report = notify(world, double)
    assert report.started == [message_trace_id(MAILBOX, gmail_id)]
    assert len(world.sleeps) == 3


def test_persistent_429_raises_retryable_and_keeps_the_cursor(
    world: World, double: GoogleApiDouble
) -> None:
    before = world.cursor()
    double.deliver(MAILBOX, eml(1))
    double.fail_next("history.list", 429, times=5)
    with pytest.raises(RetryableError, match="still failing after 5 attempts"):
        notify(world, double)
    assert world.cursor() == before and world.traces() == []
    assert len(notify(world, double).started) == 1


def test_a_403_that_is_not_a_rate_limit_is_not_retried_but_not_lost(
    world: World, double: GoogleApiDouble
) -> None:
    double.deliver(MAILBOX, eml(1))
    double.fail_next("history.list", 403, reason="insufficientPermissions")
    with pytest.raises(RetryableError, match="403"):
        notify(world, double)
    assert world.sleeps == []
    assert len(notify(world, double).started) == 1


def test_an_expired_cursor_through_the_client_runs_a_full_sync(
    world: World, double: GoogleApiDouble
) -> None:
    first = [double.deliver(MAILBOX, eml(n)) for n in range(2)]
    notify(world, double)
    later = [double.deliver(MAILBOX, eml(n)) for n in range(2, 4)]
    double.expire_history(MAILBOX, double.history_id(MAILBOX))
    report = notify(world, double)
    assert report.full_sync is not None and report.full_sync["messages"] == 4
    assert report.duplicates == len(first)
    assert sorted(report.started) == sorted(message_trace_id(MAILBOX, g) for g in later)
    assert world.cursor() == double.history_id(MAILBOX)


def test_delivered_mail_flows_to_the_pipeline_through_the_in_process_notifier(
    world: World, double: GoogleApiDouble
) -> None:
    double.on_notify(ingest_entry.in_process_notifier(world.ingestor))
    path = next(p for p in sample_inbox_paths() if p.name.startswith("03-"))
    gmail_id = double.deliver(MAILBOX, path.read_bytes())
    assert double.notify_errors == []
    checkpoint = world.store.get_trace(message_trace_id(MAILBOX, gmail_id))
    assert checkpoint is not None and checkpoint.status == "done"
    assert checkpoint.state["classification"]["category"] == "meeting_request"


# --- the deployed functions ----------------------------------------------------------------

FUNCTIONS_SOURCE = str(ROOT / "functions" / "main.py")


@pytest.fixture
def embedded_env(tmp_path: Path, double: GoogleApiDouble, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INBOXFLOW_STORE", "sqlite")
    monkeypatch.setenv("INBOXFLOW_BUS", "inprocess")
    monkeypatch.setenv("INBOXFLOW_GOOGLE_API_URL", double.url)
    monkeypatch.setenv("INBOXFLOW_GMAIL_TOPIC", TOPIC)
    ingest_entry.reset()
    yield
    ingest_entry.reset()


def post(client: Any, message: dict[str, Any]) -> Any:
    event = CloudEvent(
        {
            "type": "google.cloud.pubsub.topic.v1.messagePublished",
            "source": "//pubsub.googleapis.com/projects/inboxflow-local/topics/inboxflow-gmail",
        },
        {"message": message, "subscription": "projects/inboxflow-local/subscriptions/gmail"},
    )
    headers, body = to_structured(event)
    return client.post("/", headers=headers, data=body)


def test_the_ingest_function_runs_a_delivered_mail_to_its_final_state(
    tmp_path: Path, double: GoogleApiDouble, embedded_env: Any
) -> None:
    from inboxflow.workspace import seed_workspace

    source = FUNCTIONS_SOURCE
    runtime = ingest_entry.ingestor().runtime
    seed_workspace(runtime.store, runtime.clock.now())
    MailboxRegistry(runtime.store).add(MAILBOX, runtime.clock.now())
    renew = create_app("renew_watch", source, "http").test_client().post("/")
    assert renew.status_code == 200, renew.data
    assert json.loads(renew.data)["renewed"][0]["address"] == MAILBOX

    path = next(p for p in sample_inbox_paths() if p.name.startswith("03-"))
    gmail_id = double.deliver(MAILBOX, path.read_bytes())
    client = create_app("ingest", source, "cloudevent").test_client()
    message = GmailNotification(MAILBOX, double.history_id(MAILBOX)).to_pubsub_message()
    assert post(client, message).status_code == 200
    assert post(client, message).status_code == 200  # a duplicate delivery: acknowledged
    checkpoint = runtime.store.get_trace(message_trace_id(MAILBOX, gmail_id))
    assert checkpoint is not None and checkpoint.status == "done"
    assert len(runtime.store.list("traces")) == 1

    garbage = {"data": base64.b64encode(b"not json").decode()}
    assert post(client, garbage).status_code == 200  # acknowledged, recorded
    failures = [doc for _, doc in runtime.store.list("failures")]
    assert any("not JSON" in doc["reason"] for doc in failures)

    double.fail_next("history.list", 429, times=10)
    double.deliver(MAILBOX, eml(5))
    message = GmailNotification(MAILBOX, double.history_id(MAILBOX)).to_pubsub_message()
    ingest_entry.ingestor().options.backoff_base_s = 0.001
    assert post(client, message).status_code == 500  # Pub/Sub will redeliver


def test_renew_watch_answers_500_when_a_mailbox_fails_and_still_renews_the_others(
    tmp_path: Path, double: GoogleApiDouble, embedded_env: Any
) -> None:
    store = ingest_entry.ingestor().store
    registry = MailboxRegistry(store)
    for address in ("a@brightlane.io", "b@brightlane.io"):
        registry.add(address, SystemClock().now())
    double.fail_next("/users/a@brightlane.io/watch", 403, reason="forbidden")
    response = create_app("renew_watch", FUNCTIONS_SOURCE, "http").test_client().post("/")
    assert response.status_code == 500
    summary = json.loads(response.data)
    assert [f["address"] for f in summary["failed"]] == ["a@brightlane.io"]
    assert [r["address"] for r in summary["renewed"]] == ["b@brightlane.io"]
    assert summary["topic"] == TOPIC


@pytest.mark.parametrize("messages", [10, 40])
def test_a_burst_lists_the_history_once_however_many_notifications_come_at_once(
    tmp_path: Path, double: GoogleApiDouble, messages: int
) -> None:
    """Gmail calls per message stay flat: one run lists, the others are stale or deferred."""
    world = World(tmp_path)
    world.ingestor = Ingestor(
        world.runtime,
        GoogleApiGmailReader(api_url=double.url, environ=os.environ),
        IngestOptions(backoff_base_s=0.01),
    )
    world.registry.add(MAILBOX, world.clock.now())
    renew_watches(world.store, world.ingestor.gmail, world.clock, topic=TOPIC)
    notified: list[int] = []
    double.on_notify(lambda address, history_id: notified.append(history_id))
    ids = [double.deliver(MAILBOX, eml(n)) for n in range(messages)]
    before = double.call_counts()
    deliveries: queue.Queue[int | None] = queue.Queue()
    for history_id in notified * 2:  # at least once: every notification twice
        deliveries.put(history_id)
    outcomes: list[str] = []

    def work() -> None:
        while (history_id := deliveries.get()) is not None:
            try:
                outcomes.append(world.notify(history_id).outcome)
            except RetryableError:  # Pub/Sub redelivers it
                deliveries.put(history_id)
            except Exception as exc:
                outcomes.append(repr(exc))
            finally:
                deliveries.task_done()

    workers = [threading.Thread(target=work) for _ in range(6)]
    for worker in workers:
        worker.start()
    deliveries.join()
    for _ in workers:
        deliveries.put(None)
    for worker in workers:
        worker.join()
    assert len(outcomes) == 2 * messages, outcomes
    calls = double.call_counts() - before
    assert calls["gmail.users.history.list"] == 1
    assert calls["gmail.users.messages.get"] == messages
    assert sum(calls.values()) == messages + 1
    assert outcomes.count("ingested") == 1
    assert set(world.traces()) == {message_trace_id(MAILBOX, g) for g in ids}
    assert world.cursor() == double.history_id(MAILBOX)


def test_a_message_another_run_holds_is_a_warning_and_a_409_not_a_traceback(
    tmp_path: Path,
    double: GoogleApiDouble,
    embedded_env: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from inboxflow.ingest.claims import Claims

    runtime = ingest_entry.ingestor().runtime
    now = runtime.clock.now()
    MailboxRegistry(runtime.store).add(MAILBOX, now)
    renew_watches(runtime.store, ingest_entry.ingestor().gmail, runtime.clock, topic=TOPIC)
    gmail_id = double.deliver(MAILBOX, eml(7))
    # Another ingest run claimed the message a moment ago and still holds its lease.
    Claims(runtime.store).claim(MAILBOX, gmail_id, gmail_id, now, "history", "ingest:other-run")
    client = create_app("ingest", FUNCTIONS_SOURCE, "cloudevent").test_client()
    message = GmailNotification(MAILBOX, double.history_id(MAILBOX)).to_pubsub_message()
    with caplog.at_level("INFO"):
        response = post(client, message)
    assert response.status_code == 409  # not a success: Pub/Sub redelivers
    assert b"being ingested by another run" in response.data
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "being ingested by another run" in warnings[0].getMessage()
    assert all(r.exc_info is None and r.levelno < 40 for r in caplog.records), [
        (r.levelname, r.getMessage()[:80]) for r in caplog.records if r.levelno >= 40 or r.exc_info
    ]
    assert "Traceback" not in caplog.text
    assert runtime.store.get_trace(message_trace_id(MAILBOX, gmail_id)) is None

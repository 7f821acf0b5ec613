"""Gmail ingestion on the embedded default (SQLite store, in-process bus), against the
in-memory Gmail fake: every message exactly one trace, none missed."""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.dev.adapters.memory_gmail_reader import InMemoryGmailReader
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.pause_kinds import Choice, PauseKind
from inboxflow.engine.step import END, Pause, Step
from inboxflow.errors import RetryableError
from inboxflow.graphs import graph_registry
from inboxflow.ingest.claims import Claim, Claims, message_trace_id
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.ingest.notification import GmailNotification
from inboxflow.ingest.sync import IngestIncomplete, IngestOptions, Ingestor, SyncBusy
from inboxflow.ingest.watch import renew_watches
from inboxflow.mail import Email
from inboxflow.ports.gmail_reader import GmailError
from inboxflow.threads import ThreadResolver
from inboxflow.workspace import seed_workspace
from tests.harness.mail_auth import passing
from tests.harness.runtimes import runtime_for

MAILBOX = "maya.chen@brightlane.io"


def eml(n: int, subject: str | None = None, extra: str = "", sender: str = "") -> bytes:
    sender = sender or f"Customer {n} <customer{n}@example.com>"
    return (
        f"From: {sender}\r\nTo: Maya Chen <{MAILBOX}>\r\n"
        f"Subject: {subject or f'Question number {n} about pricing'}\r\n"
        f"Message-ID: <m{n}@example.com>\r\nDate: Thu, 14 Jan 2027 09:12:31 +0000\r\n{extra}"
        "Content-Type: text/plain; charset=utf-8\r\n\r\n"
        f"Hello, what does the team plan cost for {n} seats?\r\n"
    ).encode()


# --- a graph that waits for the customer's reply ------------------------------------------


class FollowUpState(BaseModel):
    schema_version: int = 1
    email: Email = Field(frozen=True)
    reply: dict[str, Any] | None = None
    replied_by: str | None = None


def ask(state: FollowUpState, ctx: NodeContext) -> Step:
    return Step(
        update={},
        goto=Pause(kind="customer_reply", payload={"question": "which plan?"}, resume_node="got"),
    )


def got(state: FollowUpState, ctx: NodeContext) -> Step:
    resume = ctx.resume or {}
    return Step(
        update={"reply": resume["payload"]["email"], "replied_by": resume["reviewer"]}, goto=END
    )


FOLLOW_UP = Graph.build(
    "follow_up",
    "ask",
    FollowUpState,
    [Node("ask", ask, routes=("got",), pauses=True), Node("got", got, routes=(END,))],
    pause_kinds=[
        PauseKind(
            "customer_reply",
            "Waiting for the customer",
            (Choice("reply", "Reply"),),
            waits_for="customer",
        )
    ],
)


class World:
    def __init__(self, tmp_path: Path, page_size: int = 100, store: Any = None) -> None:
        self.clock = FakeClock()
        self.bus = InProcessBus(clock=self.clock)
        self.store = store or SqliteCheckpointStore(tmp_path / "ingest.db")
        seed_workspace(self.store, self.clock.now())
        self.runtime = runtime_for(
            tmp_path,
            clock=self.clock,
            graphs={**graph_registry(), "follow_up": FOLLOW_UP},
            store=self.store,
            bus=self.bus,
            workspace=StoreWorkspace(self.store, self.clock),
        )
        self.gmail = InMemoryGmailReader(page_size=page_size)
        self.sleeps: list[float] = []
        self.ingestor = Ingestor(
            self.runtime,
            self.gmail,
            IngestOptions(backoff_base_s=1.0),
            sleep=self.sleeps.append,
        )
        self.registry = MailboxRegistry(self.store)

    def register(self, graph: str = "pipeline", watch: bool = True) -> None:
        self.registry.add(MAILBOX, self.clock.now(), graph=graph)
        if watch:
            renew_watches(self.store, self.gmail, self.clock, topic="projects/p/topics/t")

    def deliver(self, n: int, **kwargs: Any) -> tuple[str, int]:
        raw = kwargs.pop("raw", None) or eml(
            n, **{k: kwargs.pop(k) for k in list(kwargs) if k in ("subject", "extra", "sender")}
        )
        gmail_id = self.gmail.deliver(MAILBOX, raw, notify=False, **kwargs)
        return gmail_id, self.gmail.history_id(MAILBOX)

    def notify(self, history_id: int) -> Any:
        return self.ingestor.ingest(GmailNotification(MAILBOX, history_id))

    def traces(self) -> list[str]:
        return [trace_id for trace_id, _ in self.store.list("traces")]

    def claim(self, gmail_id: str) -> Claim:
        claim = self.ingestor.claims.get(MAILBOX, gmail_id)
        assert claim is not None, f"message {gmail_id} was never claimed"
        return claim

    def cursor(self) -> int | None:
        mailbox = self.registry.get(MAILBOX)
        assert mailbox is not None
        return mailbox.history_id


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    w.register()
    return w


def test_a_new_message_starts_one_trace_that_runs_the_pipeline(world: World) -> None:
    before = world.cursor()
    gmail_id, history_id = world.deliver(1)
    report = world.notify(history_id)
    assert report.started == [message_trace_id(MAILBOX, gmail_id)]
    assert (report.cursor_before, report.cursor_after) == (before, history_id)
    world.bus.drain()
    checkpoint = world.store.get_trace(report.started[0])
    assert checkpoint is not None and checkpoint.status in ("done", "waiting")
    assert checkpoint.state["email"]["mailbox"] == MAILBOX
    assert checkpoint.state["email"]["thread_id"] == gmail_id
    claim = world.claim(gmail_id)
    assert (claim.state, claim.via, claim.finished) == ("started", "history", True)
    assert ThreadResolver(world.store, world.store).trace_of(MAILBOX, gmail_id) == report.started[0]


def test_duplicate_notifications_give_one_trace(world: World) -> None:
    _, history_id = world.deliver(1)
    reports = [world.notify(history_id) for _ in range(3)]
    assert [len(r.started) for r in reports] == [1, 0, 0]
    assert [r.outcome for r in reports] == ["ingested", "stale", "stale"]
    assert len(world.traces()) == 1


def test_a_redelivery_after_a_crash_before_the_cursor_moved_counts_duplicates(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        _, history_id = world.deliver(n)
    original = world.ingestor.sync.finish

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RetryableError("instance died before moving the cursor")

    monkeypatch.setattr(world.ingestor.sync, "finish", crash)
    with pytest.raises(RetryableError):
        world.notify(history_id)
    monkeypatch.setattr(world.ingestor.sync, "finish", original)
    report = world.notify(history_id)
    assert report.duplicates == 3 and report.started == []
    assert report.cursor_after == history_id
    assert len(world.traces()) == 3


def test_out_of_order_notifications_never_move_the_cursor_back(world: World) -> None:
    ids = [world.deliver(n)[1] for n in range(3)]
    last = world.notify(ids[2])
    assert len(last.started) == 3 and world.cursor() == ids[2]
    for early in (ids[0], ids[1]):
        report = world.notify(early)
        assert report.outcome == "stale" and report.started == []
        assert world.cursor() == ids[2]
    # the cursor is a max even when a slower run tries to write an older value
    assert world.registry.advance_cursor(MAILBOX, ids[0], world.clock.now()) == (ids[2], ids[2])
    assert len(world.traces()) == 3


def notify_concurrently(world: World, history_ids: list[int]) -> tuple[list[Any], list[int]]:
    """Run one ingest per history id at once; returns the reports and the ids to redeliver."""
    reports: list[Any] = []
    redeliver: list[int] = []
    barrier = threading.Barrier(len(history_ids))

    def run(history_id: int) -> None:
        barrier.wait()
        try:
            reports.append(world.notify(history_id))
        except IngestIncomplete as exc:
            assert exc.report.in_flight > 0
            reports.append(exc.report)
            redeliver.append(history_id)
        except SyncBusy:  # this notification's other delivery is listing the mailbox
            redeliver.append(history_id)

    threads = [threading.Thread(target=run, args=(h,)) for h in history_ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return reports, redeliver


def test_two_runs_at_once_on_one_mailbox_start_each_message_once(world: World) -> None:
    ids = [world.deliver(n)[1] for n in range(30)]
    reports, redeliver = notify_concurrently(world, [ids[-1], ids[-1], ids[10], ids[-1]])
    reports += [world.notify(h) for h in redeliver]  # Pub/Sub redelivers the retryable ones
    started = [t for r in reports for t in r.started]
    assert len(started) == len(set(started)) == 30
    assert len(world.traces()) == 30
    assert world.cursor() == ids[-1]
    claims = world.store.list("mail_claims")
    assert len(claims) == 30 and {c["state"] for _, c in claims} == {"started"}


def test_three_pages_of_history(tmp_path: Path) -> None:
    world = World(tmp_path, page_size=4)
    world.register()
    ids = [world.deliver(n)[1] for n in range(11)]
    report = world.notify(ids[-1])
    assert report.pages == 3 and report.listed == 11 and len(report.started) == 11
    assert world.cursor() == ids[-1]


def test_an_expired_cursor_runs_a_recorded_full_sync(world: World) -> None:
    old = [world.deliver(n)[0] for n in range(3)]
    world.notify(world.gmail.history_id(MAILBOX))
    new = [world.deliver(n)[0] for n in range(3, 5)]
    world.gmail.expire_history(MAILBOX)  # the cursor is now older than Gmail keeps
    report = world.notify(world.gmail.history_id(MAILBOX))
    assert report.full_sync is not None and "404" in report.full_sync["reason"]
    assert report.full_sync["messages"] == 5
    assert sorted(report.started) == sorted(message_trace_id(MAILBOX, g) for g in new)
    assert report.duplicates == len(old)
    events = world.store.list("ingest_events")
    assert [e["kind"] for _, e in events] == ["full_sync"] and events[0][1]["messages"] == 5
    mailbox = world.registry.get(MAILBOX)
    assert mailbox is not None and mailbox.last_full_sync is not None
    assert mailbox.last_full_sync["messages"] == 5
    assert mailbox.history_id == world.gmail.history_id(MAILBOX)


def test_a_mailbox_without_a_cursor_starts_with_a_bounded_full_sync(tmp_path: Path) -> None:
    world = World(tmp_path, page_size=2)
    world.register(watch=False)
    for n in range(7):
        world.deliver(n)
    world.ingestor.options.full_sync_max_pages = 3
    report = world.notify(world.gmail.history_id(MAILBOX))
    assert report.full_sync is not None
    assert report.full_sync["truncated"] is True and report.full_sync["messages"] == 6
    assert len(report.started) == 6
    assert world.cursor() == world.gmail.history_id(MAILBOX)


def test_rate_limits_are_retried_with_backoff(world: World) -> None:
    _, history_id = world.deliver(1)
    world.gmail.fail_next("history.list", InMemoryGmailReader.rate_limited(), times=2)
    world.gmail.fail_next("messages.get", InMemoryGmailReader.unavailable(), times=1)
    report = world.notify(history_id)
    assert len(report.started) == 1
    assert len(world.sleeps) == 3
    assert 0.5 <= world.sleeps[0] <= 1.0 and 1.0 <= world.sleeps[1] <= 2.0


def test_persistent_rate_limits_raise_retryable_and_lose_nothing(world: World) -> None:
    before = world.cursor()
    _, history_id = world.deliver(1)
    world.gmail.fail_next("messages.get", InMemoryGmailReader.rate_limited(), times=5)
    with pytest.raises(RetryableError, match="still failing after 5 attempts"):
        world.notify(history_id)
    assert world.cursor() == before and world.traces() == []
    report = world.notify(history_id)  # Pub/Sub redelivers
    assert report.repaired == 1 and len(report.started) == 1


def test_other_gmail_errors_are_retryable_too(world: World) -> None:
    _, history_id = world.deliver(1)
    world.gmail.fail_next("history.list", GmailError("401 Unauthorized", 401))
    with pytest.raises(RetryableError, match="401"):
        world.notify(history_id)
    assert world.sleeps == []


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ({"data": "%%% not base64 %%%"}, "not valid base64"),
        ({"data": base64.b64encode(b"{nope").decode()}, "not JSON"),
        ({"data": base64.b64encode(b'{"historyId": 5}').decode()}, "emailAddress"),
        ({"data": base64.b64encode(b'{"emailAddress": "a@b.c"}').decode()}, "historyId"),
        ({}, "no data"),
        (
            {
                "data": base64.b64encode(
                    b'{"emailAddress": "who@nowhere.io", "historyId": 5}'
                ).decode()
            },
            "unknown mailbox",
        ),
    ],
)
def test_malformed_notifications_are_recorded_and_acknowledged(
    world: World, message: dict[str, Any], why: str
) -> None:
    report = world.ingestor.handle_message(message)
    assert report.outcome == "rejected"
    failures = world.store.list("failures")
    assert len(failures) == 1
    assert why in failures[0][1]["reason"] and failures[0][1]["node"] == "ingest"
    assert world.traces() == []


@pytest.mark.parametrize(
    ("extra", "sender", "reason"),
    [
        ("Auto-Submitted: auto-replied\r\n", "", "auto"),
        ("Precedence: bulk\r\n", "", "bulk"),
        ("List-Id: <news.example.com>\r\n", "", "list"),
        ("", "Mail Delivery Subsystem <MAILER-DAEMON@example.com>", ""),
    ],
)
def test_loop_guarded_mail_is_recorded_with_the_reason_and_starts_nothing(
    world: World, extra: str, sender: str, reason: str
) -> None:
    gmail_id, history_id = world.deliver(1, extra=extra, sender=sender)
    report = world.notify(history_id)
    assert report.blocked == 1 and report.started == []
    claim = world.claim(gmail_id)
    assert claim.state == "blocked" and claim.reason is not None and claim.sender
    assert reason in claim.reason.lower()
    assert world.traces() == []


def test_our_own_messages_and_sent_or_draft_mail_are_skipped(world: World) -> None:
    own, _ = world.deliver(1, extra="X-Inboxflow-Trace: abc123:7:dispatch\r\n")
    world.deliver(2, labels=("SENT",))
    world.deliver(3, labels=("DRAFT",))
    world.deliver(4, labels=("INBOX", "SENT"))
    _, history_id = world.deliver(5)
    report = world.notify(history_id)
    assert report.own == 1 and report.skipped == 3 and len(report.started) == 1
    assert world.claim(own).state == "own"
    assert len(world.traces()) == 1


def test_a_reply_in_a_thread_waiting_for_the_customer_resumes_its_trace(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.register(graph="follow_up")
    first, history_id = world.deliver(1)
    trace_id = world.notify(history_id).started[0]
    world.bus.drain()
    waiting = world.store.get_trace(trace_id)
    assert waiting is not None and waiting.status == "waiting"
    assert waiting.pause is not None and waiting.pause["kind"] == "customer_reply"

    # the customer's own reply, authenticated by the receiving server
    reply, history_id = world.deliver(
        2,
        subject="Re: Question",
        sender="Customer 1 <customer1@example.com>",
        extra=passing("customer1@example.com"),
        thread_id=first,
    )
    report = world.notify(history_id)
    assert report.resumed == [trace_id] and report.started == []
    world.bus.drain()
    done = world.store.get_trace(trace_id)
    assert done is not None and done.status == "done"
    assert done.state["reply"]["subject"] == "Re: Question"
    assert done.state["replied_by"] == "customer1@example.com"
    claim = world.claim(reply)
    assert (claim.state, claim.trace_id, claim.thread_id) == ("resumed", trace_id, first)

    # the thread's trace is done now: a third message of the customer's starts the thread's next
    third, history_id = world.deliver(3, sender="customer1@example.com", thread_id=first)
    report = world.notify(history_id)
    assert report.started == [message_trace_id(MAILBOX, third)]
    assert ThreadResolver(world.store, world.store).trace_of(MAILBOX, first) == report.started[0]


def test_a_stranger_naming_a_thread_starts_a_trace_of_their_own(tmp_path: Path) -> None:
    """Anyone can name a thread's Message-ID in References (Gmail then threads it): the
    stranger is no party of the thread, so it neither resumes its wait nor becomes its trace;
    its own trace's step 0 says why, and the customer's reply still resumes the wait."""
    world = World(tmp_path)
    world.register(graph="follow_up")
    first, history_id = world.deliver(1)
    trace_id = world.notify(history_id).started[0]
    world.bus.drain()
    threads = ThreadResolver(world.store, world.store)
    for n, sender in ((2, "mallory@evil.example"), (3, "customer1@examp\u0131e.com")):
        extra = passing(sender) + "References: <m1@example.com>\r\n"
        stranger, history_id = world.deliver(n, sender=sender, extra=extra, thread_id=first)
        report = world.notify(history_id)
        assert report.resumed == [] and report.started == [message_trace_id(MAILBOX, stranger)]
        assert threads.trace_of(MAILBOX, first) == trace_id  # the thread is still the customer's
        own = world.store.get_trace(report.started[0])
        assert own is not None and own.route is not None
        assert "is not a party of thread" in str(own.route.outside_thread)
        start = world.store.step_logs(report.started[0])[0]
        assert start.route is not None and start.route.outside_thread == own.route.outside_thread
        waiting = world.store.get_trace(trace_id)
        assert waiting is not None and waiting.status == "waiting"

    _, history_id = world.deliver(
        4, sender="customer1@example.com", extra=passing("customer1@example.com"), thread_id=first
    )
    assert world.notify(history_id).resumed == [trace_id]
    world.bus.drain()
    assert threads.outsider(MAILBOX, first, "Customer1@Example.com") is None

    # the thread's trace is done: a stranger's mail in it still does not take the thread over
    extra = passing("mallory@evil.example") + "References: <m1@example.com>\r\n"
    late, history_id = world.deliver(5, sender="mallory@evil.example", extra=extra, thread_id=first)
    assert world.notify(history_id).started == [message_trace_id(MAILBOX, late)]
    assert threads.trace_of(MAILBOX, first) == trace_id
    assert (
        threads.trace_before(
            MAILBOX, first, message_trace_id(MAILBOX, late), "mallory@evil.example"
        )
        is None
    )


def test_a_message_in_a_thread_whose_trace_waits_for_a_reviewer_starts_a_new_trace(
    world: World,
) -> None:
    first, history_id = world.deliver(1, raw=_complaint())
    trace_id = world.notify(history_id).started[0]
    world.bus.drain()
    checkpoint = world.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "waiting"
    assert checkpoint.pause is not None and checkpoint.pause["kind"] != "customer_reply"
    second, history_id = world.deliver(2, thread_id=first)
    report = world.notify(history_id)
    assert report.resumed == [] and report.started == [message_trace_id(MAILBOX, second)]


def _complaint() -> bytes:
    from inboxflow.mail import sample_inbox_paths

    path = next(p for p in sample_inbox_paths() if p.name.startswith("04-"))
    return path.read_bytes()


@pytest.mark.parametrize("where", ["start", "threads.record", "finish"])
def test_a_crash_between_claim_and_start_is_repaired_on_redelivery(
    world: World, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    gmail_id, history_id = world.deliver(1)
    targets = {
        "start": (world.runtime, "start"),
        "threads.record": (world.ingestor.threads, "record"),
        "finish": (world.ingestor.claims, "finish"),
    }
    owner, name = targets[where]
    original = getattr(owner, name)

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RetryableError(f"instance died in {where}")

    monkeypatch.setattr(owner, name, crash)
    with pytest.raises(RetryableError):
        world.notify(history_id)
    claim = world.claim(gmail_id)
    assert claim.state == "claimed" and not claim.finished
    monkeypatch.setattr(owner, name, original)
    report = world.notify(history_id)
    assert report.repaired == 1
    trace_id = message_trace_id(MAILBOX, gmail_id)
    assert report.started == [trace_id] and world.traces() == [trace_id]
    world.bus.drain()
    checkpoint = world.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status in ("done", "waiting")


def test_deleted_and_unreadable_messages_are_recorded_not_lost(world: World) -> None:
    gone, _ = world.deliver(1)
    world.gmail.delete(MAILBOX, gone)
    bad, history_id = world.deliver(2, raw=b"\x00\x01binary junk")
    report = world.notify(history_id)
    assert report.gone == 1 and report.unreadable == 1 and report.started == []
    assert world.claim(bad).state == "unreadable"
    assert any("not a readable email" in doc["reason"] for _, doc in world.store.list("failures"))
    assert world.cursor() == history_id


def test_a_claim_reads_back_typed_from_claimed_to_a_decided_review_reply(tmp_path: Path) -> None:
    claims = Claims(SqliteCheckpointStore(tmp_path / "claims.db"))
    assert claims.get(MAILBOX, "m-1") is None
    claims.claim(MAILBOX, "m-1", "t-1", now=10.0, via="full_sync", owner="run-a")
    claimed = claims.get(MAILBOX, "m-1")
    assert claimed == Claim(
        mailbox=MAILBOX,
        gmail_id="m-1",
        state="claimed",
        trace_id=message_trace_id(MAILBOX, "m-1"),
        thread_id="t-1",
        via="full_sync",
    )
    assert not claimed.finished
    claims.finish(
        MAILBOX,
        "m-1",
        "review_reply",
        now=11.0,
        approval_id="ap-9",
        review_outcome="decided",
        reason="",
        decision="approve",
        sender="lead@example.com",
    )
    decided = claims.get(MAILBOX, "m-1")
    assert decided is not None and decided.finished
    assert (decided.state, decided.approval_id, decided.review_outcome, decided.decision) == (
        "review_reply",
        "ap-9",
        "decided",
        "approve",
    )
    assert (decided.reason, decided.sender) == (None, "lead@example.com")
    assert claims.get(MAILBOX, "m-2") is None and claims.get("other@x.test", "m-1") is None


def test_a_file_delivered_says_what_its_claim_records(world: World) -> None:
    from inboxflow.dev.file_inbox import Delivered, FileInbox
    from inboxflow.mail.mime import parse_message
    from inboxflow.routing import RouteDecision

    config = world.runtime.ports.config
    started = FileInbox(world.runtime, config).deliver(
        parse_message(eml(1), mailbox=MAILBOX), "f-1"
    )
    assert started == Delivered("started", message_trace_id(MAILBOX, "f-1"))
    nowhere = FileInbox(world.runtime, config, decide=lambda email: RouteDecision("no_such_graph"))
    refused = nowhere.deliver(parse_message(eml(2), mailbox=MAILBOX), "f-2")
    assert (refused.action, refused.trace_id) == ("unreadable", None)
    assert refused.reason is not None and "no_such_graph" in refused.reason
    assert refused.reason == world.claim("f-2").reason


def test_renew_watches_keeps_going_past_a_failing_mailbox(tmp_path: Path) -> None:
    world = World(tmp_path)
    registry = world.registry
    for address in ("a@brightlane.io", "b@brightlane.io", "c@brightlane.io"):
        registry.add(address, world.clock.now())
    registry.advance_cursor("c@brightlane.io", 5, world.clock.now())
    world.gmail.deliver("c@brightlane.io", eml(1), notify=False)
    world.gmail.fail_next("watch", GmailError("403 Forbidden: mailbox not delegated", 403))
    summary = renew_watches(world.store, world.gmail, world.clock, topic="projects/p/topics/g")
    assert [f["address"] for f in summary["failed"]] == ["a@brightlane.io"]
    assert [r["address"] for r in summary["renewed"]] == ["b@brightlane.io", "c@brightlane.io"]
    a, b, c = (registry.get(x) for x in ("a@brightlane.io", "b@brightlane.io", "c@brightlane.io"))
    assert a is not None and a.watch_error and a.history_id is None
    assert b is not None and b.history_id == b.watch_history_id and b.watch_expiration_ms
    assert c is not None and c.history_id == 5 and c.watch_history_id == 1001  # cursor kept
    assert world.gmail.watches["b@brightlane.io"] == ("projects/p/topics/g", ("INBOX",))


def test_the_in_process_notifier_runs_delivered_mail_to_the_end(world: World) -> None:
    from inboxflow.entry.ingest import in_process_notifier

    world.gmail.on_notify(in_process_notifier(world.ingestor))
    gmail_id = world.gmail.deliver(MAILBOX, eml(1))
    checkpoint = world.store.get_trace(message_trace_id(MAILBOX, gmail_id))
    assert checkpoint is not None and checkpoint.status in ("done", "waiting")
    assert len(world.bus) == 0

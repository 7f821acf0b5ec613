"""Ingest leases never outlive Pub/Sub's retry budget, and a live run keeps them.

The claims (``ingest/claims.py``) and the mailbox's sync lease
(``ingest/mailbox_sync.py``) are short leases renewed by the run's heartbeat
(``ingest/heartbeat.py``): a killed run's messages are taken by a redelivery
of its notification within the budget, a live long run is not stolen. Each
case runs on every store adapter (SQLite; Firestore on the emulator).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.clock import FakeClock
from inboxflow.errors import RetryableError
from inboxflow.ingest.claims import CLAIM_LEASE_S, Claims, claim_path, message_trace_id
from inboxflow.ingest.heartbeat import Heartbeat
from inboxflow.ingest.mailbox_sync import MailboxSync
from inboxflow.ingest.mailboxes import MailboxRegistry, UnknownMailbox
from inboxflow.ingest.sync import IngestIncomplete, SyncBusy
from inboxflow.ports.checkpoint import DocumentCheckpointStore
from tests.contract.adapters import STORES
from tests.unit.ingest.test_ingest import MAILBOX, World

T0 = 1_800_000_000.0
PUBSUB_REDELIVERIES_S = (0.0, 1.5, 4.5, 10.5, 22.5)
"""When Pub/Sub delivers a nacked message, 5 attempts with exponential backoff (about 30 s)."""


class Killed(BaseException):
    """The instance dies here: no ``except Exception`` runs, nothing is given back."""


@pytest.fixture(params=[adapter.param() for adapter in STORES])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DocumentCheckpointStore]:
    opened = request.param.backend(request, tmp_path)()
    yield opened
    opened.close()


@pytest.fixture
def world(tmp_path: Path, store: DocumentCheckpointStore) -> World:
    w = World(tmp_path, store=store)
    w.ingestor.options.renew_every_s = 0.01
    w.register()
    return w


# --- the claim's lease -------------------------------------------------------------------


def test_a_claim_lapses_within_the_retry_budget_and_is_taken_over(
    store: DocumentCheckpointStore,
) -> None:
    claims = Claims(store)
    assert claims.claim(MAILBOX, "g1", "t1", T0, "history", "run-a")[0]
    assert not claims.take_over(MAILBOX, "g1", "run-b", T0 + CLAIM_LEASE_S - 1)
    assert claims.take_over(MAILBOX, "g1", "run-b", T0 + CLAIM_LEASE_S + 1)
    assert store.get(claim_path(MAILBOX, "g1"))["owner"] == "run-b"  # type: ignore[index]


def test_a_renewed_claim_is_not_taken_over_and_only_its_owner_renews_it(
    store: DocumentCheckpointStore,
) -> None:
    claims = Claims(store)
    claims.claim(MAILBOX, "g1", "t1", T0, "history", "run-a")
    assert claims.renew(MAILBOX, "g1", "run-a", T0 + 10)
    assert not claims.take_over(MAILBOX, "g1", "run-b", T0 + 20)
    assert not claims.renew(MAILBOX, "g1", "run-b", T0 + 20)
    assert claims.take_over(MAILBOX, "g1", "run-b", T0 + 10 + CLAIM_LEASE_S + 1)
    assert not claims.renew(MAILBOX, "g1", "run-a", T0 + 30)  # run-a lost it: stop renewing
    claims.finish(MAILBOX, "g1", "started", T0 + 31)
    assert not claims.renew(MAILBOX, "g1", "run-b", T0 + 32)


# --- the mailbox's sync lease ------------------------------------------------------------


def test_an_unregistered_mailbox_is_refused_and_nothing_is_written(
    store: DocumentCheckpointStore,
) -> None:
    registry, sync = MailboxRegistry(store), MailboxSync(store)
    with pytest.raises(UnknownMailbox, match="not registered"):
        sync.begin(MAILBOX, 105, "run-a", T0)
    with pytest.raises(UnknownMailbox, match="not registered"):
        sync.finish(MAILBOX, "run-a", 107, T0)
    with pytest.raises(UnknownMailbox, match="not registered"):
        registry.advance_cursor(MAILBOX, 100, T0)
    with pytest.raises(UnknownMailbox, match="not registered"):
        registry.record_watch(MAILBOX, T0, history_id=100)
    assert registry.get(MAILBOX) is None


def test_one_run_lists_a_mailbox_others_are_deferred_or_stale(
    store: DocumentCheckpointStore,
) -> None:
    MailboxRegistry(store).add(MAILBOX, T0)
    MailboxRegistry(store).advance_cursor(MAILBOX, 100, T0)
    sync = MailboxSync(store)
    assert sync.begin(MAILBOX, 105, "run-a", T0).turn == "listing"
    assert sync.begin(MAILBOX, 99, "run-b", T0).turn == "stale"
    assert sync.begin(MAILBOX, 105, "run-c", T0).turn == "busy"  # run-a's own notification
    assert sync.begin(MAILBOX, 103, "run-d", T0).turn == "deferred"
    assert sync.begin(MAILBOX, 110, "run-e", T0).turn == "deferred"
    end = sync.finish(MAILBOX, "run-a", 107, T0 + 1)
    assert (end.before, end.after, end.again) == (100, 107, True)  # 110 was deferred past it
    assert sync.begin(MAILBOX, 111, "run-f", T0 + 2).turn == "deferred"  # still held
    end = sync.finish(MAILBOX, "run-a", 112, T0 + 3)
    assert (end.after, end.again) == (112, False)
    assert sync.begin(MAILBOX, 113, "run-g", T0 + 4).turn == "listing"


def test_a_sync_lease_lapses_unless_renewed(store: DocumentCheckpointStore) -> None:
    MailboxRegistry(store).add(MAILBOX, T0)
    MailboxRegistry(store).advance_cursor(MAILBOX, 100, T0)
    sync = MailboxSync(store)
    assert sync.begin(MAILBOX, 105, "run-a", T0).turn == "listing"
    assert sync.renew(MAILBOX, "run-a", T0 + 10)
    assert sync.begin(MAILBOX, 105, "run-b", T0 + 20).turn == "busy"
    assert sync.begin(MAILBOX, 105, "run-b", T0 + 10 + CLAIM_LEASE_S + 1).turn == "listing"
    assert not sync.renew(MAILBOX, "run-a", T0 + 30)


# --- the heartbeat -------------------------------------------------------------------------


def test_the_heartbeat_renews_what_is_held_drops_what_is_lost_and_stops_at_its_limit() -> None:
    clock = FakeClock(T0)
    renewed: list[tuple[str, float]] = []
    beat = Heartbeat(clock, every_s=60, max_hold_s=300)
    beat.hold("kept", lambda now: renewed.append(("kept", now)) is None)
    beat.hold("lost", lambda now: False)
    assert beat.beat() == 1 and renewed == [("kept", T0)]
    beat.drop("kept")
    assert beat.beat() == 0
    beat.hold("late", lambda now: renewed.append(("late", now)) is None)
    clock.advance(301)
    assert beat.beat() == 0 and renewed == [("kept", T0)]  # a hung run stops holding


# --- a run under way and a run killed ------------------------------------------------------


def test_a_live_long_run_keeps_its_claim_and_the_mailbox(world: World) -> None:
    gmail_id, history_id = world.deliver(1)
    in_fetch, go_on = threading.Event(), threading.Event()
    original = world.gmail.get_raw

    def slow_fetch(mailbox: str, wanted: str) -> Any:
        in_fetch.set()
        assert go_on.wait(30)
        return original(mailbox, wanted)

    world.gmail.get_raw = slow_fetch  # type: ignore[method-assign]
    results: list[Any] = []
    run = threading.Thread(target=lambda: results.append(world.notify(history_id)))
    run.start()
    try:
        assert in_fetch.wait(30)
        world.clock.advance(3 * CLAIM_LEASE_S)  # far past the first lease: only renewals keep it
        claim = claim_path(MAILBOX, gmail_id)
        assert _eventually(lambda: world.store.get(claim)["lease_until"] > world.clock.now())  # type: ignore[index]
        assert _eventually(lambda: world.registry.get(MAILBOX).sync_lease_until > world.clock.now())  # type: ignore[union-attr]
        with pytest.raises(SyncBusy):  # its own notification again: not stolen
            world.notify(history_id)
        later, later_history = world.deliver(2)
        assert world.notify(later_history).outcome == "deferred"
        assert not world.ingestor.claims.take_over(MAILBOX, gmail_id, "thief", world.clock.now())
    finally:
        go_on.set()
        run.join()
    [report] = results
    assert sorted(report.started) == sorted(message_trace_id(MAILBOX, g) for g in (gmail_id, later))
    assert report.rounds == 2 and report.repaired == 0
    assert world.cursor() == later_history


def test_a_killed_runs_messages_are_taken_by_a_redelivery_within_the_retry_budget(
    world: World,
) -> None:
    first, _ = world.deliver(1)
    second, history_id = world.deliver(2)
    original = world.runtime.start

    def die_in_the_second_start(*args: Any, **kwargs: Any) -> Any:
        if world.traces():
            raise Killed
        return original(*args, **kwargs)

    world.runtime.start = die_in_the_second_start  # type: ignore[method-assign]
    with pytest.raises(Killed):
        world.notify(history_id)
    world.runtime.start = original  # type: ignore[method-assign]
    assert world.claim(second).state == "claimed"  # held by the dead run, not given back
    third, third_history = world.deliver(3)
    assert world.notify(third_history).outcome == "deferred"  # acknowledged: the dead run's

    killed_at, outcomes = world.clock.now(), []
    for offset in PUBSUB_REDELIVERIES_S:  # the dead run's notification comes back
        world.clock.advance(killed_at + offset - world.clock.now())
        try:
            report = world.notify(history_id)
        except RetryableError as exc:
            outcomes.append(type(exc).__name__)
            continue
        outcomes.append(report.outcome)
        break
    assert outcomes[-1] == "ingested", outcomes  # never left to the dead-letter topic
    assert report.repaired == 1
    assert sorted(report.started) == sorted(message_trace_id(MAILBOX, g) for g in (second, third))
    expected = {message_trace_id(MAILBOX, g) for g in (first, second, third)}
    assert set(world.traces()) == expected and world.cursor() == third_history
    assert {world.claim(g).state for g in (first, second, third)} == {"started"}


def _eventually(condition: Any, timeout_s: float = 30.0) -> bool:
    """Wait (bounded, wall time) until the heartbeat thread made ``condition`` true."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_run_past_its_listing_budget_gives_the_mailbox_back_and_loses_nothing(
    world: World,
) -> None:
    first, history_id = world.deliver(1)
    original = world.gmail.get_raw
    arrived: list[tuple[str, int]] = []

    def meanwhile(mailbox: str, wanted: str) -> Any:
        if not arrived:  # mail arrives while the run lists: its notification is deferred
            arrived.append(world.deliver(2))
            assert world.notify(arrived[0][1]).outcome == "deferred"
        return original(mailbox, wanted)

    world.gmail.get_raw = meanwhile  # type: ignore[method-assign]
    world.ingestor.options.listing_budget_s = -1  # spent after the first listing
    with pytest.raises(IngestIncomplete, match="kept arriving") as raised:
        world.notify(history_id)
    assert raised.value.report.started == [message_trace_id(MAILBOX, first)]
    mailbox = world.registry.get(MAILBOX)
    assert mailbox is not None and mailbox.sync_owner is None  # given back at once
    second, later = arrived[0]
    assert mailbox.sync_wanted == later and mailbox.history_id == history_id
    report = world.notify(history_id)  # its redelivery lists what was deferred
    assert report.started == [message_trace_id(MAILBOX, second)]
    assert world.cursor() == later


def test_a_run_killed_after_moving_the_cursor_still_has_its_deferred_mail_listed(
    world: World,
) -> None:
    first, history_id = world.deliver(1)
    original = world.gmail.get_raw
    arrived: list[tuple[str, int]] = []

    def meanwhile(mailbox: str, wanted: str) -> Any:
        if not arrived:  # round 1: mail arrives, its notification is deferred to this run
            arrived.append(world.deliver(2))
            assert world.notify(arrived[0][1]).outcome == "deferred"
        elif wanted == arrived[0][0]:
            raise Killed  # round 2, after round 1 moved the cursor past this notification
        return original(mailbox, wanted)

    world.gmail.get_raw = meanwhile  # type: ignore[method-assign]
    with pytest.raises(Killed):
        world.notify(history_id)
    world.gmail.get_raw = original  # type: ignore[method-assign]
    assert world.cursor() == history_id
    with pytest.raises(SyncBusy):  # its redelivery while the dead run's lease lasts
        world.notify(history_id)
    world.clock.advance(CLAIM_LEASE_S + 1)
    report = world.notify(history_id)  # behind the cursor, but owed a listing
    second, later = arrived[0]
    assert report.outcome == "ingested" and report.repaired == 1
    assert report.started == [message_trace_id(MAILBOX, second)]
    assert world.cursor() == later and len(world.traces()) == 2
    assert first != second

"""Reviewer digests (``approvals/digests.py``) on the embedded store: the interval, the daily
hour, the count per graph, one sign-in link, exactly once under racing callers and crashes.

Mutations tried: the ``busy`` check of a live claim removed -> the race test sends two;
``_finish`` not recording ``last_daily`` -> the daily test sends a second summary;
the lease ignored on takeover -> the crash test sends before the lease ends.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.approvals.digests import DIGEST_LEASE_S, digest_path
from inboxflow.approvals.grounds import Grounds
from inboxflow.approvals.sign_in import SignIns
from inboxflow.clock import FakeClock
from inboxflow.errors import RetryableError
from inboxflow.ports.notifier import Notification, NotificationRefused, Notifier
from tests.harness.digest import SIGN_IN, URL, DigestWorld, digest_config, race, utc

ANA = "ana@brightlane.io"
BEN = "ben@brightlane.io"


@pytest.fixture
def store(tmp_path: Path) -> SqliteCheckpointStore:
    return SqliteCheckpointStore(tmp_path / "inboxflow.db")


def world_at(
    store: SqliteCheckpointStore, when: str, reviewers: dict[str, Any] | None = None, **digest: Any
) -> DigestWorld:
    config = digest_config(
        reviewers if reviewers is not None else {ANA: {"notify": "digest"}},
        {"daily_at": None, **digest},
    )
    return DigestWorld(store, FakeClock(utc(when)), config)


def test_a_digest_counts_pending_approvals_per_graph_with_one_sign_in_link(
    store: SqliteCheckpointStore,
) -> None:
    w = world_at(store, "2027-01-15 10:00")
    w.pend([ANA], "support")
    w.pend([ANA, BEN], "pipeline")
    w.pend([ANA], "pipeline", deadline_in_s=-60)  # overdue
    w.pend([BEN], "planner")  # not ana's
    w.decide(w.pend([ANA], "assistant"))  # decided: not waiting

    outcome = w.digests.send_due(ANA)

    assert outcome.action == "sent" and outcome.kind == "new"
    assert outcome.counts == {"pipeline": 2, "support": 1}
    [message] = w.digests_to(ANA)
    assert message["subject"] == "3 decisions wait for you"
    assert not URL.search(message["subject"])
    text, html = message["text"], message["html"]
    assert "pipeline: 2" in text and "support: 1" in text and "1 overdue" in text
    assert "planner" not in text and "assistant" not in text
    # One link, in both parts: the reviewer's sign-in, which signs in ana and only once.
    assert len(set(URL.findall(text))) == 1 and len(URL.findall(text)) == 1
    assert len(re.findall(r'href="', html)) == 1
    [link] = URL.findall(text)
    assert SIGN_IN.fullmatch(link) and link == message["link"] and f'href="{link}"' in html
    sign_ins = SignIns(Grounds(store, w.clock, w.approval_config))
    token = SIGN_IN.fullmatch(link).group(1)  # type: ignore[union-attr]
    assert sign_ins.redeem(token) == ANA
    # The stored copy keeps no credential.
    [(_, copy)] = [row for row in store.list("outbox") if row[1]["trace_key"] == outcome.digest_id]
    assert token not in copy["text"] and token not in copy["html"]


def test_at_most_one_digest_per_interval_and_a_held_back_approval_goes_out_after_it(
    store: SqliteCheckpointStore,
) -> None:
    w = world_at(store, "2027-01-15 10:00", interval_minutes=60)
    w.pend([ANA])
    assert w.digests.send_due(ANA).action == "sent"

    w.clock.advance(10 * 60)
    w.pend([ANA], "support")  # new, but a digest went out 10 minutes ago
    assert w.digests.send_due(ANA).action == "not_due"
    w.clock.advance(49 * 60)
    assert [o.action for o in w.digests.sweep()] == ["not_due"]
    assert len(w.digests_to(ANA)) == 1

    w.clock.advance(60)  # an hour after the first
    [outcome] = w.digests.sweep()
    assert outcome.action == "sent" and outcome.counts == {"pipeline": 1, "support": 1}
    assert len(w.digests_to(ANA)) == 2

    # Nothing new: no digest, however long the wait.
    w.clock.advance(5 * 3600)
    assert w.digests.sweep()[0].action == "not_due"
    assert len(w.digests_to(ANA)) == 2


def test_the_daily_summary_goes_out_once_a_day_at_the_set_hour_in_the_reviewers_zone(
    store: SqliteCheckpointStore,
) -> None:
    # 09:00 in Paris is 08:00 UTC in January.
    w = world_at(store, "2027-01-15 07:00", daily_at="09:00", timezone="Europe/Paris")
    first = w.pend([ANA])
    assert w.digests.send_due(ANA).kind == "new"

    w.clock.advance(59 * 60)  # 07:59 UTC, 08:59 in Paris
    assert w.digests.sweep()[0].action == "not_due"
    w.clock.advance(60)  # 09:00 in Paris
    [daily] = w.digests.sweep()
    assert (daily.action, daily.kind) == ("sent", "daily")
    assert w.digests_to(ANA)[-1]["subject"] == "Daily summary: 1 decision waits for you"

    for hours in (0.5, 4, 10):  # later the same day: nothing new, the day's summary is out
        w.clock.advance(hours * 3600)
        assert w.digests.sweep()[0].action == "not_due"
    assert len(w.digests_to(ANA)) == 2

    # The next day at 09:00 Paris: the summary again (it may come with nothing new).
    w.clock.advance(utc("2027-01-16 08:00") - w.clock.now())
    assert (w.digests.sweep()[0].kind, len(w.digests_to(ANA))) == ("daily", 3)

    # A day with nothing waiting: nothing is sent, and that day is done.
    w.decide(first)
    w.clock.advance(86400)
    assert w.digests.sweep()[0].action == "nothing_waits"
    w.pend([ANA])
    w.clock.advance(3600)  # new, and quiet for a day: a "new" digest, not a second daily
    assert w.digests.sweep()[0].kind == "new"
    assert len(w.digests_to(ANA)) == 4


def test_only_reviewers_who_take_digests_get_them(store: SqliteCheckpointStore) -> None:
    w = world_at(
        store,
        "2027-01-15 10:00",
        reviewers={ANA: {"notify": "both"}, BEN: {"notify": "each"}},
    )
    approval = w.pend([ANA, BEN, "gil@brightlane.io"])
    assert w.digests.on_pause(approval) is None
    assert [m["to"] for m in w.inbox] == [ANA]
    assert w.digests.send_due(BEN).action == "not_digest"
    assert [o.reviewer for o in w.digests.sweep()] == [ANA]


def test_two_racing_callers_send_one_digest(tmp_path: Path) -> None:
    path = tmp_path / "inboxflow.db"
    stores = [SqliteCheckpointStore(path) for _ in range(3)]
    w = DigestWorld(
        stores[0],
        FakeClock(utc("2027-01-15 10:00")),
        digest_config({ANA: {"notify": "digest", "digest": {"daily_at": "08:00"}}}),
    )
    w.pend([ANA])

    outcomes = race(w, ANA, stores[:2])

    assert sorted(o.action for o in outcomes) == ["busy", "sent"]
    assert len(w.digests_to(ANA)) == 1
    record = w.digests.record(ANA)
    assert record is not None and record.sending is None and len(record.sent) == 1
    # The summary of the day is out: a third caller finds nothing due.
    assert w.make(stores[2]).send_due(ANA).action == "not_due"


def _crash_at(point: str) -> Any:
    def fault(reached: str) -> None:
        if reached == point:
            raise SimulatedCrash(point)

    return fault


def test_a_crash_between_the_claim_and_the_send_sends_it_once_after_the_lease(
    store: SqliteCheckpointStore,
) -> None:
    w = world_at(store, "2027-01-15 10:00")
    w.pend([ANA])
    with pytest.raises(SimulatedCrash):
        w.make(fault=_crash_at("after_claim")).send_due(ANA)
    assert w.digests_to(ANA) == []
    claim = w.digests.record(ANA).sending  # type: ignore[union-attr]
    assert claim is not None

    # Within the lease the claim may still be sending: nobody else does.
    w.clock.advance(DIGEST_LEASE_S - 1)
    assert w.digests.send_due(ANA).action == "busy"
    w.clock.advance(1)
    outcome = w.digests.send_due(ANA)
    assert (outcome.action, outcome.digest_id) == ("sent", claim.digest_id)
    assert len(w.digests_to(ANA)) == 1
    w.clock.advance(DIGEST_LEASE_S)
    assert w.digests.send_due(ANA).action == "not_due"
    assert len(w.digests_to(ANA)) == 1


def test_a_crash_after_the_send_is_found_and_not_sent_again(store: SqliteCheckpointStore) -> None:
    w = world_at(store, "2027-01-15 10:00")
    w.pend([ANA])
    with pytest.raises(SimulatedCrash):
        w.make(fault=_crash_at("after_send")).send_due(ANA)
    assert len(w.digests_to(ANA)) == 1
    w.clock.advance(DIGEST_LEASE_S)
    assert w.digests.send_due(ANA).action == "reconciled"
    record = w.digests.record(ANA)
    assert record is not None and record.sending is None and record.sent[-1]["reconciled"]
    assert len(w.digests_to(ANA)) == 1


class FlakyChannel(Notifier):
    """Unavailable (``RetryableError``) or refusing for good, then fine."""

    def __init__(self, inner: Notifier, failure: Exception) -> None:
        self.inner = inner
        self.failure: Exception | None = failure

    def send(self, note: Notification) -> dict[str, Any]:
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure
        return self.inner.send(note)

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        return self.inner.find(trace_key, sender)


def test_an_unavailable_channel_gives_the_claim_back_for_the_next_caller(
    store: SqliteCheckpointStore,
) -> None:
    w = world_at(store, "2027-01-15 10:00")
    w.pend([ANA])
    digests = w.make(notifier=FlakyChannel(w.outbox(), RetryableError("503")))
    with pytest.raises(RetryableError):
        digests.send_due(ANA)
    assert digests.send_due(ANA).action == "sent"  # at once: no lease to wait out
    assert len(w.digests_to(ANA)) == 1


def test_a_refusal_is_recorded_and_does_not_block_the_next_digest(
    store: SqliteCheckpointStore,
) -> None:
    w = world_at(store, "2027-01-15 10:00")
    w.pend([ANA])
    digests = w.make(notifier=FlakyChannel(w.outbox(), NotificationRefused("ses", "unverified")))
    outcome = digests.send_due(ANA)
    assert outcome.action == "refused" and outcome.detail == "ses: unverified"
    record = w.digests.record(ANA)
    assert record is not None and record.sent[-1]["error"] == "ses: unverified"
    w.clock.advance(3600)
    w.pend([ANA])
    assert digests.send_due(ANA).action == "sent"


def test_what_a_digest_shows_is_escaped(store: SqliteCheckpointStore) -> None:
    w = world_at(store, "2027-01-15 10:00")
    w.pend([ANA], "<script>alert(1)</script>")
    w.digests.send_due(ANA)
    [message] = w.digests_to(ANA)
    assert "<script>" not in message["html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in message["html"]


def test_the_record_is_one_document_per_reviewer_whatever_the_spelling(
    store: SqliteCheckpointStore,
) -> None:
    assert digest_path(ANA) == digest_path(" Ana@Brightlane.io ")
    assert digest_path(ANA) != digest_path(BEN)
    assert "/" not in digest_path(ANA).partition("/")[2]


def test_a_pause_within_the_interval_reads_the_record_and_lists_nothing(
    store: SqliteCheckpointStore,
) -> None:
    w = world_at(store, "2027-01-15 10:00")
    w.pend([ANA])
    assert w.digests.send_due(ANA).action == "sent"
    w.clock.advance(60)
    w.pend([ANA])
    listed: list[str] = []
    original = store.list

    def counted(collection: str, *args: Any, **kwargs: Any) -> Any:
        listed.append(collection)
        return original(collection, *args, **kwargs)

    store.list = counted  # type: ignore[method-assign]
    assert w.digests.send_due(ANA).action == "not_due"
    assert listed == []
    w.clock.advance(3600)
    assert w.digests.send_due(ANA).action == "sent"
    assert listed == ["approvals"]

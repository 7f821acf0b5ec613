"""One contract for every GmailReader adapter: InMemoryGmailReader, and GoogleApiGmailReader
on the Gmail double through the real googleapiclient."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import pytest

from inboxflow.adapters.google_gmail_reader import GoogleApiGmailReader
from inboxflow.dev.adapters.memory_gmail_reader import InMemoryGmailReader
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.errors import RetryableError
from inboxflow.ports.gmail_reader import (
    INBOX,
    SENT,
    GmailError,
    GmailRateLimited,
    GmailReader,
    GmailUnavailable,
    HistoryExpired,
    MessageGone,
)

MAILBOX = "maya.chen@brightlane.io"
PAGE_SIZE = 3


def eml(n: int) -> bytes:
    return (
        f"From: Customer {n} <customer{n}@example.com>\r\nTo: {MAILBOX}\r\n"
        f"Subject: Question {n}\r\nMessage-ID: <q{n}@example.com>\r\n"
        "Date: Thu, 14 Jan 2027 09:12:31 +0000\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\n"
        f"What does the team plan cost for {n} seats?\r\n"
    ).encode()


@dataclass
class World:
    """A reader plus the mailbox hooks the contract needs (one mailbox: ``MAILBOX``)."""

    reader: GmailReader
    deliver: Callable[[bytes, Sequence[str]], str]
    """Put a message in the mailbox with these labels; returns its Gmail id."""
    relabel: Callable[[str, Sequence[str], Sequence[str]], None]
    """``(gmail_id, add, remove)``: a label change (a history record, not ``messageAdded``)."""
    history_id: Callable[[], int]
    expire_history: Callable[[], None]
    """Forget the history so far: older cursors answer 404."""
    fail_next: Callable[[str, int], None]
    """``(method, status)``: the next call of ``method`` fails as that HTTP status would."""


def _memory_world() -> Iterator[World]:
    gmail = InMemoryGmailReader(page_size=PAGE_SIZE)

    def fail_next(method: str, status: int) -> None:
        error: GmailError = (
            InMemoryGmailReader.rate_limited()
            if status == 429
            else GmailUnavailable(f"{status} Server Error", status)
        )
        gmail.fail_next(method, error)

    yield World(
        gmail,
        deliver=lambda raw, labels: gmail.deliver(MAILBOX, raw, labels),
        relabel=lambda gmail_id, add, remove: gmail.change_labels(MAILBOX, gmail_id, add, remove),
        history_id=lambda: gmail.history_id(MAILBOX),
        expire_history=lambda: gmail.expire_history(MAILBOX),
        fail_next=fail_next,
    )


def _google_world() -> Iterator[World]:
    with GoogleApiDouble() as double:
        yield World(
            GoogleApiGmailReader(api_url=double.url, page_size=PAGE_SIZE, environ=os.environ),
            deliver=lambda raw, labels: double.deliver(MAILBOX, raw, labels),
            relabel=lambda gmail_id, add, remove: (
                double.gmail.modify(
                    MAILBOX, gmail_id, {"addLabelIds": list(add), "removeLabelIds": list(remove)}
                )
                and None
            ),
            history_id=lambda: double.history_id(MAILBOX),
            expire_history=lambda: double.expire_history(MAILBOX, double.history_id(MAILBOX)),
            fail_next=lambda method, status: double.fail_next(method, status),
        )


@pytest.fixture(params=["memory", "google"])
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    yield from (_memory_world if request.param == "memory" else _google_world)()


def _history_pages(world: World, start: int) -> list[tuple[list[str], int]]:
    """Every page of ``list_history`` after ``start``: (added ids, reported history id)."""
    pages: list[tuple[list[str], int]] = []
    token: str | None = None
    while True:
        page = world.reader.list_history(MAILBOX, start, token)
        pages.append(([a.gmail_id for a in page.added], page.history_id))
        token = page.next_page_token
        if token is None:
            return pages


# --- history ---------------------------------------------------------------------------------


def test_history_pages_to_the_end_through_every_message_added_after_the_cursor(
    world: World,
) -> None:
    world.deliver(eml(0), [INBOX])  # before the cursor: not reported
    start = world.history_id()
    ids = [world.deliver(eml(n), [INBOX]) for n in range(1, 8)]
    pages = _history_pages(world, start)
    assert [len(added) for added, _ in pages] == [3, 3, 1]
    assert [gmail_id for added, _ in pages for gmail_id in added] == ids
    assert pages[-1][1] == world.history_id()


def test_history_reports_messages_added_with_their_labels_and_nothing_else(world: World) -> None:
    start = world.history_id()
    inbox = world.deliver(eml(1), [INBOX, "UNREAD"])
    sent = world.deliver(eml(2), [SENT])
    world.relabel(inbox, ["STARRED"], ["UNREAD"])  # a change, but no message added
    page = world.reader.list_history(MAILBOX, start)
    assert [a.gmail_id for a in page.added] == [inbox, sent]
    assert [a.gmail_id for a in page.added if INBOX in a.label_ids] == [inbox]
    assert SENT in page.added[1].label_ids and all(a.thread_id for a in page.added)
    assert page.history_id == world.history_id() > start + 2
    later = world.reader.list_history(MAILBOX, world.history_id())
    assert list(later.added) == [] and later.next_page_token is None


def test_a_cursor_older_than_the_kept_history_answers_history_expired(world: World) -> None:
    start = world.history_id()
    world.deliver(eml(1), [INBOX])
    world.expire_history()
    with pytest.raises(HistoryExpired) as raised:
        world.reader.list_history(MAILBOX, start)
    assert raised.value.status == 404 and not isinstance(raised.value, RetryableError)
    assert list(world.reader.list_history(MAILBOX, world.history_id()).added) == []


# --- messages --------------------------------------------------------------------------------


def test_get_raw_returns_the_message_bytes_and_its_metadata(world: World) -> None:
    raw = eml(1)
    gmail_id = world.deliver(raw, [INBOX, "UNREAD"])
    message = world.reader.get_raw(MAILBOX, gmail_id)
    assert message.gmail_id == gmail_id and message.raw == raw
    assert {INBOX, "UNREAD"} <= set(message.label_ids) and message.thread_id
    assert message.internal_date_ms is not None and message.internal_date_ms > 0
    assert message.history_id is not None and message.history_id <= world.history_id()


def test_get_raw_of_a_message_that_is_not_there_answers_message_gone(world: World) -> None:
    with pytest.raises(MessageGone) as raised:
        world.reader.get_raw(MAILBOX, "18f0000000ffffff")
    assert raised.value.status == 404 and not isinstance(raised.value, RetryableError)


def test_list_messages_keeps_the_labels_asked_for_newest_first_in_pages(world: World) -> None:
    inbox = [world.deliver(eml(n), [INBOX]) for n in range(4)]
    world.deliver(eml(9), [SENT])
    listed: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        page = world.reader.list_messages(MAILBOX, [INBOX], "", token)
        listed += [m.gmail_id for m in page.messages]
        pages += 1
        token = page.next_page_token
        if token is None:
            break
    assert listed == inbox[::-1] and pages == 2
    assert [m.gmail_id for m in world.reader.list_messages(MAILBOX, [SENT], "").messages] != []


def test_watch_answers_the_current_history_id_and_a_future_expiration(world: World) -> None:
    world.deliver(eml(1), [INBOX])
    result = world.reader.watch(MAILBOX, "projects/p/topics/gmail", [INBOX])
    assert result.history_id == world.history_id()
    assert result.expiration_ms > time.time() * 1000


# --- failures --------------------------------------------------------------------------------

CALLS: dict[str, Callable[[GmailReader, int], object]] = {
    "history.list": lambda reader, start: reader.list_history(MAILBOX, start),
    "messages.list": lambda reader, start: reader.list_messages(MAILBOX, [INBOX], ""),
    "watch": lambda reader, start: reader.watch(MAILBOX, "projects/p/topics/gmail", [INBOX]),
}


@pytest.mark.parametrize("method", sorted(CALLS))
@pytest.mark.parametrize(
    ("status", "error"), [(429, GmailRateLimited), (500, GmailUnavailable), (503, GmailUnavailable)]
)
def test_rate_limits_and_outages_raise_retryable_errors_once(
    world: World, method: str, status: int, error: type[GmailError]
) -> None:
    start = world.history_id()
    world.fail_next(method, status)
    with pytest.raises(error) as raised:
        CALLS[method](world.reader, start)
    assert raised.value.status == status and isinstance(raised.value, RetryableError)
    CALLS[method](world.reader, start)  # the reader itself does not retry: the next call works


def test_a_failed_fetch_is_retryable_and_the_next_fetch_works(world: World) -> None:
    gmail_id = world.deliver(eml(1), [INBOX])
    world.fail_next("messages.get", 503)
    with pytest.raises(GmailUnavailable):
        world.reader.get_raw(MAILBOX, gmail_id)
    assert world.reader.get_raw(MAILBOX, gmail_id).raw == eml(1)


# --- GoogleApiGmailReader only: what the real API makes necessary ----------------------------


@pytest.fixture
def google() -> Iterator[tuple[GoogleApiGmailReader, GoogleApiDouble]]:
    with GoogleApiDouble() as double:
        yield GoogleApiGmailReader(api_url=double.url, environ=os.environ), double


@pytest.mark.parametrize(
    ("status", "reason", "error"),
    [
        (403, "rateLimitExceeded", GmailRateLimited),
        (403, "userRateLimitExceeded", GmailRateLimited),
        (403, "quotaExceeded", GmailRateLimited),
        (408, None, GmailUnavailable),
        (502, None, GmailUnavailable),
    ],
)
def test_quota_limits_and_timeouts_are_retryable(
    google: tuple[GoogleApiGmailReader, GoogleApiDouble],
    status: int,
    reason: str | None,
    error: type[GmailError],
) -> None:
    reader, double = google
    double.fail_next("history.list", status, reason=reason)
    with pytest.raises(error, match=str(status)) as raised:
        reader.list_history(MAILBOX, 1)
    assert raised.value.status == status and isinstance(raised.value, RetryableError)


@pytest.mark.parametrize(
    ("status", "reason"), [(403, "insufficientPermissions"), (400, None), (401, None)]
)
def test_other_refusals_are_permanent_gmail_errors(
    google: tuple[GoogleApiGmailReader, GoogleApiDouble], status: int, reason: str | None
) -> None:
    reader, double = google
    double.fail_next("messages.list", status, reason=reason)
    with pytest.raises(GmailError, match=r"gmail\.users\.messages\.list answered") as raised:
        reader.list_messages(MAILBOX, [INBOX], "")
    assert raised.value.status == status and not isinstance(raised.value, RetryableError)


def test_no_answer_at_all_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    reader = GoogleApiGmailReader(
        api_url=f"http://127.0.0.1:{port}", timeout_s=2, environ=os.environ
    )
    with pytest.raises(GmailUnavailable, match="no answer") as raised:
        reader.list_history(MAILBOX, 1)
    assert raised.value.status == 0


def test_one_client_serves_every_mailbox_against_the_double(
    google: tuple[GoogleApiGmailReader, GoogleApiDouble],
) -> None:
    reader, double = google
    other = "jordan@brightlane.io"
    mine = double.deliver(MAILBOX, eml(1))
    theirs = double.deliver(other, eml(2))
    assert reader.get_raw(MAILBOX, mine).raw == eml(1)
    assert reader.get_raw(other, theirs).raw == eml(2)
    with pytest.raises(MessageGone):
        reader.get_raw(MAILBOX, theirs)

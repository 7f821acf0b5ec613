"""The webhook channel against a local receiver: cards, no unfurled token, retries, refusals,
one Chat card per notification (its ids) even after a crash; Slack unchanged."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.webhook_notifier import WebhookNotifier, chat_message_ids
from inboxflow.clock import FakeClock
from inboxflow.engine.effects import EffectJournal
from inboxflow.errors import RetryableError
from inboxflow.ports.notifier import Notification, NotificationRefused
from tests.harness.webhook_receiver import WebhookReceiver

LINK = "https://approvals.test/a/ap-1?t=SECRET-token_123"
TEXT = f"Approve a reply: decide here:\n{LINK}\n\n> <script>alert(1)</script> & <b>bold</b>"
SUBJECT = "Approve reply to eve@x.io: <img src=x onerror=alert(1)>"


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver().running() as running:
        yield running


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteCheckpointStore]:
    store = SqliteCheckpointStore(tmp_path / "w.db")
    yield store
    store.close()


def _notifier(store, receiver, format="chat", sleeps=None, attempts=4) -> WebhookNotifier:
    return WebhookNotifier(
        store,
        receiver.url,
        format,
        FakeClock(),
        timeout=(2, 2),
        attempts=attempts,
        sleep=(sleeps.append if sleeps is not None else lambda s: None),
    )


def _send(notifier: WebhookNotifier, key: str = "tr:5:notify-0-ana") -> dict:
    return notifier.send(Notification("ana@x.io", SUBJECT, TEXT, "<p>ignored</p>", key, None, LINK))


def test_a_chat_card_carries_the_link_only_in_its_button_and_escapes_everything(
    store, receiver
) -> None:
    receipt = _send(_notifier(store, receiver))
    (post,) = receiver.posts
    card = post["cardsV2"][0]["card"]
    widgets = card["sections"][0]["widgets"]
    button = widgets[1]["buttonList"]["buttons"][0]
    assert button["onClick"]["openLink"]["url"] == LINK
    everything_but_the_button = json.dumps(
        {**post, "cardsV2": [{"card": {**card, "sections": [{"widgets": widgets[:1]}]}}]}
    )
    assert "SECRET-token_123" not in everything_but_the_button  # no previewable copy
    paragraph = widgets[0]["textParagraph"]["text"]
    assert "&lt;script&gt;" in paragraph and "<script>" not in paragraph
    assert "&lt;b&gt;bold&lt;/b&gt;" in paragraph and "&amp;" in paragraph
    assert "<img" not in post["text"] and "<img" not in card["header"]["title"]
    # The receipt: found again by key, the stored copy's token redacted.
    notifier = _notifier(store, receiver)
    assert notifier.find("tr:5:notify-0-ana") == receipt
    assert notifier.find("tr:5:notify-0-ben") is None
    (copy,) = [doc for _, doc in store.list("outbox")]
    assert copy["channel"] == "webhook" and copy["delivered"] is True
    assert "SECRET" not in json.dumps(copy)


def test_slack_gets_previews_off_a_button_and_escaped_mrkdwn(store, receiver) -> None:
    _send(_notifier(store, receiver, "slack"))
    (post,) = receiver.posts
    assert post["unfurl_links"] is False and post["unfurl_media"] is False
    section = next(b for b in post["blocks"] if b["type"] == "section")["text"]["text"]
    actions = next(b for b in post["blocks"] if b["type"] == "actions")
    assert actions["elements"][0]["url"] == LINK
    assert LINK not in section and "SECRET" not in post["text"]
    assert "https://approvals.test" not in section  # not even redacted: the button has it
    assert "[Review and decide: the button below]" in section
    assert "&lt;script&gt;" in section and "<script>" not in section
    assert "<img" not in post["text"]


def test_429_is_retried_after_what_retry_after_says(store, receiver) -> None:
    receiver.answer(429, '{"error": "slow down"}', Retry_After="3")
    sleeps: list[float] = []
    _send(_notifier(store, receiver, sleeps=sleeps))
    assert len(receiver.posts) == 2
    assert sleeps == [3.0]


def test_5xx_is_retried_with_backoff_then_left_to_redelivery(store, receiver) -> None:
    for _ in range(3):
        receiver.answer(503, "unavailable")
    sleeps: list[float] = []
    with pytest.raises(RetryableError, match="3 tries failed, last: HTTP 503"):
        _send(_notifier(store, receiver, sleeps=sleeps, attempts=3))
    assert len(receiver.posts) == 3 and sleeps == [0.5, 1.0]
    assert store.list("outbox") == []  # nothing accepted: no receipt, a redelivery sends
    receiver.answer(500)
    _send(_notifier(store, receiver, sleeps=sleeps))
    assert len(receiver.posts) == 5


def test_a_permanent_4xx_is_refused_without_a_retry(store, receiver) -> None:
    receiver.answer(404, '{"error": "no such space"}')
    with pytest.raises(NotificationRefused, match="webhook: HTTP 404"):
        _send(_notifier(store, receiver))
    assert len(receiver.posts) == 1
    assert store.list("outbox") == []


def test_no_answer_is_retryable(store) -> None:
    notifier = WebhookNotifier(
        store, "http://127.0.0.1:9/hook", attempts=2, sleep=lambda s: None, timeout=(0.5, 0.5)
    )
    with pytest.raises(RetryableError, match="2 tries failed"):
        _send(notifier)


# --- one card per notification: the ids of spaces.messages.create ------------------------


class CrashBeforeTheReceipt(SqliteCheckpointStore):
    """The process dies once as the receipt is written: the chat has the card, the outbox
    and the journal do not (the journal's entry stays ``started``)."""

    crashed = False

    def set(self, path: str, doc: dict) -> None:
        if path.startswith("outbox/") and not self.crashed:
            self.crashed = True
            raise SimulatedCrash(path)
        super().set(path, doc)


def _journal_send(journal: EffectJournal, notifier: WebhookNotifier, name: str) -> dict:
    return journal.run(
        "tr",
        5,
        name,
        lambda key: _send(notifier, key),
        lambda key: notifier.find(key),
    )


def test_a_chat_card_retried_after_a_crash_is_posted_once(tmp_path: Path, receiver) -> None:
    store = CrashBeforeTheReceipt(tmp_path / "crash.db")
    journal = EffectJournal(store, FakeClock())
    notifier = _notifier(store, receiver)
    with pytest.raises(SimulatedCrash):
        _journal_send(journal, notifier, "notify-0-ana")
    assert store.get("effects/tr:5:notify-0-ana")["status"] == "started"  # type: ignore[index]
    assert len(receiver.messages) == 1 and store.list("outbox") == []

    receipt = _journal_send(journal, notifier, "notify-0-ana")  # the redelivery

    assert receiver.statuses == [200, 200]  # posted again (nothing to find), ...
    (card,) = receiver.messages  # ... answered with the first card, not a second one
    assert receiver.queries[0] == receiver.queries[1]
    assert (
        receipt["id"] == card["name"] == "spaces/AAAA/messages/" + card["clientAssignedMessageId"]
    )
    assert notifier.find("tr:5:notify-0-ana") == receipt
    assert store.get("effects/tr:5:notify-0-ana")["status"] == "done"  # type: ignore[index]
    store.close()


def test_already_exists_counts_as_sent_when_chat_forgot_the_request_id(
    tmp_path: Path, store, receiver
) -> None:
    first = _send(_notifier(store, receiver))
    receiver.forget_request_ids()
    lost = SqliteCheckpointStore(tmp_path / "lost.db")  # as if the receipt had not been kept
    again = _send(_notifier(lost, receiver))
    assert receiver.statuses == [200, 409]
    assert len(receiver.messages) == 1
    assert again == first  # the same message, named by its custom id
    assert _notifier(lost, receiver).find("tr:5:notify-0-ana") == first
    lost.close()


def test_another_409_is_still_a_refusal(store, receiver) -> None:
    receiver.answer(409, '{"error": {"code": 409, "status": "ABORTED"}}')
    with pytest.raises(NotificationRefused, match="HTTP 409"):
        _send(_notifier(store, receiver))
    assert store.list("outbox") == []


def test_a_throttled_try_and_its_retry_carry_the_same_ids(store, receiver) -> None:
    receiver.answer(503, "unavailable")
    _send(_notifier(store, receiver))
    assert len(receiver.posts) == 2 and receiver.queries[0] == receiver.queries[1]


def test_different_notifications_never_share_an_id(store, receiver) -> None:
    keys = [
        "tr:5:notify-0-ana",
        "tr:5:notify-0-ben",
        "tr:5:notify-1-ana",
        "tr:6:notify-0-ana",
        "tr2:5:notify-0-ana",
        "TR:5:NOTIFY-0-ANA",
        "tr:5:notify-0-" + "ä" * 300,
    ]
    notifier = _notifier(store, receiver)
    for key in keys:
        _send(notifier, key)
    assert len(receiver.messages) == len(keys)  # every one created, none refused
    request_ids = [q["requestId"] for q in receiver.queries]
    message_ids = [q["messageId"] for q in receiver.queries]
    assert len(set(request_ids)) == len(set(message_ids)) == len(keys)
    for request_id, message_id in zip(request_ids, message_ids, strict=True):
        assert str(uuid.UUID(request_id)) == request_id
        assert re.fullmatch(r"client-[a-z0-9-]{1,56}", message_id)
    # The documented shape, from the function itself too (the double checks it as Chat would).
    assert chat_message_ids("k") == chat_message_ids("k") != chat_message_ids("k2")


def test_the_ids_join_the_webhook_url_without_touching_its_key_and_token(store, receiver) -> None:
    notifier = _notifier(store, receiver)
    notifier.url = receiver.url + "?key=KEY-1&token=abc%3D"
    _send(notifier)
    (query,) = receiver.queries
    assert query["key"] == "KEY-1" and query["token"] == "abc="
    assert set(query) == {"key", "token", "requestId", "messageId"}


def test_slack_is_posted_again_after_a_crash_it_takes_no_key(tmp_path: Path) -> None:
    with WebhookReceiver(chat=False).running("/services/T0/B0/XYZ") as slack:
        store = CrashBeforeTheReceipt(tmp_path / "slack.db")
        journal = EffectJournal(store, FakeClock())
        notifier = _notifier(store, slack, "slack")
        with pytest.raises(SimulatedCrash):
            _journal_send(journal, notifier, "notify-0-ana")
        _journal_send(journal, notifier, "notify-0-ana")
        assert slack.queries == [{}, {}]  # nothing added to a Slack URL
        assert len(slack.messages) == 2  # the known leftover: two cards
        store.close()

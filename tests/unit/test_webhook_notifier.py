"""The webhook channel against a local receiver: cards, no unfurled token, retries, refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.webhook_notifier import WebhookNotifier
from inboxflow.clock import FakeClock
from inboxflow.errors import RetryableError
from inboxflow.ports.notifier import NotificationRefused
from tests.webhook_receiver import WebhookReceiver

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
    return notifier.send("ana@x.io", SUBJECT, TEXT, "<p>ignored</p>", key, None, LINK)


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

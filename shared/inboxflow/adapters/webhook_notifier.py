"""Reviewer notifications posted to a Google Chat or Slack incoming webhook.

The message is a card: the subject, a summary (the text body without the
link, escaped for the chat's markup) and a "Review and decide" button that
carries the review link. The link is never in the message text: Slack gets
``unfurl_links: false`` as well, and Google Chat only previews links of the
text, never a card button's, so no preview fetches (and shows) the token URL.

Answers: 2xx sent; 429 and 5xx (and no answer) retried, honouring
``Retry-After``, then ``RetryableError``; any other 4xx is permanent
(``NotificationRefused``, no retry). A webhook cannot be searched afterwards:
the receipt is the outbox copy written the moment the chat accepted it.
"""

from __future__ import annotations

import email.utils
import html
import logging
import time
from collections.abc import Callable
from typing import Any, Literal

from ..errors import RetryableError
from ..ports.checkpoint import CheckpointStore
from ..ports.notifier import NotificationRefused, Notifier
from .notifiers import find_copy, keep_copy

log = logging.getLogger(__name__)

SUMMARY_CHARS = 2500
"""Slack caps a section's text at 3000 characters; Chat cards take more."""
MAX_WAIT_S = 30.0
BUTTON = "Review and decide"
WebhookFormat = Literal["chat", "slack"]


class WebhookNotifier(Notifier):
    """Posts each notification as one JSON card to an incoming webhook.

    Args:
        store: where the receipt (the redacted outbox copy) is kept.
        url: the webhook URL (a credential: keep it in a secret, see ``url_env``).
        format: ``chat`` (Google Chat ``cardsV2``) or ``slack`` (Block Kit).
        clock: stamps ``sent_at``.
        timeout: ``(connect, read)`` seconds of each post.
        attempts: tries when throttled or unavailable.
        sleep: waits between tries (tests pass a recorder).
        session: a ``requests`` session (default: one of its own).
    """

    channel = "webhook"

    def __init__(
        self,
        store: CheckpointStore,
        url: str,
        format: WebhookFormat = "chat",
        clock: Any = None,
        timeout: tuple[float, float] = (5.0, 10.0),
        attempts: int = 4,
        sleep: Callable[[float], None] = time.sleep,
        session: Any = None,
    ) -> None:
        self.store = store
        self.url = url
        self.format = format
        self.clock = clock
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.sleep = sleep
        self._session = session

    @property
    def session(self) -> Any:
        """The HTTP session (``requests`` imported on first use)."""
        if self._session is None:
            import requests

            self._session = requests.Session()
        return self._session

    def send(
        self,
        to: str,
        subject: str,
        text: str,
        html: str,
        trace_key: str,
        sender: str | None = None,
        link: str | None = None,
    ) -> dict[str, Any]:
        summary = _summary(text, link)
        body = (
            slack_message(subject, summary, link)
            if self.format == "slack"
            else chat_message(subject, summary, link)
        )
        self._post(body)
        now = float(self.clock.now()) if self.clock is not None else time.time()
        message = {
            "to": to,
            "subject": subject,
            "text": text,
            "html": html,
            "trace_key": trace_key,
            "from": None,
            "sent_at": now,
            "channel": self.channel,
        }
        return keep_copy(self.store, message, delivered=True, format=self.format)

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        return find_copy(self.store, trace_key)

    def _post(self, body: dict[str, Any]) -> None:
        import requests

        last = ""
        for attempt in range(1, self.attempts + 1):
            wait = min(MAX_WAIT_S, 0.5 * 2 ** (attempt - 1))
            try:
                answer = self.session.post(self.url, json=body, timeout=self.timeout)
            except requests.RequestException as exc:  # no answer: connection, timeout
                last = f"{type(exc).__name__}"
            else:
                status = answer.status_code
                if 200 <= status < 300:
                    return
                last = f"HTTP {status}: {answer.text[:200]}".strip()
                if status != 429 and status < 500:
                    raise NotificationRefused(self.channel, last)
                wait = _retry_after(answer.headers.get("Retry-After"), wait)
            if attempt < self.attempts:
                log.info("webhook post: %s; try %s in %.1fs", last, attempt + 1, wait)
                self.sleep(wait)
        raise RetryableError(f"webhook: {self.attempts} tries failed, last: {last}")


def _retry_after(value: str | None, default: float) -> float:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), capped."""
    if not value:
        return default
    value = value.strip()
    if value.isdigit():
        return min(MAX_WAIT_S, float(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return min(MAX_WAIT_S, max(0.0, when.timestamp() - time.time()))


def _summary(text: str, link: str | None) -> str:
    """The text body with the review link taken out (it is the card's button), clipped."""
    from ..approvals.records import redact_tokens

    if link:
        text = text.replace(link, f"[{BUTTON}: the button below]")
    text = redact_tokens(text).strip()
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def chat_message(subject: str, summary: str, link: str | None) -> dict[str, Any]:
    """A Google Chat ``cardsV2`` message; ``textParagraph`` takes HTML, so all text is escaped."""
    widgets: list[dict[str, Any]] = [
        {"textParagraph": {"text": html.escape(summary).replace("\n", "<br>")}}
    ]
    if link:
        widgets.append(
            {"buttonList": {"buttons": [{"text": BUTTON, "onClick": {"openLink": {"url": link}}}]}}
        )
    return {
        "text": html.escape(subject),
        "cardsV2": [
            {
                "cardId": "inboxflow-review",
                "card": {
                    "header": {"title": html.escape(subject), "subtitle": "inboxflow"},
                    "sections": [{"widgets": widgets}],
                },
            }
        ],
    }


def slack_message(subject: str, summary: str, link: str | None) -> dict[str, Any]:
    """A Slack Block Kit message with previews off; ``mrkdwn`` control characters escaped."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": subject[:150]}},
        {"type": "section", "text": {"type": "mrkdwn", "text": _slack_escape(summary)}},
    ]
    if link:
        button = {"type": "button", "text": {"type": "plain_text", "text": BUTTON}, "url": link}
        blocks.append({"type": "actions", "elements": [button]})
    return {
        "text": _slack_escape(subject),
        "blocks": blocks,
        "unfurl_links": False,
        "unfurl_media": False,
    }


def _slack_escape(text: str) -> str:
    # Slack's rule: only &, < and > are control characters in message text.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

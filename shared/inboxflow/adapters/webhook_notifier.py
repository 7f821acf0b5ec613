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

Sending twice. A crash after the chat accepted a card and before the receipt
(and the journal's ``done``) is written makes the re-run post again. A Google
Chat webhook URL is the Chat API's ``spaces.messages.create``
(``POST /v1/spaces/SPACE/messages?key=...&token=...``; Google's webhook samples
add that method's query parameters, ``messageReplyOption``, to the URL), and
the method takes two ids (``google/chat/v1/message.proto``,
``CreateMessageRequest``), both derived here from the effect key
(``chat_message_ids``), so every post of one notification carries the same:

- ``requestId``: "Specifying an existing request ID returns the message
  created with that ID instead of creating a new message" (a UUID, the shape
  the reference recommends; name-based here, so that a retry repeats it);
- ``messageId``: a custom name (``client-``, at most 63 characters of
  lowercase letters, digits and hyphens, "unique within a space"). Creating a
  taken name is expected to fail ``ALREADY_EXISTS`` (``google/rpc/code.proto``:
  "the entity that a client attempted to create already exists", HTTP 409),
  taken here as "sent before"; another 409 (``ABORTED``) is still a refusal.
  It covers a retry after Chat forgot the request id (no window is documented).

The reference documents both for the method, not for webhooks in particular:
whether a webhook honours them is unverified against a live space. Slack
incoming webhooks take no idempotency key (a post is the JSON body and nothing
else): a Slack card may still be posted twice after such a crash.
"""

from __future__ import annotations

import email.utils
import hashlib
import html
import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlencode, urlsplit

from ..errors import RetryableError
from ..ports.documents import DocumentStore
from ..ports.notifier import Notification, NotificationRefused, Notifier
from .notifiers import find_copy, keep_copy, outbox_message

log = logging.getLogger(__name__)

SUMMARY_CHARS = 2500
"""Slack caps a section's text at 3000 characters; Chat cards take more."""
MAX_WAIT_S = 30.0
BUTTON = "Review and decide"
WebhookFormat = Literal["chat", "slack"]
REQUEST_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "inboxflow:webhook-notifier:request-id")
"""Namespace of the name-based ``requestId``s (a changed one would post in-flight cards again)."""


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
        store: DocumentStore,
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

    def send(self, note: Notification) -> dict[str, Any]:
        summary = _summary(note.text, note.link)
        if self.format == "slack":
            self._post(self.url, slack_message(note.subject, summary, note.link))
            chat_name = None
        else:
            request_id, message_id = chat_message_ids(note.trace_key)
            query = urlencode({"requestId": request_id, "messageId": message_id})
            url = f"{self.url}{'&' if '?' in self.url else '?'}{query}"
            answer = self._post(url, chat_message(note.subject, summary, note.link))
            chat_name = _chat_name(answer, self.url, message_id)
        now = float(self.clock.now()) if self.clock is not None else time.time()
        message = outbox_message(note, None, now, self.channel)
        receipt: dict[str, Any] = {"delivered": True, "format": self.format}
        if chat_name:
            receipt["message_id"] = chat_name  # the Chat message's resource name
        return keep_copy(self.store, message, **receipt)

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        return find_copy(self.store, trace_key)

    def _post(self, url: str, body: dict[str, Any]) -> Any:
        """The accepting answer (or the ``ALREADY_EXISTS`` one: sent before), after retries."""
        import requests

        last = ""
        for attempt in range(1, self.attempts + 1):
            wait = min(MAX_WAIT_S, 0.5 * 2 ** (attempt - 1))
            try:
                answer = self.session.post(url, json=body, timeout=self.timeout)
            except requests.RequestException as exc:  # no answer: connection, timeout
                last = f"{type(exc).__name__}"
            else:
                status = answer.status_code
                if 200 <= status < 300 or (self.format == "chat" and _already_exists(answer)):
                    return answer
                last = f"HTTP {status}: {answer.text[:200]}".strip()
                if status != 429 and status < 500:
                    raise NotificationRefused(self.channel, last)
                wait = _retry_after(answer.headers.get("Retry-After"), wait)
            if attempt < self.attempts:
                log.info("webhook post: %s; try %s in %.1fs", last, attempt + 1, wait)
                self.sleep(wait)
        raise RetryableError(f"webhook: {self.attempts} tries failed, last: {last}")


def chat_message_ids(trace_key: str) -> tuple[str, str]:
    """The ``requestId`` and ``messageId`` of the Chat message sent with effect key ``trace_key``.

    The same key gives the same ids on every try and after a crash; different keys give
    different ids (SHA-256 / UUIDv5 of the whole key). The ``messageId`` is ``client-``
    and 32 lowercase hex digits (39 characters: the limit is 63, ``[a-z0-9-]``).
    """
    request_id = str(uuid.uuid5(REQUEST_ID_NAMESPACE, trace_key))
    message_id = "client-" + hashlib.sha256(trace_key.encode("utf-8")).hexdigest()[:32]
    return request_id, message_id


def _already_exists(answer: Any) -> bool:
    """Whether Chat answered that the message (its ``messageId``) exists already."""
    if answer.status_code != 409:
        return False
    try:
        body = answer.json()
    except ValueError:
        return False
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("status") == "ALREADY_EXISTS"


def _chat_name(answer: Any, url: str, message_id: str) -> str | None:
    """The Chat message's resource name: the answer's ``name`` (a webhook's answer carries
    it), or, for ``ALREADY_EXISTS``, the custom name in the webhook's space."""
    if answer.status_code == 409:
        space = re.search(r"/v1/(spaces/[^/]+)/messages", urlsplit(url).path)
        return f"{space.group(1)}/messages/{message_id}" if space else None
    try:
        body = answer.json()
    except ValueError:
        return None
    name = body.get("name") if isinstance(body, dict) else None
    return name if isinstance(name, str) and name else None


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
    from ..redaction import redact_tokens

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

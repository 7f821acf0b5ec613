"""A local incoming-webhook endpoint (Google Chat / Slack shaped) for notifier tests.

Chat-shaped (``chat=True``, the default) it keeps the space's messages and honours the
two ids of ``spaces.messages.create`` the way the Chat API reference describes them
(``google/chat/v1/message.proto``, ``CreateMessageRequest``):

- ``requestId``: "Specifying an existing request ID returns the message created with
  that ID instead of creating a new message" (200, the first message, nothing created);
- ``messageId``: must begin ``client-``, at most 63 characters of lowercase letters,
  digits and hyphens (else 400 ``INVALID_ARGUMENT``), unique within the space (a second
  create: 409 ``ALREADY_EXISTS``).

A webhook's answer carries the message's ``name`` (and ``thread.name``) besides what
was posted. Slack-shaped (``chat=False``) every post is a new message: Slack has no key.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

CUSTOM_ID = re.compile(r"client-[a-z0-9-]+")


class WebhookReceiver:
    """Records every JSON post; answers from ``script`` first, then as the chat would.

    Args:
        chat: honour ``requestId`` / ``messageId`` as Google Chat does (False: Slack).

    Attributes:
        posts: the JSON bodies received, in order (answered or not).
        queries: each post's query parameters (one value each), in the same order.
        statuses: the status each post was answered with, in the same order.
        messages: the messages the space shows, in order (scripted answers create none).
        script: ``(status, headers, body)`` answers for the next posts.
        url: where to post (set while running).
    """

    def __init__(self, chat: bool = True) -> None:
        self.chat = chat
        self.posts: list[dict[str, Any]] = []
        self.queries: list[dict[str, str]] = []
        self.statuses: list[int] = []
        self.messages: list[dict[str, Any]] = []
        self.script: list[tuple[int, dict[str, str], str]] = []
        self.url = ""
        self._by_request: dict[str, dict[str, Any]] = {}
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def answer(self, status: int, body: str = "", **headers: str) -> None:
        """Queue one answer (headers: ``Retry_After="2"`` becomes ``Retry-After: 2``)."""
        self.script.append((status, {k.replace("_", "-"): v for k, v in headers.items()}, body))

    def forget_request_ids(self) -> None:
        """Chat no longer remembers the request ids seen so far (the custom names stay)."""
        with self._lock:
            self._by_request.clear()

    def create(self, path: str, query: dict[str, str], body: dict[str, Any]) -> tuple[int, str]:
        """What the space does with one post: ``(status, answer body)``."""
        if not self.chat:
            self.messages.append(body)
            return 200, "ok"
        request_id, custom = query.get("requestId"), query.get("messageId")
        if request_id and request_id in self._by_request:
            return 200, json.dumps(self._by_request[request_id])
        space = path.removeprefix("/v1/").removesuffix("/messages")
        if custom is not None:
            if not CUSTOM_ID.fullmatch(custom) or len(custom) > 63:
                return 400, _error(400, "INVALID_ARGUMENT", f"invalid message id {custom!r}")
            if any(m.get("clientAssignedMessageId") == custom for m in self.messages):
                return 409, _error(409, "ALREADY_EXISTS", f"message {custom} already exists")
        message_id = custom or f"m{next(self._numbers)}"
        message = {
            **body,
            "name": f"{space}/messages/{message_id}",
            "thread": {"name": f"{space}/threads/t-{message_id}"},
            **({"clientAssignedMessageId": custom} if custom else {}),
        }
        self.messages.append(message)
        if request_id:
            self._by_request[request_id] = message
        return 200, json.dumps(message)

    @contextmanager
    def running(self, path: str = "/v1/spaces/AAAA/messages") -> Iterator[WebhookReceiver]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                parts = urlsplit(self.path)
                query = {name: values[-1] for name, values in parse_qs(parts.query).items()}
                with receiver._lock:
                    receiver.posts.append(body)
                    receiver.queries.append(query)
                    if receiver.script:
                        status, headers, text = receiver.script.pop(0)
                    else:
                        headers = {}
                        status, text = receiver.create(parts.path, query, body)
                    receiver.statuses.append(status)
                payload = text.encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}{path}"
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()


def _error(code: int, status: str, message: str) -> str:
    """A Google API error body."""
    return json.dumps({"error": {"code": code, "message": message, "status": status}})

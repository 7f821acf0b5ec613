"""A local incoming-webhook endpoint (Google Chat / Slack shaped) for notifier tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class WebhookReceiver:
    """Records every JSON post; answers from ``script`` first, then 200.

    Attributes:
        posts: the JSON bodies received, in order (answered or not).
        script: ``(status, headers, body)`` answers for the next posts.
        url: where to post (set while running).
    """

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.script: list[tuple[int, dict[str, str], str]] = []
        self.url = ""
        self._lock = threading.Lock()

    def answer(self, status: int, body: str = "", **headers: str) -> None:
        """Queue one answer (headers: ``Retry_After="2"`` becomes ``Retry-After: 2``)."""
        self.script.append((status, {k.replace("_", "-"): v for k, v in headers.items()}, body))

    @contextmanager
    def running(self, path: str = "/v1/spaces/AAAA/messages") -> Iterator[WebhookReceiver]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.posts.append(json.loads(body))
                    status, headers, text = (
                        receiver.script.pop(0) if receiver.script else (200, {}, '{"ok": true}')
                    )
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

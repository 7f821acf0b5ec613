"""The approval function's response headers, on every response (imports only Flask).

``functions/main.py`` installs them on the functions-framework app when it is
imported, so that the framework's own answers (404 for ``/robots.txt``, a 405,
an uncaught 500) carry them as the approval function's pages do.
"""

from __future__ import annotations

from typing import Any

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; img-src data:; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def install_hardening(app: Any) -> None:
    """Add ``SECURITY_HEADERS`` (where a response lacks them) to every response of ``app``."""

    def add_headers(response: Any) -> Any:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    if add_headers.__qualname__ not in {
        f.__qualname__ for f in app.after_request_funcs.get(None, [])
    }:
        app.after_request(add_headers)


def hardened_request_handler() -> Any:
    """A werkzeug request handler whose own error pages (414, 431, a bad or unreadable request
    line) carry ``SECURITY_HEADERS`` too: the server answers those before any app sees the
    request."""
    from werkzeug.serving import WSGIRequestHandler

    class HardenedRequestHandler(WSGIRequestHandler):
        _server_error = False

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            self._server_error = True
            if self.request_version == "HTTP/0.9":
                # A request line it could not read (``GARBAGE``, a TLS hello) leaves the
                # version at http.server's default, HTTP/0.9, under which it writes no
                # status line and no header at all: answer as HTTP/1.0, headers included.
                self.request_version = "HTTP/1.0"
                self.close_connection = True
            try:
                super().send_error(code, message, explain)
            finally:
                self._server_error = False

        def end_headers(self) -> None:
            if self._server_error:
                for name, value in SECURITY_HEADERS.items():
                    self.send_header(name, value)
            super().end_headers()

    return HardenedRequestHandler

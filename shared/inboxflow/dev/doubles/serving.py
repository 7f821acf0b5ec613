"""Serving a local HTTP double on loopback in a daemon thread: one implementation for all.

``WsgiServing`` is for doubles that are WSGI apps (werkzeug: the Google APIs,
the quoting API); ``ThreadingServing`` for those built on ``http.server``
handlers (Gemini, the CRM). Both stop cleanly and are context managers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, Self

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

log = logging.getLogger(__name__)


def clock_reader(clock: Any) -> Callable[[], float]:
    """The time of ``clock`` (anything with ``now()``), or the wall clock when None."""
    if clock is None:
        return time.time
    return lambda: float(clock.now())


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        log.debug("%s %s", self.requestline, code)


def _stop(server: Any, thread: threading.Thread | None) -> None:
    if server is not None:
        server.shutdown()
        server.server_close()
    if thread is not None:
        thread.join(timeout=5)


class _Stoppable(Protocol):
    def stop(self) -> None: ...


def serve_until_interrupted(double: _Stoppable, *banner: str) -> None:
    """Print the ``banner`` lines, then block until Ctrl-C and stop ``double``: a double's
    ``main`` in the foreground."""
    for line in banner:
        print(line, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        double.stop()


class WsgiServing:
    """``start``/``stop``/``url`` for a double that is a WSGI app.

    Subclasses set ``thread_name`` and answer requests in ``respond`` (or are
    WSGI callables of their own: ``__call__``). Use as a context manager (``with Double() as d:``)
    or call ``start()`` / ``stop()``; ``url`` is ``http://127.0.0.1:PORT``.
    """

    thread_name = "api-double"
    _server: BaseWSGIServer | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL of the running double."""
        if self._server is None:
            raise RuntimeError("the double is not started")
        return f"http://127.0.0.1:{self._server.server_port}"

    def start(self, port: int = 0) -> Self:
        """Serve on 127.0.0.1 (``port`` 0 picks a free one) in a daemon thread."""
        self._server = make_server(
            "127.0.0.1",
            port,
            self,  # type: ignore[arg-type]
            threaded=True,
            request_handler=_QuietHandler,
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        _stop(self._server, self._thread)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start() if self._server is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        response = self.respond(Request(environ))
        return response(environ, start_response)  # type: ignore[no-any-return]

    def respond(self, request: Request) -> Response:
        """The answer to one request."""
        raise NotImplementedError(f"{type(self).__name__} answers no request")


class ThreadingServing:
    """``serve``/``stop``/``base_url`` for a double answered by an ``http.server`` handler."""

    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        assert self._server is not None, "the double is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def serve(self, handler: type[BaseHTTPRequestHandler], port: int, name: str) -> Self:
        """Serve ``handler`` on 127.0.0.1 (``port`` 0 picks a free one) in a daemon thread."""
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        _stop(self._server, self._thread)
        self._server = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

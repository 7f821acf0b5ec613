"""The approval function as deployed: the functions-framework app of ``functions/main.py``
(and the app ``inboxflow serve`` runs), attacked at the HTTP layer."""

from __future__ import annotations

import io
import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import EnvironBuilder, run_wsgi_app

from inboxflow.approvals.app import MAX_BODY_BYTES
from inboxflow.approvals.http_headers import SECURITY_HEADERS
from tests.harness.paths import ROOT


@pytest.fixture
def approve_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``functions_framework.create_app(target="approve")`` over an embedded store."""
    import functions_framework

    from inboxflow import entry

    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path))
    entry.reset()
    yield functions_framework.create_app(target="approve", source=str(ROOT / "functions/main.py"))
    entry.reset()


def _task_auth(home: Path) -> dict[str, str]:
    """The header ``/timeout`` needs here: the home's local task token."""
    from inboxflow.approvals.task_auth import local_task_token

    return {"Authorization": f"Bearer {local_task_token(home)}"}


class EndlessBody(io.RawIOBase):
    """A request body of ``total`` bytes that counts how much of it was read."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.total - self.read_bytes)
        buffer[:n] = b" " * n
        self.read_bytes += n
        return n


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/timeout", "application/json"),
        ("/a/some-approval-1", "application/x-www-form-urlencoded"),
        ("/api/approvals/some-approval-1/decision", "application/json"),
    ],
)
def test_a_chunked_body_over_the_limit_is_refused_without_reading_it(
    approve_app: Any, path: str, content_type: str
) -> None:
    environ = EnvironBuilder(
        path=path,
        method="POST",
        headers={"Transfer-Encoding": "chunked", "Content-Type": content_type},
    ).get_environ()
    environ.pop("CONTENT_LENGTH", None)  # chunked: no length announced
    body = EndlessBody(100 * 1024 * 1024)
    environ["wsgi.input"] = io.BufferedReader(body)
    environ["wsgi.input_terminated"] = True  # what gunicorn and werkzeug set for chunked bodies

    _, status, headers = run_wsgi_app(approve_app, environ, buffered=True)

    assert status.startswith("413")
    assert body.read_bytes <= MAX_BODY_BYTES + 64 * 1024
    assert headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]


def test_a_chunked_body_under_the_limit_is_read(approve_app: Any, tmp_path: Path) -> None:
    environ = EnvironBuilder(
        path="/timeout",
        method="POST",
        headers={
            "Transfer-Encoding": "chunked",
            "Content-Type": "application/json",
            **_task_auth(tmp_path),
        },
    ).get_environ()
    environ.pop("CONTENT_LENGTH", None)
    environ["wsgi.input"] = io.BytesIO(b'{"approval_id": "nope-1"}')
    environ["wsgi.input_terminated"] = True

    body, status, _ = run_wsgi_app(approve_app, environ, buffered=True)

    assert status.startswith("200"), b"".join(body)
    assert b"no such approval" in b"".join(body)


def test_framework_answers_carry_the_security_headers(approve_app: Any) -> None:
    from inboxflow.dev.cli.approvals import approval_app

    for response in (
        approve_app.test_client().get("/robots.txt"),  # functions-framework's own 404
        approval_app().test_client().open("/a/x-1", method="TRACE"),  # Flask's 405 (serve)
    ):
        assert response.status_code in (404, 405)
        for name, value in SECURITY_HEADERS.items():
            assert response.headers[name] == value


@pytest.fixture
def served(approve_app: Any) -> Iterator[str]:
    """The app on a local port, served by werkzeug (as ``functions-framework --debug``)."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, approve_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_the_access_log_shows_no_token(served: str, caplog: pytest.LogCaptureFixture) -> None:
    secret = "S3cr3tT0kenValue_abcdefghijklmnopqrstuvwxyz"
    caplog.set_level(logging.INFO, logger="werkzeug")
    for url in (f"{served}/a/x-1?t={secret}", f"{served}/a/x-1?view=1&token={secret}&x=2"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=10)
        assert refused.value.code in (400, 403)  # no token / not valid
    lines = [record.getMessage() for record in caplog.records if record.name == "werkzeug"]
    assert any("/a/x-1?t=REDACTED" in line for line in lines), lines
    assert any("token=REDACTED&x=2" in line for line in lines), lines
    assert not any(secret in line for line in lines)
    for name in ("werkzeug", "gunicorn.access"):
        assert logging.getLogger(name).filters, f"no redaction on {name}"


@pytest.mark.parametrize("spelling", ["%2574", "+t", "T", "token%20", "key"])
def test_a_token_under_a_parameter_spelling_the_server_refuses_is_redacted(
    served: str, caplog: pytest.LogCaptureFixture, spelling: str
) -> None:
    from inboxflow.approvals.records import new_token

    secret = new_token()  # a reviewer's token has this shape, valid or not
    caplog.set_level(logging.INFO, logger="werkzeug")
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(f"{served}/a/x-1?{spelling}={secret}&view=1", timeout=10)
    lines = [record.getMessage() for record in caplog.records if record.name == "werkzeug"]
    assert any(f"/a/x-1?{spelling}=REDACTED&view=1" in line for line in lines), lines
    assert not any(secret in line for line in lines)


@pytest.mark.parametrize("spelling", ["%2574", "+t", "%25%37%34", "TOKEN"])
def test_a_short_value_under_any_spelling_of_t_is_redacted(spelling: str) -> None:
    from inboxflow.redaction import redact_tokens

    assert redact_tokens(f"GET /a/x-1?{spelling}=abc123&x=2 HTTP/1.1") == (
        f"GET /a/x-1?{spelling}=REDACTED&x=2 HTTP/1.1"
    )
    assert redact_tokens("GET /a/x-1?tt=abc123&x=2") == "GET /a/x-1?tt=abc123&x=2"


def test_the_servers_own_414_carries_the_security_headers() -> None:
    """``inboxflow serve``'s server answers a too-long request line before the app runs."""
    import socket

    from werkzeug.serving import make_server

    from inboxflow.approvals.http_headers import hardened_request_handler
    from inboxflow.dev.cli.approvals import approval_app

    server = make_server(
        "127.0.0.1", 0, approval_app(), threaded=True, request_handler=hardened_request_handler()
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as conn:
            conn.sendall(b"GET /a/x-1?t=" + b"A" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
    finally:
        server.shutdown()
    head = answer.split(b"\r\n\r\n", 1)[0].decode()
    assert head.startswith("HTTP/1.0 414") or head.startswith("HTTP/1.1 414"), head[:80]
    for name, value in SECURITY_HEADERS.items():
        assert f"{name}: {value}" in head


@pytest.mark.parametrize(
    "line",
    [b"GARBAGE", b"GET", b"GET / HTTP/9.9", b"GET / FOO/1.1", b"\x16\x03\x01\x00\xa5\x01"],
    ids=["one-word", "method-only", "bad-version", "not-http", "tls-hello"],
)
def test_the_servers_answer_to_a_malformed_request_line_carries_the_security_headers(
    line: bytes,
) -> None:
    """Issue 39, item 7: http.server answered an unreadable line with no header at all."""
    import socket

    from werkzeug.serving import make_server

    from inboxflow.approvals.http_headers import hardened_request_handler
    from inboxflow.dev.cli.approvals import approval_app

    server = make_server(
        "127.0.0.1", 0, approval_app(), threaded=True, request_handler=hardened_request_handler()
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as conn:
            conn.sendall(line + b"\r\n\r\n")
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
    finally:
        server.shutdown()
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    assert head.split(" ", 2)[1] in ("400", "505"), head[:80]
    for name, value in SECURITY_HEADERS.items():
        assert f"{name}: {value}" in head


DEEP_JSON = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("path", ["/timeout", "/api/approvals/some-approval-1/decision"])
def test_json_nested_100000_deep_is_a_400(approve_app: Any, path: str, tmp_path: Path) -> None:
    response = approve_app.test_client().post(
        path, data=DEEP_JSON, content_type="application/json", headers=_task_auth(tmp_path)
    )
    assert response.status_code == 400, response.get_data(as_text=True)[:300]
    assert response.get_json() == {"error": "the JSON is nested too deeply", "status": 400}


@pytest.mark.parametrize(
    ("path", "json_answer"),
    [("/api/approvals/some-approval-1/decision", True), ("/timeout", True), ("/a/x-1", False)],
)
def test_a_413_is_json_on_the_api_and_a_page_elsewhere(
    approve_app: Any, path: str, json_answer: bool
) -> None:
    response = approve_app.test_client().post(
        path, data=b"{" + b" " * MAX_BODY_BYTES + b"}", content_type="application/json"
    )
    assert response.status_code == 413
    if json_answer:
        assert response.mimetype == "application/json"
        assert response.get_json() == {"error": "this request is too large", "status": 413}
    else:
        assert response.mimetype == "text/html"
        assert "too large" in response.get_data(as_text=True)

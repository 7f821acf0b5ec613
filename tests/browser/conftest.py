"""Browser fixtures: Debian's headless Chromium driven by Playwright, and a local page server.

``chromium`` (session) launches ``/usr/bin/chromium`` (or ``$INBOXFLOW_CHROMIUM``)
once; tests that use it skip with a notice when Playwright or Chromium is
missing, and fail instead under ``INBOXFLOW_REQUIRE_EMULATORS=1`` (CI). ``open_page`` opens
a page in a fresh context of a given viewport and records console errors
(CSP violations show up there). ``page_server`` serves fixed HTML pages from a
local thread with the approval function's Content-Security-Policy and records
form POSTs, so a page's form can be exercised without the approval function.

Reuse for an end-to-end test: serve the real approval function (e.g. its
functions-framework app on a local port), then ``open_page(375, 812)`` and
``page.goto(link)``.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import pytest

from tests.harness.required import skip_unless_required

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM_PATH = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REVIEW_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; img-src data:; "
    "frame-ancestors 'none'"
)
"""The policy the approval function sends with its pages; pages must work under it."""

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
"""Where browser tests write screenshots (ignored by git)."""


def chromium_executable() -> Path | None:
    """Debian's Chromium, or another ``chromium`` on PATH; None if there is none.

    ``INBOXFLOW_CHROMIUM``, when set, is the only place looked at.
    """
    explicit = os.environ.get("INBOXFLOW_CHROMIUM")
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    if CHROMIUM_PATH.exists():
        return CHROMIUM_PATH
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """A headless Chromium for the session (skips with a notice when it cannot run here)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_unless_required(
            "browser test skipped: the playwright package is not installed (pip install playwright)"
        )
    executable = chromium_executable()
    if executable is None:
        skip_unless_required(
            f"browser test skipped: no Chromium at {CHROMIUM_PATH} or on PATH "
            "(apt-get install chromium)"
        )
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=str(executable), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


@dataclass
class OpenedPage:
    """A page plus what its console said (errors and CSP violations land here)."""

    page: Page
    console_errors: list[str] = field(default_factory=list)


@pytest.fixture
def open_page(chromium: Browser) -> Iterator[Callable[[int, int], OpenedPage]]:
    """Open pages of a given viewport ``(width, height)``, each in a fresh context."""
    contexts = []

    def opener(width: int, height: int) -> OpenedPage:
        context = chromium.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        opened = OpenedPage(context.new_page())

        def on_console(message: Any) -> None:
            if message.type in ("error", "warning"):
                opened.console_errors.append(message.text)

        opened.page.on("console", on_console)
        opened.page.on("pageerror", lambda error: opened.console_errors.append(str(error)))
        return opened

    yield opener
    for context in contexts:
        context.close()


def open_review_on_phone(
    open_page: Callable[[int, int], OpenedPage],
    rt: Any,
    trace_id: str,
    reviewer: str,
    shot: str,
) -> tuple[Any, OpenedPage]:
    """Open the trace's pending approval as ``reviewer`` at 375x812; screenshot ``shot``.

    Returns the approval and the page, after checking the page answered 200 and
    does not scroll sideways.
    """
    (approval,) = [a for a in rt.ports.approvals.pending() if a.trace_id == trace_id]
    link = rt.ports.approvals.tokens.issue_link(approval, reviewer)
    opened = open_page(375, 812)
    response = opened.page.goto(link)
    assert response is not None and response.status == 200
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    opened.page.screenshot(path=str(ARTIFACTS / f"{shot}-phone.png"), full_page=True)
    assert opened.page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    return approval, opened


@dataclass
class PageServer:
    """A local HTTP server of fixed pages that records form POSTs.

    Attributes:
        base_url: ``http://127.0.0.1:<port>``.
        pages: path -> HTML served for GET (and for POST, as the response page).
        posts: ``(path, form fields)`` of every POST received, in order.
    """

    base_url: str
    pages: dict[str, str] = field(default_factory=dict)
    posts: list[tuple[str, dict[str, list[str]]]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def page_server() -> Iterator[PageServer]:
    """Serve ``PageServer.pages`` on 127.0.0.1 with the review CSP; record POSTs."""
    state = PageServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            state.posts.append((self.path, parse_qs(body, keep_blank_values=True)))
            self._answer()

        def _answer(self) -> None:
            state.requests.append(f"{self.command} {self.path}")
            path = self.path.split("?", 1)[0]
            html = state.pages.get(path)
            body = (html if html is not None else "not found").encode()
            self.send_response(200 if html is not None else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Security-Policy", REVIEW_CSP)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

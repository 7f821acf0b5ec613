"""A local HTTP double of a REST CRM, for ``adapters.http_crm`` (tests, ``inboxflow dev``).

``GET /customers?email=ADDRESS`` answers ``200 {"customers": [...]}`` (empty
when nobody has the address); a wrong or missing bearer key gets 401. Faults
are queued per request: ``fail(503, 503)`` answers the next two lookups with
503, ``stall(2.0)`` holds the next one for two seconds (a timeout), and
``answer(status, body)`` sends anything once.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from ...adapters.embedded_crm import SAMPLE_CUSTOMERS
from ...graphs.support.crm import Customer
from .serving import ThreadingServing


@dataclass(frozen=True)
class Fault:
    """What the next request gets instead of the normal answer."""

    status: int = 200
    body: Any = None
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class CrmDouble(ThreadingServing):
    """A running CRM double; ``base_url`` goes to ``INBOXFLOW_CRM_URL``.

    Attributes:
        customers: the records by lowercase address.
        api_key: the bearer key required (None: no key needed).
        requests: ``(path, query, authorization)`` of every request, in order.
    """

    customers: dict[str, Customer]
    api_key: str | None = None
    requests: list[tuple[str, dict[str, list[str]], str]] = field(default_factory=list)
    _faults: deque[Fault] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fail(self, *statuses: int, retry_after: float | None = None) -> None:
        """Answer the next requests with these statuses, one each."""
        headers = (("Retry-After", str(retry_after)),) if retry_after is not None else ()
        self._queue(Fault(status=s, body={"error": f"HTTP {s}"}, headers=headers) for s in statuses)

    def stall(self, seconds: float) -> None:
        """Hold the next request this long before answering normally."""
        self._queue([Fault(delay_s=seconds)])

    def answer(self, status: int, body: Any) -> None:
        """Answer the next request with ``status`` and ``body`` (JSON, or raw text if a str)."""
        self._queue([Fault(status=status, body=body)])

    def _queue(self, faults: Iterable[Fault]) -> None:
        with self._lock:
            self._faults.extend(faults)

    def _handle(
        self, path: str, authorization: str
    ) -> tuple[int, Any, tuple[tuple[str, str], ...]]:
        url = urlparse(path)
        query = parse_qs(url.query)
        with self._lock:
            self.requests.append((url.path, query, authorization))
            fault = self._faults.popleft() if self._faults else None
        if fault is not None and fault.delay_s:
            time.sleep(fault.delay_s)
        if fault is not None and (fault.status != 200 or fault.body is not None):
            return fault.status, fault.body, fault.headers
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            return 401, {"error": "invalid or missing API key"}, ()
        if url.path != "/customers":
            return 404, {"error": f"no route {url.path}"}, ()
        emails = query.get("email") or []
        if len(emails) != 1:
            return 400, {"error": "exactly one email= is required"}, ()
        customer = self.customers.get(emails[0].strip().lower())
        found = [customer.model_dump()] if customer is not None else []
        return 200, {"customers": found}, ()


def _handler_for(double: CrmDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body, headers = double._handle(self.path, self.headers.get("Authorization", ""))
            raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout) before the answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def start_crm_double(
    customers: Iterable[Customer] = SAMPLE_CUSTOMERS, api_key: str | None = None, port: int = 0
) -> CrmDouble:
    """Start a CRM double on 127.0.0.1 (a free port unless ``port``), in a daemon thread."""
    double = CrmDouble(customers={c.email.lower(): c for c in customers}, api_key=api_key)
    return double.serve(_handler_for(double), port, "crm-double")


__all__ = ["CrmDouble", "Fault", "start_crm_double"]

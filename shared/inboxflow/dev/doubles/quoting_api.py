"""A local HTTP double of a PPA quoting API, serving the embedded engine (``EmbeddedQuoting``).

The REST API (JSON bodies; the shapes of ``inboxflow.graphs.planner.quoting``)::

    POST /v1/quotes                      Applicant        -> 201 QuoteSession
    POST /v1/quotes/{quote_id}/drivers   Driver           -> 200 Quote
    POST /v1/quotes/{quote_id}/vehicles  Vehicle          -> 200 Quote
    POST /v1/quotes/{quote_id}/rate      (no body)        -> 200 Rate
    GET  /v1/quotes/{quote_id}                            -> 200 Quote

Every POST needs an ``Idempotency-Key`` header: the same key returns the first
answer. With an ``api_key`` the double wants ``Authorization: Bearer <key>``.
Errors are ``{"code", "message", "field"}`` with the status of ``STATUS_OF``
(``invalid_input`` 400, ``unauthorized`` 401, ``not_found`` 404,
``not_ratable`` 409, ``invalid_vin`` 422, ``unavailable`` 503).

Test hooks: ``fail_next`` (the next N matching requests answer an error status,
optionally after the change was made), ``slow_next`` (they answer late),
``calls`` (what was asked, in order). Run it as a process with
``python -m inboxflow.dev.doubles.quoting_api --port N``.
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from inboxflow.adapters.embedded_quoting import EmbeddedQuoting
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import Clock, SystemClock
from inboxflow.dev.doubles.serving import WsgiServing, serve_until_interrupted
from inboxflow.graphs.planner.quoting import Applicant, Driver, QuotingError, Vehicle
from inboxflow.ports.documents import DocumentStore

log = logging.getLogger(__name__)

STATUS_OF = {
    "invalid_input": 400,
    "unauthorized": 401,
    "not_found": 404,
    "not_ratable": 409,
    "invalid_vin": 422,
    "unavailable": 503,
}
IDEMPOTENCY_HEADER = "Idempotency-Key"

_ROUTES = Map(
    [
        Rule("/v1/quotes", methods=["POST"], endpoint="initiate"),
        Rule("/v1/quotes/<quote_id>/drivers", methods=["POST"], endpoint="add_driver"),
        Rule("/v1/quotes/<quote_id>/vehicles", methods=["POST"], endpoint="add_vehicle"),
        Rule("/v1/quotes/<quote_id>/rate", methods=["POST"], endpoint="rate"),
        Rule("/v1/quotes/<quote_id>", methods=["GET"], endpoint="get"),
    ]
)


class _Refusal(Exception):
    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.field = code, message, field


@dataclass
class _Fault:
    endpoint: str
    times: int
    status: int = 0
    delay_s: float = 0.0
    after_apply: bool = False


@dataclass(frozen=True)
class Call:
    """One request the double served.

    Attributes:
        method: ``GET`` or ``POST``.
        path: the request path.
        endpoint: ``initiate``, ``add_driver``, ``add_vehicle``, ``rate`` or ``get``.
        idempotency_key: the ``Idempotency-Key`` header, when sent.
        status: the HTTP status answered.
    """

    method: str
    path: str
    endpoint: str
    idempotency_key: str | None
    status: int


class QuotingApiDouble(WsgiServing):
    """The quoting API on loopback (thread-safe; the engine's store serialises writes).

    Args:
        store: where quotes live (default: a private in-memory SQLite store).
        clock: the rating date's source (default: the wall clock).
        api_key: the bearer token requests must carry (None: no check).

    Use as a context manager or ``start()`` / ``stop()``; ``url`` is ``http://127.0.0.1:PORT``.
    """

    thread_name = "quoting-api-double"

    def __init__(
        self,
        store: DocumentStore | None = None,
        clock: Clock | None = None,
        api_key: str | None = None,
    ) -> None:
        self.store = store if store is not None else SqliteCheckpointStore(":memory:")
        self.engine = EmbeddedQuoting(self.store, clock or SystemClock())
        self.api_key = api_key
        self.calls: list[Call] = []
        """Every request served, in order."""
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        request = Request(environ)
        endpoint = "unknown"
        try:
            endpoint, params = _ROUTES.bind_to_environ(environ).match()
            response = self._respond(request, str(endpoint), params)
        except HTTPException as exc:
            response = _error(
                exc.code or 404, "not_found", f"No route {request.method} {request.path}"
            )
        with self._lock:
            self.calls.append(
                Call(
                    request.method,
                    request.path,
                    str(endpoint),
                    request.headers.get(IDEMPOTENCY_HEADER),
                    response.status_code,
                )
            )
        return response(environ, start_response)  # type: ignore[no-any-return]

    def _respond(self, request: Request, endpoint: str, params: Mapping[str, Any]) -> Response:
        fault = self._take_fault(endpoint)
        if fault is not None and fault.delay_s:
            time.sleep(fault.delay_s)
        if fault is not None and fault.status and not fault.after_apply:
            return _error(fault.status, "unavailable", "Injected failure.")
        try:
            status, answer = self._perform(request, endpoint, params)
        except _Refusal as refusal:
            return _error(STATUS_OF[refusal.code], refusal.code, refusal.message, refusal.field)
        except QuotingError as exc:
            return _error(STATUS_OF[exc.code], exc.code, exc.message, exc.field)
        if fault is not None and fault.status:
            return _error(fault.status, "unavailable", "Injected failure after the change.")
        return Response(json.dumps(answer), status=status, mimetype="application/json")

    def _perform(
        self, request: Request, endpoint: str, params: Mapping[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        authorization = request.headers.get("Authorization")
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            raise _Refusal("unauthorized", "A valid API key is required.", "Authorization")
        engine = self.engine
        if endpoint == "get":
            return 200, engine.get(params["quote_id"]).model_dump(mode="json")
        key = request.headers.get(IDEMPOTENCY_HEADER, "").strip()
        if not key:
            raise _Refusal(
                "invalid_input", "Every POST needs an Idempotency-Key header.", IDEMPOTENCY_HEADER
            )
        if endpoint == "initiate":
            session = engine.initiate(_body(request, Applicant), key)
            return 201, session.model_dump(mode="json")
        quote_id = params["quote_id"]
        if endpoint == "add_driver":
            quote = engine.add_driver(quote_id, _body(request, Driver), key)
        elif endpoint == "add_vehicle":
            quote = engine.add_vehicle(quote_id, _body(request, Vehicle), key)
        else:
            return 200, engine.rate(quote_id, key).model_dump(mode="json")
        return 200, quote.model_dump(mode="json")

    # --- faults ------------------------------------------------------------------------

    def fail_next(
        self, endpoint: str, status: int = 503, times: int = 1, *, after_apply: bool = False
    ) -> None:
        """Answer the next ``times`` requests to ``endpoint`` with ``status``.

        Args:
            endpoint: ``initiate``, ``add_driver``, ``add_vehicle``, ``rate``, ``get`` or ``*``.
            status: HTTP status of the injected error (body code ``unavailable``).
            times: how many requests fail.
            after_apply: make the change first, then answer the error (a lost response).
        """
        with self._lock:
            self._faults.append(_Fault(endpoint, times, status=status, after_apply=after_apply))

    def slow_next(self, endpoint: str, seconds: float, times: int = 1) -> None:
        """Answer the next ``times`` requests to ``endpoint`` (or ``*``) ``seconds`` late."""
        with self._lock:
            self._faults.append(_Fault(endpoint, times, delay_s=seconds))

    def _take_fault(self, endpoint: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and fault.endpoint in (endpoint, "*"):
                    fault.times -= 1
                    return fault
        return None

    def count(self, endpoint: str, status: int | None = None) -> int:
        """How many requests to ``endpoint`` were served (with ``status``, when given)."""
        with self._lock:
            return sum(
                1
                for call in self.calls
                if call.endpoint == endpoint and (status is None or call.status == status)
            )


def _body(request: Request, model: type[BaseModel]) -> Any:
    try:
        payload = json.loads(request.get_data() or b"null")
    except ValueError as exc:
        raise _Refusal("invalid_input", f"The body is not JSON: {exc}.") from exc
    if not isinstance(payload, dict):
        raise _Refusal("invalid_input", "The body must be a JSON object.")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        raise _Refusal("invalid_input", f"{field}: {first['msg']}", field) from exc


def _error(status: int, code: str, message: str, field: str | None = None) -> Response:
    body = {"code": code, "message": message, "field": field}
    return Response(json.dumps(body), status=status, mimetype="application/json")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m inboxflow.dev.doubles.quoting_api --port N [--api-key KEY]``."""
    parser = argparse.ArgumentParser(description="PPA quoting API double on loopback")
    parser.add_argument("--port", type=int, default=0, help="port (0: a free one)")
    parser.add_argument("--api-key", default=None, help="bearer token required (default: none)")
    options = parser.parse_args(argv)
    double = QuotingApiDouble(api_key=options.api_key).start(options.port)
    serve_until_interrupted(double, f"quoting api double listening on {double.url}")


__all__ = ["IDEMPOTENCY_HEADER", "STATUS_OF", "Call", "QuotingApiDouble", "main"]

if __name__ == "__main__":
    main()

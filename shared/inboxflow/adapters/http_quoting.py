"""The quoting port over HTTP: a real quoting API (or ``dev/doubles/quoting_api.py``).

``requests`` with urllib3's ``Retry``: 429, 502, 503 and 504 answers, dropped
connections and read timeouts are retried with exponential backoff (honouring
``Retry-After``) for every call, POSTs included, because every POST carries
its ``Idempotency-Key``: a retried write cannot apply twice. What is still
failing after the retries, or never answers within ``timeout``, becomes
``QuotingError("unavailable")``; the API's own errors (``{code, message,
field}``) keep their code.

Settings: ``INBOXFLOW_QUOTING_URL`` (the API's base URL) and
``INBOXFLOW_QUOTING_API_KEY`` (the bearer token; deployed as a Secret Manager
secret mapped to that variable, never in the repository).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, get_args
from urllib.parse import quote

import requests
from pydantic import BaseModel, ValidationError
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from ..graphs.planner.quoting import (
    Applicant,
    Driver,
    Quote,
    QuoteSession,
    QuotingError,
    QuotingErrorCode,
    QuotingService,
    Rate,
    Vehicle,
)

M = TypeVar("M", bound=BaseModel)
URL_VARIABLE = "INBOXFLOW_QUOTING_URL"
KEY_VARIABLE = "INBOXFLOW_QUOTING_API_KEY"
RETRIED_STATUSES = (429, 502, 503, 504)
_CODES: frozenset[str] = frozenset(get_args(QuotingErrorCode))


class HttpQuoting(QuotingService):
    """A quoting API reached over HTTP.

    Args:
        base_url: the API root (``https://quotes.example.com``; paths start at ``/v1``).
        api_key: sent as ``Authorization: Bearer <api_key>`` (None: no header).
        timeout: seconds to wait for a connection and, separately, for an answer.
        retries: how many times a transient failure is retried.
        backoff_s: the first backoff (doubling each retry).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 10.0,
        *,
        retries: int = 3,
        backoff_s: float = 0.5,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"quoting API URL {base_url!r} must start with http:// or https://")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        retry = Retry(
            total=retries,
            connect=retries,
            read=retries,
            status=retries,
            other=0,
            status_forcelist=RETRIED_STATUSES,
            allowed_methods=frozenset({"GET", "POST"}),
            backoff_factor=backoff_s,
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        self._session = requests.Session()
        adapter = HTTPAdapter(max_retries=retry)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self._session.headers["Accept"] = "application/json"
        if api_key:
            self._session.headers["Authorization"] = f"Bearer {api_key}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> HttpQuoting:
        """``INBOXFLOW_QUOTING_URL`` with ``INBOXFLOW_QUOTING_API_KEY`` (optional)."""
        url = environ.get(URL_VARIABLE, "").strip()
        if not url:
            raise ValueError(f"{URL_VARIABLE} is not set")
        timeout = float(environ.get("INBOXFLOW_QUOTING_TIMEOUT_S") or 10.0)
        return cls(url, environ.get(KEY_VARIABLE) or None, timeout)

    def close(self) -> None:
        """Close the connection pool."""
        self._session.close()

    # --- the port ----------------------------------------------------------------------

    def initiate(self, applicant: Applicant, key: str) -> QuoteSession:
        return self._call(QuoteSession, "POST", "/v1/quotes", applicant, key)

    def add_driver(self, quote_id: str, driver: Driver, key: str) -> Quote:
        return self._call(Quote, "POST", f"/v1/quotes/{_id(quote_id)}/drivers", driver, key)

    def add_vehicle(self, quote_id: str, vehicle: Vehicle, key: str) -> Quote:
        return self._call(Quote, "POST", f"/v1/quotes/{_id(quote_id)}/vehicles", vehicle, key)

    def rate(self, quote_id: str, key: str) -> Rate:
        return self._call(Rate, "POST", f"/v1/quotes/{_id(quote_id)}/rate", None, key)

    def get(self, quote_id: str) -> Quote:
        return self._call(Quote, "GET", f"/v1/quotes/{_id(quote_id)}", None, None)

    # --- HTTP --------------------------------------------------------------------------

    def _call(
        self,
        model: type[M],
        method: str,
        path: str,
        body: BaseModel | None,
        key: str | None,
    ) -> M:
        headers: dict[str, str] = {}
        if method == "POST":
            if not key:
                raise QuotingError("invalid_input", "Every write needs an idempotency key.", "key")
            headers["Idempotency-Key"] = key
        try:
            response = self._session.request(
                method,
                self.base_url + path,
                json=body.model_dump(mode="json") if body is not None else None,
                headers=headers,
                timeout=self.timeout,
            )
        except requests.RequestException as exc:
            raise QuotingError(
                "unavailable", f"The quoting service did not answer ({type(exc).__name__})."
            ) from exc
        if response.status_code >= 400:
            raise _error(response)
        try:
            return model.model_validate(response.json())
        except (ValueError, ValidationError) as exc:
            raise QuotingError(
                "unavailable", f"The quoting service answered {method} {path} with a bad body."
            ) from exc


def _id(quote_id: str) -> str:
    return quote(quote_id, safe="")


def _error(response: requests.Response) -> QuotingError:
    """The ``QuotingError`` for an error answer (after any retries)."""
    status = response.status_code
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    body = body if isinstance(body, dict) else {}
    code, message, field = body.get("code"), body.get("message"), body.get("field")
    text = str(message or f"HTTP {status}")
    if status in RETRIED_STATUSES or status >= 500:
        return QuotingError(
            "unavailable", f"The quoting service is unavailable: {text} ({status})."
        )
    if status in (401, 403):
        error = QuotingError(
            "unavailable", f"The quoting service refused our API key: {text} ({status})."
        )
        error.retryable = False  # a configuration fault: retrying will not help
        return error
    if code in _CODES:
        return QuotingError(code, text, field if isinstance(field, str) else None)
    fallback: QuotingErrorCode = "not_found" if status == 404 else "invalid_input"
    return QuotingError(fallback, text, field if isinstance(field, str) else None)


__all__ = ["KEY_VARIABLE", "RETRIED_STATUSES", "URL_VARIABLE", "HttpQuoting"]

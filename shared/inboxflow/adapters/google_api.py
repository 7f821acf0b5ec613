"""The one Google API layer: discovery clients and one translation of their errors.

Gmail v1 and Calendar v3 are reached through ``google-api-python-client``,
built from the library's bundled discovery documents (``static_discovery``:
no network at start-up), one client per API, mailbox and thread (httplib2 is
not thread-safe). With ``INBOXFLOW_GOOGLE_API_URL`` set, the clients talk to
the local Gmail/Calendar double without credentials; otherwise each mailbox
gets its own credentials (``google_credentials``). ``googleapiclient`` is
imported when the first client is built, never at import time.

Every failure is sorted once, by ``classify``:

=====================================================  ================
answer                                                 kind
=====================================================  ================
429; 403 with reason ``rateLimitExceeded``,            ``RATE_LIMITED``
``userRateLimitExceeded`` or ``quotaExceeded``
408, 5xx, no answer (connection or socket error)       ``UNAVAILABLE``
404                                                    ``NOT_FOUND``
the token's refresh answered ``invalid_grant``         ``DISCONNECTED``
(revoked or expired consent: a person must reconnect)
anything else (400, 401, other 403s, 409...)           ``PERMANENT``
=====================================================  ================

The first two are retryable. Each adapter names the exceptions its port
raises for each kind (``PortErrors``), so the rule is written once and the
ports keep their own error types.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from .google_credentials import CredentialsFactory, credentials_from_env, own_credentials

GOOGLE_API_URL_ENV = "INBOXFLOW_GOOGLE_API_URL"
RATE_LIMIT_REASONS = frozenset({"ratelimitexceeded", "userratelimitexceeded", "quotaexceeded"})
"""403 reasons that mean "slow down", compared without case and underscores
(``errors[].reason`` says ``rateLimitExceeded``, ``details[]`` ErrorInfo ``RATE_LIMIT_EXCEEDED``)."""
MAX_BACKOFF_S = 30.0


def google_api_url(environ: Mapping[str, str]) -> str | None:
    """The local Google API double's base URL (``INBOXFLOW_GOOGLE_API_URL`` of ``environ``),
    when one is set."""
    return environ.get(GOOGLE_API_URL_ENV) or None


def mailbox_credentials(
    environ: Mapping[str, str], scopes_for: Callable[[str], Sequence[str]] | None = None
) -> CredentialsFactory:
    """``mailbox -> credentials`` for ``environ``: against the double only a mailbox's own token
    (``own_credentials``), else ``credentials_from_env``; each asks for ``scopes_for(mailbox)``
    (the mailbox's graphs' scopes; default Gmail and Calendar)."""
    if google_api_url(environ):
        return own_credentials(environ, scopes_for=scopes_for)
    return credentials_from_env(environ, scopes_for=scopes_for)


class FailureKind(StrEnum):
    """How a failed call is treated (see the module docstring for the table)."""

    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    NOT_FOUND = "not_found"
    DISCONNECTED = "disconnected"
    PERMANENT = "permanent"

    @property
    def retryable(self) -> bool:
        """Whether trying again later can succeed."""
        return self in (FailureKind.RATE_LIMITED, FailureKind.UNAVAILABLE)


def classify(status: int, reasons: Iterable[str] = (), message: str = "") -> FailureKind:
    """The kind of a Google API answer.

    Args:
        status: the HTTP status; 0 when there was no answer.
        reasons: Google's error reasons (``errors[].reason``, ``details[].reason``).
        message: the error message; a 403 without any reason counts as a rate
            limit when the message says so.
    """
    if status == 0 or status == 408 or status >= 500:
        return FailureKind.UNAVAILABLE
    if status == 429:
        return FailureKind.RATE_LIMITED
    if status == 403:
        normalized = {reason.replace("_", "").lower() for reason in reasons if reason}
        if normalized & RATE_LIMIT_REASONS:
            return FailureKind.RATE_LIMITED
        if not normalized and "rate limit" in message.lower():
            return FailureKind.RATE_LIMITED
    if status == 404:
        return FailureKind.NOT_FOUND
    return FailureKind.PERMANENT


@dataclass(frozen=True)
class ApiFailure:
    """A failed call, sorted: ``kind``, the HTTP ``status`` (0: no answer) and a message."""

    kind: FailureKind
    status: int
    message: str


def http_error_failure(exc: Any, what: str = "Google API") -> ApiFailure:
    """Sort a ``googleapiclient.errors.HttpError``.

    Args:
        exc: the error (its status, and its body in Google's JSON error format).
        what: the call, for the message (``gmail.users.history.list``).
    """
    status = int(getattr(exc, "status_code", 0) or exc.resp.status)
    text = str(getattr(exc, "reason", "") or "")
    reasons = _reasons(getattr(exc, "content", b""))
    return ApiFailure(classify(status, reasons, text), status, f"{what} answered {status}: {text}")


def _reasons(content: bytes) -> list[str]:
    try:
        body = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, AttributeError):
        return []
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return []
    items = [*(error.get("errors") or []), *(error.get("details") or [])]
    return [str(item["reason"]) for item in items if isinstance(item, dict) and item.get("reason")]


def failure_of(exc: BaseException, what: str = "Google API") -> ApiFailure | None:
    """Sort an exception raised by a client call; None when it is not an API or transport failure."""
    from google.auth.exceptions import RefreshError
    from googleapiclient.errors import HttpError

    if isinstance(exc, HttpError):
        return http_error_failure(exc, what)
    if isinstance(exc, RefreshError) and refresh_error_code(exc) == "invalid_grant":
        return ApiFailure(
            FailureKind.DISCONNECTED,
            400,
            f"{what}: the mailbox's authorization was revoked or has expired (invalid_grant)",
        )
    if isinstance(exc, OSError) or type(exc).__module__.startswith("httplib2"):
        return ApiFailure(FailureKind.UNAVAILABLE, 0, f"{what}: no answer ({exc})")
    return None


def refresh_error_code(exc: BaseException) -> str:
    """The OAuth ``error`` of a ``google.auth`` ``RefreshError`` (``invalid_grant``...), or ``""``.

    google-auth raises it with the token endpoint's JSON answer as its second argument.
    """
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    body = args[1] if len(args) > 1 else None
    if isinstance(body, Mapping):
        return str(body.get("error") or "")
    text = str(args[0]) if args else ""
    return text.split(":", 1)[0].strip() if text.startswith("invalid_") else ""


ErrorFactory = Callable[[str, int], Exception]
"""``(message, status) -> exception``: an exception class of a port."""


@dataclass(frozen=True)
class PortErrors:
    """The exceptions one port raises for each kind of failure.

    Attributes:
        rate_limited: for ``RATE_LIMITED`` (should be a ``RetryableError``).
        unavailable: for ``UNAVAILABLE`` (should be a ``RetryableError``).
        permanent: for ``PERMANENT``, and ``NOT_FOUND`` unless ``not_found`` is given.
        not_found: for ``NOT_FOUND`` where the caller needs to tell it apart.
        disconnected: for ``DISCONNECTED`` where the caller needs to tell it apart
            (default ``permanent``).
    """

    rate_limited: ErrorFactory
    unavailable: ErrorFactory
    permanent: ErrorFactory
    not_found: ErrorFactory | None = None
    disconnected: ErrorFactory | None = None

    def with_not_found(self, factory: ErrorFactory) -> PortErrors:
        """The same, with 404 raised as ``factory`` (``HistoryExpired``, ``MessageGone``)."""
        return replace(self, not_found=factory)

    def error(self, failure: ApiFailure) -> Exception:
        """The port's exception for ``failure``."""
        factory = {
            FailureKind.RATE_LIMITED: self.rate_limited,
            FailureKind.UNAVAILABLE: self.unavailable,
            FailureKind.NOT_FOUND: self.not_found or self.permanent,
            FailureKind.DISCONNECTED: self.disconnected or self.permanent,
            FailureKind.PERMANENT: self.permanent,
        }[failure.kind]
        return factory(failure.message, failure.status)


def backoff_delay(attempt: int) -> float:
    """Seconds to wait before retry ``attempt + 1``: exponential with jitter, at most 30 s."""
    return float(min(MAX_BACKOFF_S, 2**attempt * (0.5 + random.random())))


class GoogleApiConnection:
    """Discovery clients (per API, mailbox and thread) and the one way to run their requests.

    Args:
        api_url: base URL of the local double; None for Google's endpoints.
        credentials: ``mailbox -> google.auth credentials``. Default: a mailbox's own
            token against the double (``own_credentials``), else ``credentials_from_env``
            (the configured key, or application default credentials), both of ``environ``,
            read when the first client is built.
        timeout_s: socket timeout of one HTTP call.
        num_retries: how often ``execute`` retries a retryable failure by default.
        sleep: how to wait between retries (tests pass a no-op).
        environ: the entry point's environment, for the default ``credentials``.
    """

    def __init__(
        self,
        api_url: str | None = None,
        credentials: CredentialsFactory | None = None,
        *,
        timeout_s: float = 30.0,
        num_retries: int = 0,
        sleep: Callable[[float], None] = time.sleep,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/") if api_url else None
        if credentials is None:
            # Against the double, only a mailbox connected with its own token uses one.
            env = environ or {}
            credentials = (
                credentials_from_env(env) if self.api_url is None else own_credentials(env)
            )
        self.credentials = credentials
        self.timeout_s = timeout_s
        self.num_retries = num_retries
        self.sleep = sleep
        self._local = threading.local()
        self._generation = 0

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str],
        scopes_for: Callable[[str], Sequence[str]] | None = None,
        **options: Any,
    ) -> GoogleApiConnection:
        """The double at ``INBOXFLOW_GOOGLE_API_URL`` when set, else Google with the
        credentials ``INBOXFLOW_GMAIL_CREDENTIALS[_SECRET]`` configure (read on first use);
        ``scopes_for``: what each mailbox's credentials ask for (``mailbox_credentials``)."""
        return cls(google_api_url(environ), mailbox_credentials(environ, scopes_for), **options)

    def service(self, api: str, version: str, mailbox: str) -> Any:
        """The ``api`` client (``gmail``/``v1``, ``calendar``/``v3``) acting as ``mailbox``."""
        cache: dict[tuple[str, str, int], Any] = self._local.__dict__.setdefault("services", {})
        key = (api, mailbox, self._generation)
        if key not in cache:
            cache[key] = self._build(api, version, mailbox)
        return cache[key]

    def _replaced(self, request: Any) -> bool:
        """Whether the refused credentials of ``request`` have been replaced in the token store."""
        replaced = getattr(self.credentials, "replaced", None)
        used = getattr(getattr(request, "http", None), "credentials", None)
        return bool(replaced is not None and used is not None and replaced(used))

    def forget_credentials(self) -> None:
        """Build new clients with fresh credentials: a refused token may have been replaced by
        ``inboxflow mailbox connect`` since (every thread's clients are rebuilt on next use)."""
        forget = getattr(self.credentials, "forget", None)
        if forget is not None:
            forget(None)
        self._generation += 1

    def _build(self, api: str, version: str, mailbox: str) -> Any:
        import httplib2
        from googleapiclient.discovery import build

        http: Any = httplib2.Http(timeout=self.timeout_s)
        credentials = self.credentials(mailbox) if self.credentials is not None else None
        if credentials is not None:
            import google_auth_httplib2

            http = google_auth_httplib2.AuthorizedHttp(credentials, http=http)
        options = None
        if self.api_url:
            # Gmail's discovery paths carry "gmail/v1/"; Calendar's service path is its own.
            path = "/" if api == "gmail" else f"/{api}/{version}/"
            options = {"api_endpoint": f"{self.api_url}{path}"}
        return build(
            api,
            version,
            http=http,
            static_discovery=True,
            cache_discovery=False,
            client_options=options,
        )

    def execute(self, request: Any, errors: PortErrors, retries: int | None = None) -> Any:
        """Run a client request; retry retryable failures, raise the rest as ``errors`` says.

        Args:
            request: a ``googleapiclient.http.HttpRequest``.
            errors: the port's exceptions per kind of failure.
            retries: retries of a retryable failure (default ``num_retries``).

        Returns:
            The decoded JSON answer.
        """
        attempts = 1 + (self.num_retries if retries is None else retries)
        what = str(getattr(request, "methodId", "") or "Google API")
        for attempt in range(attempts):
            try:
                return request.execute(num_retries=0)
            except Exception as exc:
                failure = failure_of(exc, what)
                if failure is None:
                    raise
                if failure.kind is FailureKind.DISCONNECTED:
                    if self._replaced(request):  # reconnected since: the next call works
                        self.forget_credentials()
                        raise errors.unavailable(
                            f"{failure.message}; a new token was stored since: try again", 503
                        ) from exc
                    self.forget_credentials()
                if not failure.kind.retryable or attempt == attempts - 1:
                    raise errors.error(failure) from exc
            self.sleep(backoff_delay(attempt))
        raise AssertionError("unreachable")


__all__ = [
    "GOOGLE_API_URL_ENV",
    "RATE_LIMIT_REASONS",
    "ApiFailure",
    "ErrorFactory",
    "FailureKind",
    "GoogleApiConnection",
    "PortErrors",
    "backoff_delay",
    "classify",
    "failure_of",
    "google_api_url",
    "http_error_failure",
    "mailbox_credentials",
    "refresh_error_code",
]

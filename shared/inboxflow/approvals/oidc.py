"""Who may call ``/timeout``: the Cloud Tasks OIDC token check.

Verification is on by default on Cloud Run (``K_SERVICE``) and off locally,
where the emulator sends no token (``INBOXFLOW_TASKS_VERIFY`` overrides).
On means: the token is signed by Google (RS256, a key from Google's
certificates), unexpired, for our audience (``INBOXFLOW_TASKS_AUDIENCE``,
else ``INBOXFLOW_TASKS_URL``, else ``INBOXFLOW_APPROVAL_URL``: what the tasks
are created with) and minted for the tasks invoker
(``INBOXFLOW_TASKS_INVOKER``), with a verified email.
Verification on without an audience or an invoker fails closed: every call
is a 500, never an accepted token. Google's certificates are cached as long
as their ``Cache-Control`` allows; failing to fetch them is a 503.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from .errors import ApprovalError

GOOGLE_CERTS_URL = "https://www.googleapis.com/oauth2/v1/certs"
GOOGLE_ISSUERS = ("accounts.google.com", "https://accounts.google.com")
DEFAULT_CERTS_TTL_S = 3600.0
CLOCK_SKEW_S = 10


class CertificateCache:
    """Google's token-signing certificates, fetched once per ``max-age``.

    Args:
        url: where the certificates are (a JSON object of key id -> PEM).
        clock: time source.
        fetch: ``url -> (body, headers)``; default urllib with a 10 s timeout.
    """

    def __init__(
        self,
        url: str = GOOGLE_CERTS_URL,
        clock: Callable[[], float] = time.time,
        fetch: Callable[[str], tuple[bytes, Mapping[str, str]]] | None = None,
    ) -> None:
        self.url = url
        self.clock = clock
        self.fetch = fetch or _fetch
        self.fetches = 0
        self._certs: dict[str, str] | None = None
        self._until = 0.0
        self._lock = threading.Lock()

    def certs(self) -> dict[str, str]:
        """The current certificates.

        Raises:
            ApprovalError: 503 when they cannot be fetched (and none are cached).
        """
        with self._lock:
            if self._certs is not None and self.clock() < self._until:
                return self._certs
            try:
                body, headers = self.fetch(self.url)
                certs = json.loads(body)
                if not isinstance(certs, dict) or not certs:
                    raise ValueError("not a JSON object of certificates")
            except Exception as exc:
                raise ApprovalError(
                    503, "Unavailable", f"cannot fetch Google's certificates: {exc}"
                ) from exc
            self.fetches += 1
            self._certs = {str(k): str(v) for k, v in certs.items()}
            self._until = self.clock() + _max_age(headers)
            return self._certs


def _fetch(url: str) -> tuple[bytes, Mapping[str, str]]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read(), dict(response.headers.items())


def _max_age(headers: Mapping[str, str]) -> float:
    control = next((v for k, v in headers.items() if k.lower() == "cache-control"), "")
    match = re.search(r"max-age=(\d+)", control)
    return float(match.group(1)) if match else DEFAULT_CERTS_TTL_S


class TaskTokenVerifier:
    """Checks the OIDC token of a deadline task's call.

    Args:
        audience: the audience the tasks are created with.
        invoker: the service account email the tokens must be minted for.
        certs: Google's certificates.
        clock: time source (expiry).
    """

    def __init__(
        self,
        audience: str | None,
        invoker: str | None,
        certs: CertificateCache,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.audience = audience
        self.invoker = invoker
        self.certs = certs
        self.clock = clock

    def verify(self, bearer: str | None) -> dict[str, Any]:
        """The token's claims if it is good.

        Raises:
            ApprovalError: 500 misconfigured (no audience or invoker), 401 no or bad
                token, 403 another account, 503 certificates unavailable.
        """
        if not self.audience or not self.invoker:
            raise ApprovalError(
                500,
                "Misconfigured",
                "task verification is on but INBOXFLOW_TASKS_AUDIENCE (or INBOXFLOW_APPROVAL_URL) "
                "or INBOXFLOW_TASKS_INVOKER is not set",
            )
        if not bearer:
            raise ApprovalError(401, "Unauthorized", "an OIDC token is required")
        from google.auth import exceptions, jwt

        certs = self.certs.certs()
        try:
            claims = _decode(jwt, bearer, certs, self.audience, self.clock())
        except (ValueError, TypeError, exceptions.GoogleAuthError) as exc:
            # TypeError: ``iat``/``exp`` that are not numbers (a forgery: 401, never 500)
            raise ApprovalError(401, "Unauthorized", f"invalid OIDC token: {exc}") from exc
        if claims.get("iss") not in GOOGLE_ISSUERS:
            raise ApprovalError(401, "Unauthorized", "the token is not issued by Google")
        if claims.get("email") != self.invoker or claims.get("email_verified") is not True:
            raise ApprovalError(403, "Forbidden", "the token is not from the tasks invoker")
        return claims


def _decode(jwt: Any, token: str, certs: dict[str, str], audience: str, now: float) -> Any:
    """``jwt.decode`` with RS256 only, and expiry against ``now``."""
    header = jwt.decode_header(token)
    if header.get("alg") != "RS256":
        raise ValueError(f"algorithm {header.get('alg')!r} is not accepted")
    claims = jwt.decode(token, certs=certs, audience=audience, clock_skew_in_seconds=CLOCK_SKEW_S)
    expires = claims.get("exp")
    if not isinstance(expires, int | float) or now > expires + CLOCK_SKEW_S:
        raise ValueError("token expired")
    return claims


_cache: CertificateCache | None = None
_cache_lock = threading.Lock()


def certificate_cache(url: str) -> CertificateCache:
    """The process-wide certificate cache (one per URL)."""
    global _cache
    with _cache_lock:
        if _cache is None or _cache.url != url:
            _cache = CertificateCache(url)
        return _cache


def verification_enabled(environ: Mapping[str, str]) -> bool:
    """``INBOXFLOW_TASKS_VERIFY`` when set, else on under Cloud Run (``K_SERVICE``), in the
    environment the entry point read."""
    env = environ
    setting = env.get("INBOXFLOW_TASKS_VERIFY")
    if setting:
        return setting.lower() in ("1", "true", "yes", "on")
    return bool(env.get("K_SERVICE"))


def verifier_from_env(environ: Mapping[str, str]) -> TaskTokenVerifier:
    """The verifier the settings describe (``INBOXFLOW_TASKS_CERTS_URL`` for tests)."""
    env = environ
    return TaskTokenVerifier(
        audience=env.get("INBOXFLOW_TASKS_AUDIENCE")
        or (env.get("INBOXFLOW_TASKS_URL") or "").rstrip("/")
        or env.get("INBOXFLOW_APPROVAL_URL"),
        invoker=env.get("INBOXFLOW_TASKS_INVOKER") or env.get("INBOXFLOW_TASKS_SA"),
        certs=certificate_cache(env.get("INBOXFLOW_TASKS_CERTS_URL") or GOOGLE_CERTS_URL),
    )


def verify_task_oidc(request: Any, environ: Mapping[str, str]) -> None:
    """Check the Cloud Tasks OIDC token of a timeout call, when verification is on in
    ``environ`` (the entry point's environment: ``verification_enabled``, ``verifier_from_env``).

    Raises:
        ApprovalError: see ``TaskTokenVerifier.verify``.
    """
    if not verification_enabled(environ):
        return
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    bearer = value.strip() if scheme.lower() == "bearer" else None
    verifier_from_env(environ).verify(bearer or None)

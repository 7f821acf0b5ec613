"""Identity-Aware Proxy: the signed ``X-Goog-IAP-JWT-Assertion`` names the reviewer.

Off unless ``INBOXFLOW_IAP_AUDIENCE`` is set (docs/deploy.md: putting the
approval function behind IAP). On, every inbox request must carry an
assertion signed by IAP (ES256, a key from Google's IAP keys), unexpired,
issued by ``https://cloud.google.com/iap`` for that audience; its ``email``
is the reviewer. A session started under IAP is good only with an assertion
for the same email.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import lru_cache

from .errors import ApprovalError
from .oidc import CLOCK_SKEW_S, CertificateCache
from .settings import ApprovalConfig

IAP_KEYS_URL = "https://www.gstatic.com/iap/verify/public_key"
IAP_ISSUER = "https://cloud.google.com/iap"
IAP_HEADER = "X-Goog-IAP-JWT-Assertion"


class IapVerifier:
    """Checks IAP's signed header.

    Args:
        audience: the backend's audience (``/projects/NUMBER/global/backendServices/ID``
            or ``/projects/NUMBER/locations/REGION/services/NAME``).
        keys: IAP's public keys (a JSON object of key id -> PEM).
        clock: time source (expiry).
    """

    def __init__(
        self, audience: str, keys: CertificateCache, clock: Callable[[], float] = time.time
    ) -> None:
        self.audience = audience
        self.keys = keys
        self.clock = clock

    def reviewer(self, assertion: str | None) -> str:
        """The email the assertion was issued for.

        Raises:
            ApprovalError: 401 no or bad assertion; 503 keys unavailable.
        """
        if not assertion:
            raise ApprovalError(401, "Unauthorized", "this inbox is served through IAP only")
        from google.auth import exceptions, jwt

        keys = self.keys.certs()
        try:
            header = jwt.decode_header(assertion)
            if header.get("alg") != "ES256":
                raise ValueError(f"algorithm {header.get('alg')!r} is not accepted")
            claims = jwt.decode(
                assertion,
                certs=keys,
                audience=self.audience,
                clock_skew_in_seconds=CLOCK_SKEW_S,
            )
        except (ValueError, TypeError, exceptions.GoogleAuthError) as exc:
            # TypeError: google.auth compares ``iat``/``exp`` as numbers; a string or a
            # list there is a forged assertion, not our failure (401, never 500).
            raise ApprovalError(401, "Unauthorized", f"invalid IAP assertion: {exc}") from exc
        expires = claims.get("exp")
        if not isinstance(expires, int | float) or self.clock() > expires + CLOCK_SKEW_S:
            raise ApprovalError(401, "Unauthorized", "the IAP assertion has expired")
        email = claims.get("email")
        if claims.get("iss") != IAP_ISSUER or not isinstance(email, str) or "@" not in email:
            raise ApprovalError(401, "Unauthorized", "the IAP assertion names no user")
        return email


def iap_verifier(config: ApprovalConfig) -> IapVerifier | None:
    """The verifier the configuration asks for (None: IAP is off)."""
    if not config.iap_audience:
        return None
    return IapVerifier(config.iap_audience, _keys(config.iap_keys_url or IAP_KEYS_URL))


@lru_cache(maxsize=4)
def _keys(url: str) -> CertificateCache:
    """The process-wide cache of IAP's keys (apart from the tasks' certificates)."""
    return CertificateCache(url)

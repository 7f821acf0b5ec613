"""Credentials for Gmail and Calendar: domain-wide delegation or a stored OAuth refresh token.

The key material comes from the environment, never from the code or the repository:

- ``INBOXFLOW_GMAIL_CREDENTIALS``: the JSON itself, or a path to a JSON file;
- ``INBOXFLOW_GMAIL_CREDENTIALS_SECRET``: a Secret Manager secret holding it
  (``projects/P/secrets/S[/versions/V]``, or just ``S`` in ``GOOGLE_CLOUD_PROJECT``),
  read once with the function's own identity (Application Default Credentials).

The JSON is one of:

- a service-account key (``"type": "service_account"``), used with domain-wide
  delegation as the mailbox (``subject=mailbox``);
- keyless domain-wide delegation (``{"type": "keyless_delegation",
  "service_account": EMAIL}``), for organizations that forbid keys
  (``iam.disableServiceAccountKeyCreation``): the function's own identity has
  Token Creator on ``EMAIL`` and has Google sign the delegation JWT (``sub`` =
  the mailbox) with the IAM Credentials ``signJwt`` method, then exchanges it
  at the OAuth token endpoint (google-auth's impersonated credentials with a
  ``subject``); no key exists anywhere;
- an authorized user (``{"type": "authorized_user", client_id, client_secret,
  refresh_token}``) for a single mailbox (its ``account``, when it names one,
  must be the mailbox).

Each mailbox may have its own token, kept by ``inboxflow mailbox connect`` in
the token store (``mailbox_tokens``: a 0600 file per mailbox in the home, or a
Secret Manager secret per mailbox): ``credentials_from_env`` uses it for that
mailbox before anything else, so several personal accounts share one
deployment. A token's refresh asks for the scopes its consent granted and no
more (asking for more is ``invalid_scope``). With neither variable set nor a
token of its own, a mailbox gets Application Default Credentials. Against the
local double (``INBOXFLOW_GOOGLE_API_URL``) a mailbox without a token of its
own needs no credentials.

``google.auth`` is imported inside the functions, so importing this module costs nothing.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .mailbox_tokens import CLOUD_PLATFORM_SCOPE, SECRET_MANAGER_URL, TokenStore, token_store

GMAIL_MODIFY_SCOPE = "https://www.googleapis.com/auth/gmail.modify"
CALENDAR_EVENTS_SCOPE = "https://www.googleapis.com/auth/calendar.events"
SCOPES = (GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE)
KEYLESS_DELEGATION = "keyless_delegation"
CREDENTIAL_TYPES = ("service_account", KEYLESS_DELEGATION, "authorized_user")

SecretFetcher = Callable[[str], str]
"""Reads a Secret Manager version (full resource name) and returns its payload as text."""
CredentialsFactory = Callable[[str], Any]
"""``mailbox -> google.auth credentials`` acting as that mailbox."""


class CredentialsError(ValueError):
    """The configured credentials cannot be used; the message says what is wrong."""


def secret_version_name(name: str, project: str | None) -> str:
    """The full version name of a secret reference.

    ``S`` -> ``projects/{project}/secrets/S/versions/latest``;
    ``projects/P/secrets/S`` -> ``.../versions/latest``; a version name stays as is.

    Raises:
        CredentialsError: a short name without a project.
    """
    name = name.strip()
    if not name.startswith("projects/"):
        if not project:
            raise CredentialsError(
                f"secret {name!r} needs GOOGLE_CLOUD_PROJECT (or a full projects/... name)"
            )
        name = f"projects/{project}/secrets/{name}"
    return name if "/versions/" in name else f"{name}/versions/latest"


def fetch_secret(version_name: str) -> str:
    """Read a secret version over Secret Manager's REST API with Application Default Credentials."""
    import google.auth
    from google.auth.transport.requests import AuthorizedSession

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    response = AuthorizedSession(credentials).get(
        f"{SECRET_MANAGER_URL}/{version_name}:access", timeout=30
    )
    if response.status_code != 200:
        raise CredentialsError(
            f"Secret Manager answered {response.status_code} for {version_name}: {response.text[:200]}"
        )
    data = response.json()["payload"]["data"]
    return base64.b64decode(data).decode("utf-8")


def credentials_info(
    environ: Mapping[str, str], fetch: SecretFetcher | None = None
) -> dict[str, Any] | None:
    """The credentials JSON ``environ`` (the entry point's environment) configures, or None.

    Raises:
        CredentialsError: the value is neither JSON nor a readable JSON file,
            its ``type`` is not ``service_account`` / ``keyless_delegation`` /
            ``authorized_user``, or a keyless delegation names no service account.
    """
    env = environ
    text = env.get("INBOXFLOW_GMAIL_CREDENTIALS", "").strip()
    source = "INBOXFLOW_GMAIL_CREDENTIALS"
    if not text and env.get("INBOXFLOW_GMAIL_CREDENTIALS_SECRET"):
        source = "INBOXFLOW_GMAIL_CREDENTIALS_SECRET"
        name = secret_version_name(
            env["INBOXFLOW_GMAIL_CREDENTIALS_SECRET"],
            env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT"),
        )
        text = (fetch or fetch_secret)(name).strip()
    if not text:
        return None
    if not text.startswith("{"):
        path = Path(text).expanduser()
        if not path.is_file():
            raise CredentialsError(f"{source}: not JSON and not a file: {text[:40]!r}")
        text = path.read_text("utf-8")
    try:
        info = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CredentialsError(f"{source}: invalid JSON ({exc.msg})") from None
    if not isinstance(info, dict) or info.get("type") not in CREDENTIAL_TYPES:
        raise CredentialsError(
            f"{source}: expected a service_account key, a keyless_delegation or an "
            f"authorized_user token, "
            f"got type {info.get('type') if isinstance(info, dict) else type(info).__name__!r}"
        )
    if info["type"] == KEYLESS_DELEGATION and "@" not in str(info.get("service_account", "")):
        raise CredentialsError(
            f'{source}: a keyless_delegation needs "service_account": the delegate\'s email'
        )
    return info


def credentials_for(
    info: Mapping[str, Any], mailbox: str, scopes: Sequence[str] | None = None
) -> Any:
    """``google.auth`` credentials acting as ``mailbox``.

    Args:
        info: a service-account key (domain-wide delegation: the token is for
            ``subject=mailbox``), a keyless delegation (the same token, its JWT
            signed by Google with the IAM Credentials API as
            ``info["service_account"]``, authenticated with Application Default
            Credentials) or an authorized-user token (it must belong to ``mailbox``:
            an ``account`` naming another address is refused).
        mailbox: the address the agent works for.
        scopes: what the mailbox needs (its graphs', ``mailbox_scopes``). A
            delegation asks for exactly these (default: Gmail and Calendar). An
            authorized user's refresh asks for those of them its consent recorded
            (``info["scopes"]``), never more (all it recorded when none of them,
            or without ``scopes``); without a record, for none, which Google
            answers with every scope granted.

    Raises:
        CredentialsError: the JSON lacks a field the credentials need, or the
            token is another account's.
    """
    wanted = list(scopes) if scopes else list(SCOPES)
    try:
        if info.get("type") == "service_account":
            from google.oauth2 import service_account

            return service_account.Credentials.from_service_account_info(
                dict(info), scopes=wanted, subject=mailbox
            )
        if info.get("type") == KEYLESS_DELEGATION:
            import google.auth
            from google.auth import impersonated_credentials

            source, _ = google.auth.default(scopes=[CLOUD_PLATFORM_SCOPE])
            return impersonated_credentials.Credentials(
                source_credentials=source,
                target_principal=info["service_account"],
                target_scopes=wanted,
                subject=mailbox,
            )
        from google.oauth2.credentials import Credentials

        from ..mail.addresses import same_address

        account = info.get("account")
        if account and not same_address(str(account), mailbox):
            raise CredentialsError(
                f"the authorized-user token is {account}'s, not {mailbox}'s: "
                f"run `inboxflow mailbox connect {mailbox}`"
            )
        consented = [str(scope) for scope in info.get("scopes") or ()]
        needed = [scope for scope in scopes or () if scope in consented]
        credentials = Credentials.from_authorized_user_info(
            dict(info), scopes=(needed or consented) or None
        )
        # google-auth always refreshes at Google's endpoint; only the local double's
        # (plain http on the loopback) may replace it, never another host.
        token_uri = str(info.get("token_uri") or "")
        if _loopback_http(token_uri):
            credentials = credentials.with_token_uri(token_uri)
        return credentials
    except (KeyError, ValueError) as exc:
        if isinstance(exc, CredentialsError):
            raise
        raise CredentialsError(f"unusable credentials ({info.get('type')}): {exc}") from exc


def credentials_from_env(
    environ: Mapping[str, str],
    tokens: TokenStore | None = None,
    scopes_for: Callable[[str], Sequence[str]] | None = None,
) -> CredentialsFactory:
    """``mailbox -> credentials``: the mailbox's own token, else the shared key, read on first use.

    Args:
        environ: ``INBOXFLOW_GMAIL_CREDENTIALS[_SECRET]`` and ``INBOXFLOW_MAILBOX_TOKENS``.
        tokens: the per-mailbox token store (default: ``mailbox_tokens.token_store``).
        scopes_for: the scopes each mailbox needs (its graphs'), given to ``credentials_for``
            whatever the credential type (default: Gmail and Calendar).

    The shared key is read once per process (one Secret Manager access); each
    mailbox gets its own credentials, cached until ``forget`` (a refused token:
    the next use reads the store again, where a reconnect may have put a new one).
    Without a token of its own or a configured key, a mailbox gets the
    Application Default Credentials.
    """
    return PerMailboxCredentials(environ, tokens, scopes_for, shared=True)


def own_credentials(
    environ: Mapping[str, str],
    tokens: TokenStore | None = None,
    scopes_for: Callable[[str], Sequence[str]] | None = None,
) -> CredentialsFactory:
    """``mailbox -> credentials | None``: only mailboxes with a token of their own (against the
    local double, the others need none); ``scopes_for`` as for ``credentials_from_env``."""
    return PerMailboxCredentials(environ, tokens, scopes_for, shared=False)


class PerMailboxCredentials:
    """The credentials factory of ``credentials_from_env`` / ``own_credentials``: callable, cached
    per mailbox, with ``forget``."""

    def __init__(
        self,
        environ: Mapping[str, str],
        tokens: TokenStore | None,
        scopes_for: Callable[[str], Sequence[str]] | None,
        shared: bool,
    ) -> None:
        self.environ = environ
        self.tokens = tokens
        self.scopes_for = scopes_for
        self.shared = shared
        self._lock = threading.Lock()
        self._loaded: list[dict[str, Any] | None] = []
        self._per_mailbox: dict[str, Any] = {}

    def __call__(self, mailbox: str) -> Any:
        with self._lock:
            if mailbox in self._per_mailbox:
                return self._per_mailbox[mailbox]
            if self.tokens is None:
                self.tokens = token_store(self.environ)
            own = self.tokens.get(mailbox)
            scopes = self.scopes_for(mailbox) if self.scopes_for is not None else None
            if own is not None:
                found = credentials_for(own, mailbox, scopes)
            elif not self.shared:
                found = None
            else:
                if not self._loaded:
                    self._loaded.append(credentials_info(self.environ))
                info = self._loaded[0]
                found = (
                    credentials_for(info, mailbox, scopes)
                    if info is not None
                    else _default_credentials()
                )
            self._per_mailbox[mailbox] = found
            return found

    def replaced(self, credentials: Any) -> bool:
        """Whether the mailbox ``credentials`` were built for now has another token in the
        store (its owner reconnected it since they were cached)."""
        with self._lock:
            mailbox = next((m for m, c in self._per_mailbox.items() if c is credentials), None)
        if mailbox is None or self.tokens is None:
            return False
        own = self.tokens.get(mailbox)
        return own is not None and own.get("refresh_token") != getattr(
            credentials, "refresh_token", None
        )

    def forget(self, mailbox: str | None = None) -> None:
        """Drop the cached credentials of ``mailbox`` (every mailbox with None)."""
        with self._lock:
            if mailbox is None:
                self._per_mailbox.clear()
            else:
                self._per_mailbox.pop(mailbox, None)


def _loopback_http(url: str) -> bool:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")


def _default_credentials() -> Any:
    import google.auth

    credentials, _ = google.auth.default(scopes=list(SCOPES))
    return credentials


__all__ = [
    "CALENDAR_EVENTS_SCOPE",
    "CREDENTIAL_TYPES",
    "GMAIL_MODIFY_SCOPE",
    "KEYLESS_DELEGATION",
    "SCOPES",
    "CredentialsError",
    "CredentialsFactory",
    "PerMailboxCredentials",
    "SecretFetcher",
    "credentials_for",
    "credentials_from_env",
    "credentials_info",
    "fetch_secret",
    "own_credentials",
    "secret_version_name",
]

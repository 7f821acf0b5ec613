"""A local HTTP double of Google's OAuth 2.0 endpoints for installed (Desktop) apps.

It answers what ``google-auth-oauthlib`` and ``google-auth`` call, as strictly
as Google does:

- ``GET /o/oauth2/auth``: the consent screen. The request is checked first
  (known ``client_id``; ``response_type=code``; a ``redirect_uri`` on the
  loopback, ``http://127.0.0.1:PORT``, ``http://localhost:PORT`` or
  ``http://[::1]:PORT``, the only redirects of a Desktop client; at least one
  scope; PKCE ``code_challenge`` with ``code_challenge_method=S256``); a bad
  request is a 400 page, as Google shows, never a redirect. The page is a form:
  the account signing in, a box per scope (granular consent), Allow or Deny.
  GET changes nothing.
- ``POST /o/oauth2/approve``: the form's answer. Deny redirects with
  ``error=access_denied``; Allow redirects with a single-use authorization code
  (10 minutes) and the request's ``state``.
- ``POST /token``: ``authorization_code`` (client authenticated by HTTP Basic
  or in the body; the code unused, unexpired and the client's; the
  ``redirect_uri`` exactly the authorization request's; the ``code_verifier``
  whose S256 is the challenge) and ``refresh_token`` (not revoked; a ``scope``
  parameter only within the grant, else ``invalid_scope``). Errors are Google's
  ``{"error", "error_description"}`` with its statuses.
- ``POST /token`` with ``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer``:
  domain-wide delegation (a service account's signed JWT, ``sub`` = the
  mailbox), as google-auth's service-account credentials send it. The
  signature is checked with the public key the test registered
  (``add_delegation``, as an admin authorizes a client id), ``aud`` must be
  Google's token endpoint (what google-auth signs, wherever it posts), the JWT
  short-lived and unexpired, and every ``scope`` one the
  delegation authorizes, else ``unauthorized_client`` as Google answers;
  ``delegation_requests`` records ``(service account, subject, scopes)``.
- ``POST /revoke``: revokes a refresh token (and its access tokens) or an access token.

``include_granted_scopes=true`` adds the account's earlier grants to the new
one, as Google's incremental authorization does. Access tokens can be checked
by the API doubles (``token_info``). Test hooks: ``add_client``,
``token_requests`` (per grant type), ``refresh_attempts``, ``revoke_account``,
``expire_access_tokens``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from werkzeug.wrappers import Request, Response

from inboxflow.dev.doubles.serving import WsgiServing, clock_reader

AUTH_PATH = "/o/oauth2/auth"
APPROVE_PATH = "/o/oauth2/approve"
TOKEN_PATH = "/token"
REVOKE_PATH = "/revoke"
PATHS = (AUTH_PATH, APPROVE_PATH, TOKEN_PATH, REVOKE_PATH)
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
MAX_JWT_LIFETIME_S = 3600
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
CODE_TTL_S = 600.0
ACCESS_TTL_S = 3599
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


@dataclass
class _Client:
    client_id: str
    client_secret: str
    kind: str  # "installed" or "web"


@dataclass
class _Pending:
    client_id: str
    redirect_uri: str
    scopes: tuple[str, ...]
    state: str | None
    challenge: str
    include_granted: bool


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    account: str
    scopes: frozenset[str]
    expires: float
    used: bool = False


@dataclass
class Grant:
    """A refresh token's grant: whose, for which client, which scopes, revoked or not."""

    account: str
    client_id: str
    scopes: frozenset[str]
    revoked: bool = False
    access_tokens: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TokenInfo:
    """What an access token stands for (for the API doubles)."""

    account: str
    scopes: frozenset[str]
    expires: float


class OAuthError(Exception):
    """An OAuth error answer: ``{"error", "error_description"}`` with an HTTP status."""

    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}")
        self.status, self.error, self.description = status, error, description


class OAuthDouble(WsgiServing):
    """Google's authorization, token and revocation endpoints on loopback, thread-safe.

    Args:
        clock: time source with ``now()`` (default: wall clock).
    """

    thread_name = "oauth-double"

    def __init__(self, clock: Any = None) -> None:
        self._now = clock_reader(clock)
        self._lock = threading.RLock()
        self._clients: dict[str, _Client] = {}
        self._pending: dict[str, _Pending] = {}
        self._codes: dict[str, _Code] = {}
        self._grants: dict[str, Grant] = {}
        self._access: dict[str, tuple[str, TokenInfo]] = {}  # token -> (refresh token, info)
        self._granted: dict[tuple[str, str], frozenset[str]] = {}  # (client, account) -> scopes
        self.token_requests: Counter[str] = Counter()
        """Token endpoint requests per ``grant_type`` (``refresh_token``: refresh attempts)."""
        self._delegations: dict[str, tuple[str, frozenset[str]]] = {}  # email -> (key, scopes)
        self.delegation_requests: list[tuple[str, str, frozenset[str]]] = []
        """Granted JWT-bearer requests: ``(service account, subject, scopes asked for)``."""

    # --- configuration and test hooks ----------------------------------------------------

    def add_client(self, kind: str = "installed") -> tuple[str, str]:
        """Register an OAuth client (``installed``: Desktop, ``web``); returns (id, secret)."""
        client_id = f"{secrets.token_hex(6)}-double.apps.googleusercontent.com"
        secret = f"GOCSPX-{secrets.token_urlsafe(18)}"
        with self._lock:
            self._clients[client_id] = _Client(client_id, secret, kind)
        return client_id, secret

    def client_secrets(
        self, kind: str = "installed", base_url: str | None = None
    ) -> dict[str, Any]:
        """A new client's secrets file as the Cloud console downloads it, pointing at this double.

        Args:
            kind: ``installed`` (Desktop app) or ``web``.
            base_url: where the double is served (default: its own ``url``; the Google API
                double's when it serves these endpoints).
        """
        client_id, secret = self.add_client(kind)
        base = base_url or self.url
        return {
            kind: {
                "client_id": client_id,
                "project_id": "inboxflow-local",
                "auth_uri": f"{base}{AUTH_PATH}",
                "token_uri": f"{base}{TOKEN_PATH}",
                "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
                "client_secret": secret,
                "redirect_uris": ["http://localhost"],
            }
        }

    def add_delegation(
        self, service_account: str, public_key_pem: str, scopes: Iterable[str]
    ) -> None:
        """Authorize ``service_account`` (the key whose public half is ``public_key_pem``) for
        domain-wide delegation of ``scopes``, as a Workspace admin does for its client id."""
        with self._lock:
            self._delegations[service_account] = (public_key_pem, frozenset(scopes))

    @property
    def refresh_attempts(self) -> int:
        """How many ``refresh_token`` grants were asked for (successful or not)."""
        with self._lock:
            return self.token_requests["refresh_token"]

    def revoke_account(self, account: str) -> int:
        """Revoke every grant of ``account`` (the person removed the app's access); returns how many."""
        with self._lock:
            grants = [g for g in self._grants.values() if g.account == account and not g.revoked]
            for grant in grants:
                self._revoke(grant)
            return len(grants)

    def expire_access_tokens(self) -> None:
        """Make every access token expired (the next API call must refresh)."""
        with self._lock:
            for token, (refresh, info) in list(self._access.items()):
                self._access[token] = (refresh, TokenInfo(info.account, info.scopes, 0.0))

    def token_info(self, access_token: str) -> TokenInfo | None:
        """The account and scopes of a live access token; None if unknown, expired or revoked."""
        with self._lock:
            found = self._access.get(access_token)
            if found is None:
                return None
            refresh, info = found
            grant = self._grants.get(refresh)
            if grant is None or grant.revoked or info.expires <= self._now():
                return None
            return info

    def grants(self, account: str) -> list[Grant]:
        """The account's grants (refresh tokens), revoked ones included."""
        with self._lock:
            return [g for g in self._grants.values() if g.account == account]

    # --- WSGI ----------------------------------------------------------------------------

    def respond(self, request: Request) -> Response:
        """Answer one request to one of ``PATHS`` (404 for any other)."""
        try:
            with self._lock:
                if request.path == AUTH_PATH and request.method == "GET":
                    return self._consent_page(request)
                if request.path == APPROVE_PATH and request.method == "POST":
                    return self._approve(request)
                if request.path == TOKEN_PATH and request.method == "POST":
                    return _json(self._token(request), 200)
                if request.path == REVOKE_PATH and request.method == "POST":
                    self._revoke_token(request)
                    return _json({}, 200)
        except OAuthError as exc:
            return _json({"error": exc.error, "error_description": exc.description}, exc.status)
        return Response("Not Found", status=404)

    # --- authorization -------------------------------------------------------------------

    def _consent_page(self, request: Request) -> Response:
        args = request.args
        client = self._clients.get(args.get("client_id", ""))
        if client is None:
            return _error_page("invalid_client", "The OAuth client was not found.", 401)
        redirect_uri = args.get("redirect_uri", "")
        if client.kind != "installed" or not _loopback(redirect_uri):
            return _error_page(
                "redirect_uri_mismatch",
                f"redirect_uri={redirect_uri} is not a loopback address this client may use",
            )
        if args.get("response_type") != "code":
            return _error_page("unsupported_response_type", "response_type must be code")
        scopes = tuple(args.get("scope", "").split())
        if not scopes:
            return _error_page("invalid_request", "Missing required parameter: scope")
        challenge = args.get("code_challenge", "")
        if args.get("code_challenge_method") != "S256" or not challenge:
            return _error_page(
                "invalid_request", "code_challenge and code_challenge_method=S256 are required"
            )
        request_id = secrets.token_urlsafe(16)
        self._pending[request_id] = _Pending(
            client.client_id,
            redirect_uri,
            scopes,
            args.get("state"),
            challenge,
            args.get("include_granted_scopes") == "true",
        )
        boxes = "".join(
            f'<label><input type="checkbox" name="scope" value="{html.escape(s)}" checked>'
            f"{html.escape(s)}</label><br>"
            for s in scopes
        )
        page = (
            "<!doctype html><title>Sign in - Google Accounts (double)</title>"
            f'<form method="post" action="{APPROVE_PATH}">'
            f'<input type="hidden" name="request" value="{request_id}">'
            '<label>Account <input name="account" type="email"></label><br>'
            f"{boxes}"
            '<button name="decision" value="allow">Allow</button>'
            '<button name="decision" value="deny">Cancel</button></form>'
        )
        return Response(page, mimetype="text/html")

    def _approve(self, request: Request) -> Response:
        form = request.form
        pending = self._pending.pop(form.get("request", ""), None)
        if pending is None:
            return _error_page("invalid_request", "This consent request is unknown or answered")
        params: dict[str, str] = {}
        if form.get("decision") != "allow":
            params["error"] = "access_denied"
        else:
            account = form.get("account", "").strip().lower()
            if "@" not in account:
                return _error_page("invalid_request", "Choose an account")
            chosen = frozenset(form.getlist("scope")) & frozenset(pending.scopes)
            if pending.include_granted:
                chosen |= self._granted.get((pending.client_id, account), frozenset())
            code = f"4/0{secrets.token_urlsafe(40)}"
            self._codes[code] = _Code(
                pending.client_id,
                pending.redirect_uri,
                pending.challenge,
                account,
                chosen,
                self._now() + CODE_TTL_S,
            )
            params["code"] = code
            params["scope"] = " ".join(sorted(chosen))
        if pending.state is not None:
            params["state"] = pending.state
        return Response(
            status=302, headers={"Location": f"{pending.redirect_uri}?{urlencode(params)}"}
        )

    # --- tokens --------------------------------------------------------------------------

    def _client_of(self, request: Request) -> _Client:
        form = request.form
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        auth = request.authorization
        if auth is not None and auth.type == "basic":
            client_id, secret = auth.username or "", auth.password or ""
        client = self._clients.get(client_id)
        if client is None or not secrets.compare_digest(client.client_secret, secret):
            raise OAuthError(401, "invalid_client", "Unauthorized")
        return client

    def _token(self, request: Request) -> dict[str, Any]:
        form = request.form
        grant_type = form.get("grant_type", "")
        self.token_requests[grant_type] += 1
        if grant_type == JWT_BEARER:  # a signed assertion, no client secret
            return self._delegate(request)
        client = self._client_of(request)
        if grant_type == "authorization_code":
            return self._exchange_code(client, form)
        if grant_type == "refresh_token":
            return self._refresh(client, form)
        raise OAuthError(400, "unsupported_grant_type", f"Invalid grant_type: {grant_type}")

    def _exchange_code(self, client: _Client, form: Any) -> dict[str, Any]:
        code = self._codes.get(form.get("code", ""))
        if code is None or code.client_id != client.client_id:
            raise OAuthError(400, "invalid_grant", "Malformed auth code.")
        if code.used or code.expires <= self._now():
            raise OAuthError(400, "invalid_grant", "Bad Request")
        if form.get("redirect_uri", "") != code.redirect_uri:
            raise OAuthError(400, "redirect_uri_mismatch", "Bad Request")
        verifier = form.get("code_verifier", "")
        if not verifier:
            raise OAuthError(400, "invalid_grant", "Missing code verifier.")
        digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
        if base64.urlsafe_b64encode(digest).decode().rstrip("=") != code.challenge:
            raise OAuthError(400, "invalid_grant", "Invalid code verifier.")
        code.used = True
        refresh = f"1//0{secrets.token_urlsafe(48)}"
        self._grants[refresh] = Grant(code.account, client.client_id, code.scopes)
        key = (client.client_id, code.account)
        self._granted[key] = self._granted.get(key, frozenset()) | code.scopes
        answer = self._access_token(refresh, code.account, code.scopes)
        answer["refresh_token"] = refresh
        return answer

    def _refresh(self, client: _Client, form: Any) -> dict[str, Any]:
        refresh = form.get("refresh_token", "")
        grant = self._grants.get(refresh)
        if grant is None or grant.revoked or grant.client_id != client.client_id:
            raise OAuthError(400, "invalid_grant", "Token has been expired or revoked.")
        wanted = frozenset(form.get("scope", "").split()) or grant.scopes
        if not wanted <= grant.scopes:
            invalid = ", ".join(sorted(wanted - grant.scopes))
            raise OAuthError(
                400, "invalid_scope", f"Some requested scopes were invalid. {{invalid=[{invalid}]}}"
            )
        return self._access_token(refresh, grant.account, wanted)

    def _delegate(self, request: Request) -> dict[str, Any]:
        from google.auth import exceptions
        from google.auth import jwt as google_jwt

        assertion = request.form.get("assertion", "")
        try:
            claims = google_jwt.decode(assertion, verify=False)
        except (ValueError, exceptions.GoogleAuthError):
            raise OAuthError(400, "invalid_grant", "Invalid JWT Signature.") from None
        issuer = str(claims.get("iss", ""))
        delegation = self._delegations.get(issuer)
        if delegation is None:
            raise OAuthError(400, "invalid_grant", "Invalid grant: account not found")
        public_key, authorized = delegation
        try:  # the signature, the audience (Google's token endpoint), iat and exp
            google_jwt.decode(assertion, certs=public_key, audience=GOOGLE_TOKEN_AUDIENCE)
        except (ValueError, exceptions.GoogleAuthError):
            raise OAuthError(400, "invalid_grant", "Invalid JWT Signature.") from None
        if int(claims.get("exp", 0)) - int(claims.get("iat", 0)) > MAX_JWT_LIFETIME_S:
            raise OAuthError(
                400, "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes)"
            )
        scopes = frozenset(str(claims.get("scope", "")).split())
        if not scopes:
            raise OAuthError(
                400, "invalid_scope", "Invalid OAuth scope or ID token audience provided."
            )
        if not scopes <= authorized:
            raise OAuthError(
                401,
                "unauthorized_client",
                "Client is unauthorized to retrieve access tokens using this method, or client "
                "not authorized for any of the scopes requested.",
            )
        subject = str(claims.get("sub") or issuer)
        self.delegation_requests.append((issuer, subject, scopes))
        key = f"jwt:{secrets.token_urlsafe(16)}"  # no refresh token: the grant of this answer
        self._grants[key] = Grant(subject, issuer, scopes)
        return self._access_token(key, subject, scopes)

    def _access_token(self, refresh: str, account: str, scopes: frozenset[str]) -> dict[str, Any]:
        token = f"ya29.{secrets.token_urlsafe(48)}"
        self._access[token] = (refresh, TokenInfo(account, scopes, self._now() + ACCESS_TTL_S))
        self._grants[refresh].access_tokens.append(token)
        return {
            "access_token": token,
            "expires_in": ACCESS_TTL_S,
            "scope": " ".join(sorted(scopes)),
            "token_type": "Bearer",
        }

    # --- revocation ----------------------------------------------------------------------

    def _revoke_token(self, request: Request) -> None:
        token = request.form.get("token") or request.args.get("token") or ""
        grant = self._grants.get(token)
        if grant is None and token in self._access:
            self._access.pop(token)
            return
        if grant is None or grant.revoked:
            raise OAuthError(400, "invalid_token", "Token expired or revoked")
        self._revoke(grant)

    def _revoke(self, grant: Grant) -> None:
        grant.revoked = True
        for token in grant.access_tokens:
            self._access.pop(token, None)
        key = (grant.client_id, grant.account)
        self._granted.pop(key, None)


def _loopback(uri: str) -> bool:
    parts = urlsplit(uri)
    host = parts.netloc.rsplit(":", 1)[0] if ":" in parts.netloc else parts.netloc
    return parts.scheme == "http" and host in LOOPBACK_HOSTS and not parts.query


def _json(payload: Any, status: int) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


def _error_page(error: str, description: str, status: int = 400) -> Response:
    return Response(
        f"<!doctype html><title>Error 400: {html.escape(error)}</title>"
        f"<p>Access blocked: {html.escape(error)}</p><p>{html.escape(description)}</p>",
        status=status,
        mimetype="text/html",
    )


__all__ = ["PATHS", "Grant", "OAuthDouble", "OAuthError", "TokenInfo"]

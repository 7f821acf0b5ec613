"""``inboxflow mailbox connect``: a person's consent for their own Gmail, kept per mailbox.

The flow is Google's for installed apps, through ``google-auth-oauthlib``'s
``InstalledAppFlow``: PKCE (S256), ``access_type=offline`` and
``prompt=consent`` (so Google returns a refresh token), ``login_hint`` = the
address. With a browser, the redirect comes back to a one-request server on
the loopback (``run_local_server``); without one, the URL is printed, the
person opens it anywhere, and pastes back the address the browser was sent to
(or just its ``code``).

Only what the mailbox's graphs need is asked for (``mailbox_scopes``), and
the answer is checked before anything is kept: a denied consent, a grant
missing a required scope (Google's granular consent lets people untick one),
or a consent given as another account than ADDRESS (``users.getProfile`` of
``me``) is refused with one line saying what to do, the grant is revoked, and
nothing is stored. A client secret of the wrong type (``web``) is refused
before the browser opens. Tokens are never printed nor logged.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from inboxflow.adapters.mailbox_tokens import TokenStore
from inboxflow.mail.addresses import address_key, same_address

log = logging.getLogger("inboxflow.mailbox.connect")

NO_BROWSER_REDIRECT = "http://127.0.0.1:8085/"
"""The loopback redirect of the no-browser flow: nothing listens there; the person pastes
the address their browser shows after the consent (Google allows any loopback port)."""
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class ConsentRefused(Exception):
    """The consent cannot be used; the message is one line saying what to do."""


@dataclass(frozen=True)
class Connected:
    """A stored consent.

    Attributes:
        address: the mailbox.
        scopes: the scopes granted (and asked for by every refresh).
        where: where the token is kept (a file, or a secret), never the token.
    """

    address: str
    scopes: tuple[str, ...]
    where: str


def read_client_secrets(path: Path) -> dict[str, Any]:
    """The OAuth client's JSON, as the Cloud console downloads it; it must be a Desktop client.

    Raises:
        ConsentRefused: unreadable, or not of type ``installed`` (Desktop app).
    """
    try:
        config = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConsentRefused(
            f"cannot read the client secret {path} ({type(exc).__name__}): download the JSON "
            "of an OAuth client of type Desktop app from APIs & Services > Credentials"
        ) from None
    if isinstance(config, dict) and "web" in config:
        raise ConsentRefused(
            f"{path} is a Web application client: create an OAuth client of type Desktop app "
            "(APIs & Services > Credentials > Create credentials) and pass its JSON"
        )
    if not isinstance(config, dict) or "installed" not in config:
        raise ConsentRefused(
            f"{path} is not an OAuth client secret of type Desktop app: download one from "
            "APIs & Services > Credentials"
        )
    return config


def connect_mailbox(
    address: str,
    client_secrets: Path,
    scopes: Sequence[str],
    store: TokenStore,
    *,
    open_browser: bool = True,
    browser: str | None = None,
    read_line: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
    api_url: str | None = None,
    timeout_s: int = 300,
) -> Connected:
    """Run the consent for ``address`` and keep its token in ``store``.

    Args:
        address: the mailbox; the consent must be its account's.
        client_secrets: the Desktop OAuth client's JSON file.
        scopes: what to ask for (``mailbox_scopes``); each must be granted.
        store: where the token goes (only once every check passed).
        open_browser: open the consent in a browser and wait on the loopback; False
            prints the URL and reads the redirected address back with ``read_line``.
        browser: the ``webbrowser`` name to open (default: the system's).
        read_line: reads what the person pastes (no-browser flow).
        say: prints a line for the person (the URL; never a token).
        api_url: the local Gmail double (default: Google's Gmail API).
        timeout_s: how long the loopback waits for the browser.

    Raises:
        ConsentRefused: the consent was denied, misses a scope, is another account's,
            or the client is not a Desktop client; nothing was stored.
    """
    from google_auth_oauthlib.flow import InstalledAppFlow

    config = read_client_secrets(client_secrets)
    client = config["installed"]
    _allow_loopback_transport(str(client.get("token_uri", "")))
    # Granular consent may grant fewer scopes than asked: we check them ourselves below.
    os.environ["OAUTHLIB_RELAX_TOKEN_SCOPE"] = "1"
    flow = InstalledAppFlow.from_client_config(
        config, scopes=list(scopes), autogenerate_code_verifier=True
    )
    hints = {"login_hint": address, "prompt": "consent"}
    with _quiet(TOKEN_LOGGERS):
        return _consent(
            flow,
            hints,
            address,
            scopes,
            store,
            config,
            api_url,
            timeout_s,
            open_browser,
            browser,
            read_line,
            say,
        )


TOKEN_LOGGERS = ("requests_oauthlib", "oauthlib", "google_auth_oauthlib")
"""Loggers that write tokens, codes and the client's Basic credentials at DEBUG/INFO."""


@contextmanager
def _quiet(names: Sequence[str]) -> Iterator[None]:
    """Raise ``names`` to WARNING for the flow (they log token bodies below it)."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _consent(
    flow: Any,
    hints: dict[str, str],
    address: str,
    scopes: Sequence[str],
    store: TokenStore,
    config: dict[str, Any],
    api_url: str | None,
    timeout_s: int,
    open_browser: bool,
    browser: str | None,
    read_line: Callable[[str], str],
    say: Callable[[str], None],
) -> Connected:
    from oauthlib.oauth2.rfc6749.errors import OAuth2Error

    client = config["installed"]
    try:
        if open_browser:
            credentials = flow.run_local_server(
                host="127.0.0.1",
                port=0,
                open_browser=True,
                browser=browser,
                authorization_prompt_message="Opening the consent in your browser; if it does not "
                "open, visit:\n{url}",
                success_message="inboxflow received the consent: you may close this window.",
                timeout_seconds=timeout_s,
                **hints,
            )
        else:
            credentials = _paste_flow(flow, hints, read_line, say)
    except OAuth2Error as exc:
        raise ConsentRefused(_oauth_refusal(address, exc)) from None
    except Exception as exc:
        if type(exc).__name__ == "WSGITimeoutError":
            raise ConsentRefused(
                f"no answer from the browser in {timeout_s} s: run the command again "
                "(or add --no-browser to paste the address instead)"
            ) from None
        raise
    return _keep(address, credentials, scopes, store, client, api_url)


def _paste_flow(
    flow: Any, hints: dict[str, str], read_line: Callable[[str], str], say: Callable[[str], None]
) -> Any:
    flow.redirect_uri = NO_BROWSER_REDIRECT
    url, state = flow.authorization_url(**hints)
    say(
        "Open this address in a browser (on any device), sign in and allow access; the browser "
        f"then fails to load {NO_BROWSER_REDIRECT}: copy the address it shows and paste it here."
    )
    say(url)
    pasted = read_line("address (or code): ").strip()
    if not pasted:
        raise ConsentRefused("nothing was pasted: run the command again and paste the address")
    if "://" in pasted or pasted.startswith("?"):
        query = parse_qs(urlsplit(pasted).query)
        if "error" in query:
            raise ConsentRefused(_denied(query["error"][0]))
        if query.get("state", [None])[0] != state:
            raise ConsentRefused(
                "the pasted address is from another consent (its state differs): run the "
                "command again and paste the address of this one"
            )
        codes = query.get("code") or [""]
        code = codes[0]
    else:
        code = pasted
    flow.fetch_token(code=code)
    return flow.credentials


def _keep(
    address: str,
    credentials: Any,
    scopes: Sequence[str],
    store: TokenStore,
    client: dict[str, Any],
    api_url: str | None,
) -> Connected:
    granted = tuple(sorted(set(credentials.granted_scopes or credentials.scopes or ())))
    missing = [scope for scope in scopes if scope not in granted]
    if missing:
        _revoke(credentials)
        names = ", ".join(scope.rsplit("/", 1)[-1] for scope in missing)
        raise ConsentRefused(
            f"the consent did not grant {names}: run the command again and leave every "
            "permission ticked"
        )
    account = _account_of(credentials, address, api_url)
    if not same_address(account, address):
        _revoke(credentials)
        raise ConsentRefused(
            f"the consent was given as {account}, not {address}: run the command again and "
            f"sign in as {address}"
        )
    if not credentials.refresh_token:
        _revoke(credentials)
        raise ConsentRefused(
            "Google returned no refresh token: remove inboxflow's access at "
            "https://myaccount.google.com/permissions and run the command again"
        )
    token = {
        "type": "authorized_user",
        "client_id": client["client_id"],
        "client_secret": client["client_secret"],
        "refresh_token": credentials.refresh_token,
        "token_uri": client["token_uri"],
        "account": address_key(address),
        "scopes": list(granted),
    }
    where = store.put(address, token)
    log.info("connected %s with scopes %s (token kept in %s)", address, " ".join(granted), where)
    return Connected(address_key(address), granted, where)


def _account_of(credentials: Any, address: str, api_url: str | None) -> str:
    """The account the consent is for: Gmail's ``users.getProfile`` of ``me``."""
    from inboxflow.adapters.google_api import GoogleApiConnection
    from inboxflow.adapters.google_gmail_reader import GMAIL_ERRORS

    api = GoogleApiConnection(api_url, lambda _mailbox: credentials)
    request = api.service("gmail", "v1", address).users().getProfile(userId="me")
    profile = api.execute(request, GMAIL_ERRORS)
    return str(profile.get("emailAddress", ""))


def _revoke(credentials: Any) -> None:
    """Give the grant back (nothing is kept, so nothing should stay granted); best effort."""
    import requests

    token_uri = str(credentials.token_uri or "")
    token = credentials.refresh_token or credentials.token
    if not token_uri.endswith("/token") or not token:
        return
    try:
        requests.post(
            token_uri[: -len("/token")] + "/revoke",
            data={"token": token},
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            timeout=15,
        )
    except requests.RequestException as exc:
        log.warning("could not revoke the refused consent: %s", type(exc).__name__)


def _denied(error: str) -> str:
    if error == "access_denied":
        return "the consent was denied: run the command again and choose Allow"
    return f"Google refused the consent ({error}): run the command again"


def _oauth_refusal(address: str, exc: Any) -> str:
    error = str(getattr(exc, "error", "") or "")
    if error == "access_denied":
        return _denied(error)
    if error == "invalid_grant":
        return "the code was refused (used already, or expired): run the command again"
    if error == "invalid_client":
        return "Google does not know this OAuth client (deleted?): download its JSON again"
    return f"Google refused the consent of {address} ({error or type(exc).__name__}): run again"


def _allow_loopback_transport(token_uri: str) -> None:
    """oauthlib insists on https; the local doubles (and only they) are plain http on loopback."""
    parts = urlsplit(token_uri)
    host = parts.hostname or ""
    if parts.scheme == "http" and (host in LOOPBACK or f"[{host}]" in LOOPBACK):
        os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"


__all__ = ["Connected", "ConsentRefused", "connect_mailbox", "read_client_secrets"]

"""`inboxflow mailbox connect`: the consent end to end through google-auth-oauthlib, against
the local doubles of Google's authorization, token and Gmail endpoints (strict as Google's)."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path
from typing import Any

import pytest
import requests

from inboxflow.adapters.google_api import GoogleApiConnection
from inboxflow.adapters.google_credentials import (
    CALENDAR_EVENTS_SCOPE,
    GMAIL_MODIFY_SCOPE,
    credentials_for,
)
from inboxflow.adapters.google_gmail_reader import GMAIL_ERRORS, GoogleApiGmailReader
from inboxflow.adapters.mailbox_tokens import FileTokenStore
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.dev.doubles.oauth_api import OAuthDouble
from inboxflow.dev.mailbox_connect import ConsentRefused, connect_mailbox
from inboxflow.ports.gmail_reader import MailboxDisconnected
from tests.harness.consent import ConsentBrowser

OWNER = "ana.ruiz@gmail.com"
BOTH = (GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE)


@pytest.fixture
def google() -> Any:
    with GoogleApiDouble(oauth=OAuthDouble()) as running:
        yield running


@pytest.fixture
def client_file(tmp_path: Path, google: GoogleApiDouble) -> Path:
    assert google.oauth is not None
    path = tmp_path / "client_secret.json"
    path.write_text(json.dumps(google.oauth.client_secrets(base_url=google.url)))
    return path


@pytest.fixture
def store(tmp_path: Path) -> FileTokenStore:
    return FileTokenStore(tmp_path / "home" / "mailbox-tokens")


def run_consent(
    google: GoogleApiDouble,
    client_file: Path,
    store: FileTokenStore,
    person: ConsentBrowser,
    scopes: tuple[str, ...] = (GMAIL_MODIFY_SCOPE,),
    address: str = OWNER,
) -> Any:
    return connect_mailbox(
        address,
        client_file,
        scopes,
        store,
        browser=person.register(),
        say=lambda line: None,
        api_url=google.url,
        timeout_s=20,
    )


def test_a_gmail_only_consent_is_kept_in_a_0600_file_and_refreshes_with_its_own_scopes(
    google: GoogleApiDouble, client_file: Path, store: FileTokenStore
) -> None:
    person = ConsentBrowser(OWNER)
    connected = run_consent(google, client_file, store, person)
    assert person.errors == []
    assert connected.scopes == (GMAIL_MODIFY_SCOPE,)
    path = store.path(OWNER)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    token = json.loads(path.read_text())
    assert token["type"] == "authorized_user" and token["account"] == OWNER
    assert token["scopes"] == [GMAIL_MODIFY_SCOPE]
    # The authorization URL asked for exactly the scopes given, with PKCE S256 and offline access.
    (url,) = person.opened
    assert "code_challenge_method=S256" in url and "access_type=offline" in url
    assert "calendar" not in url
    # The runtime's refresh asks only for what was consented (asking for more: invalid_scope).
    reader = GoogleApiGmailReader(
        api_url=google.url, credentials=lambda m: credentials_for(store.get(m) or {}, m)
    )
    assert reader.watch(OWNER, "projects/p/topics/t", ["INBOX"]).history_id > 0
    assert google.oauth is not None and google.oauth.refresh_attempts == 1
    # What the refresh asked before: Gmail and Calendar, which Google refuses for this consent.
    asked_both = requests.post(
        f"{google.url}/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": token["refresh_token"],
            "client_id": token["client_id"],
            "client_secret": token["client_secret"],
            "scope": " ".join(BOTH),
        },
        timeout=10,
    )
    assert asked_both.status_code == 400 and asked_both.json()["error"] == "invalid_scope"


def test_the_no_browser_flow_takes_the_pasted_address(
    google: GoogleApiDouble, client_file: Path, store: FileTokenStore
) -> None:
    person = ConsentBrowser(OWNER)
    printed: list[str] = []
    connected = connect_mailbox(
        OWNER,
        client_file,
        BOTH,
        store,
        open_browser=False,
        read_line=lambda prompt: person.answer(next(p for p in printed if "/o/oauth2/" in p)),
        say=printed.append,
        api_url=google.url,
    )
    assert connected.scopes == tuple(sorted(BOTH))
    assert store.get(OWNER) is not None


def test_a_consent_as_another_account_is_refused_and_nothing_is_kept(
    google: GoogleApiDouble, client_file: Path, store: FileTokenStore
) -> None:
    person = ConsentBrowser("someone.else@gmail.com")
    with pytest.raises(ConsentRefused, match=r"given as someone\.else@gmail\.com, not ana"):
        run_consent(google, client_file, store, person)
    assert store.get(OWNER) is None and not store.folder.exists()
    assert google.oauth is not None
    assert all(g.revoked for g in google.oauth.grants("someone.else@gmail.com"))


def test_a_denied_consent_is_refused_and_nothing_is_kept(
    google: GoogleApiDouble, client_file: Path, store: FileTokenStore
) -> None:
    with pytest.raises(ConsentRefused, match="denied: run the command again and choose Allow"):
        run_consent(google, client_file, store, ConsentBrowser(OWNER, allow=False))
    assert not store.folder.exists()


def test_a_missing_scope_is_refused_and_the_grant_revoked(
    google: GoogleApiDouble, client_file: Path, store: FileTokenStore
) -> None:
    person = ConsentBrowser(OWNER, untick=(CALENDAR_EVENTS_SCOPE,))
    with pytest.raises(ConsentRefused, match=r"did not grant calendar\.events"):
        run_consent(google, client_file, store, person, scopes=BOTH)
    assert not store.folder.exists()
    assert google.oauth is not None and [g.revoked for g in google.oauth.grants(OWNER)] == [True]


def test_a_web_client_is_refused_before_any_browser_opens(
    tmp_path: Path, google: GoogleApiDouble, store: FileTokenStore
) -> None:
    assert google.oauth is not None
    web = tmp_path / "web.json"
    web.write_text(json.dumps(google.oauth.client_secrets("web", base_url=google.url)))
    person = ConsentBrowser(OWNER)
    with pytest.raises(
        ConsentRefused, match="Web application client: create an OAuth client of type Desktop app"
    ):
        run_consent(google, web, store, person)
    assert person.opened == [] and not store.folder.exists()


def test_no_token_reaches_the_logs_or_the_output(
    google: GoogleApiDouble,
    client_file: Path,
    store: FileTokenStore,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    connect_mailbox(
        OWNER,
        client_file,
        BOTH,
        store,
        browser=ConsentBrowser(OWNER).register(),
        api_url=google.url,
        timeout_s=20,
    )
    token = store.get(OWNER)
    assert token is not None
    credentials = credentials_for(token, OWNER)
    GoogleApiGmailReader(api_url=google.url, credentials=lambda m: credentials).watch(
        OWNER, "projects/p/topics/t", ["INBOX"]
    )
    out = capsys.readouterr()
    seen = caplog.text + out.out + out.err
    assert "Opening the consent" in out.out  # the output was captured
    for secret in (token["refresh_token"], token["client_secret"], credentials.token):
        assert secret and secret not in seen


# --- the doubles are as strict as Google ------------------------------------------------------


def authorize(
    google: GoogleApiDouble, client: dict[str, Any], **overrides: str
) -> requests.Response:
    params = {
        "client_id": client["client_id"],
        "redirect_uri": "http://127.0.0.1:5000/",
        "response_type": "code",
        "scope": GMAIL_MODIFY_SCOPE,
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "state": "s1",
        **overrides,
    }
    return requests.get(f"{google.url}/o/oauth2/auth", params=params, timeout=10)


def code_for(google: GoogleApiDouble, client: dict[str, Any], **overrides: str) -> str:
    page = authorize(google, client, **overrides)
    url = page.url
    location = ConsentBrowser(OWNER).answer(url)
    assert "state=s1" in location
    return location.split("code=", 1)[1].split("&", 1)[0]


def exchange(
    google: GoogleApiDouble, client: dict[str, Any], code: str, **overrides: str
) -> requests.Response:
    from urllib.parse import unquote

    data = {
        "grant_type": "authorization_code",
        "code": unquote(code),
        "client_id": client["client_id"],
        "client_secret": client["client_secret"],
        "redirect_uri": "http://127.0.0.1:5000/",
        "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        **overrides,
    }
    return requests.post(f"{google.url}/token", data=data, timeout=10)


@pytest.fixture
def client(google: GoogleApiDouble) -> dict[str, Any]:
    assert google.oauth is not None
    return dict(google.oauth.client_secrets(base_url=google.url)["installed"])


def test_the_authorization_endpoint_refuses_what_google_refuses(
    google: GoogleApiDouble, client: dict[str, Any]
) -> None:
    assert authorize(google, client).status_code == 200
    assert authorize(google, client, code_challenge_method="plain").status_code == 400
    assert authorize(google, client, code_challenge="").status_code == 400
    assert authorize(google, client, redirect_uri="https://evil.example/cb").status_code == 400
    assert authorize(google, client, scope="").status_code == 400
    assert (
        authorize(google, client, client_id="nobody.apps.googleusercontent.com").status_code == 401
    )


def test_codes_are_single_use_pkce_checked_and_bound_to_their_redirect(
    google: GoogleApiDouble, client: dict[str, Any]
) -> None:
    wrong_verifier = exchange(google, client, code_for(google, client), code_verifier="x" * 43)
    assert wrong_verifier.status_code == 400
    assert wrong_verifier.json() == {
        "error": "invalid_grant",
        "error_description": "Invalid code verifier.",
    }
    other_redirect = exchange(
        google, client, code_for(google, client), redirect_uri="http://127.0.0.1:5001/"
    )
    assert other_redirect.json()["error"] == "redirect_uri_mismatch"
    code = code_for(google, client)
    first = exchange(google, client, code)
    assert first.status_code == 200 and first.json()["scope"] == GMAIL_MODIFY_SCOPE
    again = exchange(google, client, code)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    bad_secret = exchange(google, client, code_for(google, client), client_secret="nope")
    assert bad_secret.status_code == 401 and bad_secret.json()["error"] == "invalid_client"


def test_a_revoked_refresh_token_is_invalid_grant_through_the_client(
    google: GoogleApiDouble, client_file: Path, store: FileTokenStore
) -> None:
    run_consent(google, client_file, store, ConsentBrowser(OWNER))
    assert google.oauth is not None and google.oauth.revoke_account(OWNER) == 1
    credentials = credentials_for(store.get(OWNER) or {}, OWNER)
    api = GoogleApiConnection(google.url, lambda m: credentials)
    request = api.service("gmail", "v1", OWNER).users().getProfile(userId="me")
    with pytest.raises(MailboxDisconnected, match="invalid_grant"):
        api.execute(request, GMAIL_ERRORS)
    # The token endpoint itself answers invalid_grant for the revoked refresh token.
    token = store.get(OWNER) or {}
    answer = requests.post(
        f"{google.url}/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": token["refresh_token"],
            "client_id": token["client_id"],
            "client_secret": token["client_secret"],
        },
        timeout=10,
    )
    assert answer.json()["error"] == "invalid_grant"

"""The composition root gives every mailbox's credentials the scopes its graphs need.

A Workspace admin authorizes a delegate's client id for some scopes; a token
request asking for more is refused (``unauthorized_client``). So a mailbox
whose graphs never use the calendar must not ask for ``calendar.events``.
Checked through google-auth's own service-account credentials against the
local OAuth double's token endpoint, which verifies the signed JWT as Google does.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import crypt, jwt
from google.auth.exceptions import RefreshError
from google.auth.transport.requests import Request

from inboxflow.adapters.google_credentials import (
    CALENDAR_EVENTS_SCOPE,
    GMAIL_MODIFY_SCOPE,
    credentials_for,
)
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.config import InboxflowConfig
from inboxflow.dev.doubles.oauth_api import GOOGLE_TOKEN_AUDIENCE as AUD
from inboxflow.dev.doubles.oauth_api import JWT_BEARER, OAuthDouble
from inboxflow.ingest.mailboxes import MailboxRegistry
from inboxflow.services import build_ports
from inboxflow.settings import Settings

DELEGATE = "delegate@p.iam.gserviceaccount.com"
SUPPORT = "help@brightlane.io"  # the support graph: no calendar
PIPELINE = "maya@brightlane.io"  # the pipeline: its tools use the calendar


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _public(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def _service_account(key: rsa.RSAPrivateKey, token_uri: str) -> str:
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return json.dumps(
        {
            "type": "service_account",
            "project_id": "p",
            "private_key_id": "k1",
            "private_key": pem,
            "client_email": DELEGATE,
            "client_id": "1",
            "token_uri": token_uri,
        }
    )


def _ports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, credentials: str) -> Any:
    monkeypatch.delenv("INBOXFLOW_GOOGLE_API_URL", raising=False)  # Google, not the Gmail double
    environ = {
        "INBOXFLOW_HOME": str(tmp_path),
        "INBOXFLOW_GMAIL_CREDENTIALS": credentials,
        "INBOXFLOW_MAILBOX_TOKENS": str(tmp_path / "mailbox-tokens"),  # none connected
    }
    store = SqliteCheckpointStore(tmp_path / "store.db")
    registry = MailboxRegistry(store)
    registry.add(SUPPORT, 0.0, "support")
    registry.add(PIPELINE, 0.0, "pipeline")
    return build_ports(Settings.from_env(environ), store=store, config=InboxflowConfig())


def test_a_delegated_support_mailbox_asks_google_for_gmail_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: rsa.RSAPrivateKey
) -> None:
    with OAuthDouble() as oauth:
        oauth.add_delegation(DELEGATE, _public(key), [GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE])
        ports = _ports(tmp_path, monkeypatch, _service_account(key, f"{oauth.url}/token"))
        # The ingest's reader and the nodes' workspace: both built by the composition root.
        ports.gmail_reader.api.credentials(SUPPORT).refresh(Request())
        ports.workspace.for_mailbox(SUPPORT)._api.credentials(SUPPORT).refresh(Request())
        ports.workspace._api.credentials(PIPELINE).refresh(Request())
        assert oauth.delegation_requests == [
            (DELEGATE, SUPPORT, frozenset({GMAIL_MODIFY_SCOPE})),
            (DELEGATE, SUPPORT, frozenset({GMAIL_MODIFY_SCOPE})),
            (DELEGATE, PIPELINE, frozenset({GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE})),
        ]


def test_an_admin_who_granted_gmail_only_serves_the_support_mailbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: rsa.RSAPrivateKey
) -> None:
    with OAuthDouble() as oauth:
        oauth.add_delegation(DELEGATE, _public(key), [GMAIL_MODIFY_SCOPE])
        ports = _ports(tmp_path, monkeypatch, _service_account(key, f"{oauth.url}/token"))
        support = ports.gmail_reader.api.credentials(SUPPORT)
        support.refresh(Request())
        assert support.valid
        # A graph using the calendar needs the admin to authorize it: Google's refusal.
        with pytest.raises(RefreshError, match="unauthorized_client"):
            ports.gmail_reader.api.credentials(PIPELINE).refresh(Request())


def test_the_double_refuses_a_jwt_it_cannot_verify(key: rsa.RSAPrivateKey) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with OAuthDouble() as oauth:
        oauth.add_delegation(DELEGATE, _public(other), [GMAIL_MODIFY_SCOPE])
        info = json.loads(_service_account(key, f"{oauth.url}/token"))
        forged = credentials_for(info, SUPPORT, [GMAIL_MODIFY_SCOPE])
        with pytest.raises(RefreshError, match="invalid_grant"):
            forged.refresh(Request())
        # Signed right, but for another audience than Google's token endpoint.
        oauth.add_delegation(DELEGATE, _public(key), [GMAIL_MODIFY_SCOPE])
        now = int(time.time())
        claims = {"iss": DELEGATE, "sub": SUPPORT, "scope": GMAIL_MODIFY_SCOPE, "iat": now}
        signer = crypt.RSASigner.from_service_account_info(info)
        for wrong in (
            {"aud": f"{oauth.url}/token", "exp": now + 600},
            {"aud": AUD, "exp": now + 7200},
        ):
            assertion = jwt.encode(signer, {**claims, **wrong}).decode()
            answer = requests.post(
                f"{oauth.url}/token",
                data={"grant_type": JWT_BEARER, "assertion": assertion},
                timeout=10,
            )
            assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant", wrong
        assert oauth.delegation_requests == []


def test_a_connected_token_refreshes_for_what_its_mailbox_needs_and_no_more() -> None:
    token = {
        "type": "authorized_user",
        "client_id": "c.apps.googleusercontent.com",
        "client_secret": "s",
        "refresh_token": "r",
        "account": SUPPORT,
        "scopes": [GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE],
    }
    assert credentials_for(token, SUPPORT, [GMAIL_MODIFY_SCOPE]).scopes == [GMAIL_MODIFY_SCOPE]
    gmail_only = {**token, "scopes": [GMAIL_MODIFY_SCOPE]}
    needs_both = [GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE]
    assert credentials_for(gmail_only, SUPPORT, needs_both).scopes == [GMAIL_MODIFY_SCOPE]
    assert credentials_for(token, SUPPORT).scopes == token["scopes"]

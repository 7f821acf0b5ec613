"""``inboxflow mailbox add|watch`` on a delegated deployment start the watch with the
credentials the renew_watch function has: a mailbox asks only for its graphs' scopes,
so an admin who authorized Gmail alone does not refuse a support mailbox's token.

google-auth's service-account credentials sign the delegation JWT and post it to the
local OAuth double (strict as Google: signature, audience, authorized scopes); the
Gmail call after it goes to Google, which this test does not need to reach.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from typer.testing import CliRunner

from inboxflow.adapters.google_credentials import GMAIL_MODIFY_SCOPE
from inboxflow.dev.cli import app
from inboxflow.dev.doubles.oauth_api import OAuthDouble

DELEGATE = "delegate@p.iam.gserviceaccount.com"
SUPPORT = "help@brightlane.io"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, [*args], catch_exceptions=False)


def test_a_delegated_support_mailbox_asks_for_gmail_only_when_its_watch_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    monkeypatch.chdir(tmp_path)
    for name in ("INBOXFLOW_GOOGLE_API_URL", "INBOXFLOW_GMAIL_CREDENTIALS_SECRET", "INBOXFLOW_BUS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("INBOXFLOW_MAILBOX_TOKENS", raising=False)
    monkeypatch.setenv("INBOXFLOW_GMAIL_TOPIC", "projects/p/topics/gmail")
    home = tmp_path / "home"
    with OAuthDouble() as oauth:
        oauth.add_delegation(DELEGATE, public.decode(), [GMAIL_MODIFY_SCOPE])  # Gmail only
        key_json = {
            "type": "service_account",
            "project_id": "p",
            "private_key_id": "k1",
            "private_key": private.decode(),
            "client_email": DELEGATE,
            "client_id": "1",
            "token_uri": f"{oauth.url}/token",
        }
        monkeypatch.setenv("INBOXFLOW_GMAIL_CREDENTIALS", json.dumps(key_json))
        added = run("mailbox", "add", SUPPORT, "--graph", "support", "--home", str(home))
        assert added.exit_code == 0, added.output
        watched = run("mailbox", "watch", SUPPORT, "--home", str(home))
        output = added.output + watched.output
        assert "unauthorized_client" not in output, output
        assert oauth.delegation_requests
        assert set(oauth.delegation_requests) == {
            (DELEGATE, SUPPORT, frozenset({GMAIL_MODIFY_SCOPE}))
        }

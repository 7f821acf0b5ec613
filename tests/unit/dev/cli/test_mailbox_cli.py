"""``inboxflow mailbox add|connect|list``: the watch starts (or the command says exactly why
not), and ``list`` shows each mailbox's credential, scopes, watch, last notification and health."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from inboxflow.adapters.mailbox_tokens import FileTokenStore
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.cli import app
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.dev.doubles.oauth_api import OAuthDouble
from inboxflow.ingest.mailboxes import MailboxRegistry
from tests.harness.consent import ConsentBrowser

ANA = "ana.ruiz@gmail.com"
TOPIC = "projects/inboxflow-local/topics/inboxflow-gmail"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("INBOXFLOW_GMAIL_CREDENTIALS", "INBOXFLOW_GMAIL_CREDENTIALS_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("INBOXFLOW_MAILBOX_TOKENS", raising=False)
    monkeypatch.setenv("INBOXFLOW_GMAIL_TOPIC", TOPIC)
    return tmp_path / "home"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, [*args], catch_exceptions=False)


def test_add_says_exactly_why_the_watch_cannot_start_without_an_authorization(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INBOXFLOW_GOOGLE_API_URL", raising=False)
    result = run("mailbox", "add", ANA, "--graph", "support", "--home", str(home))
    assert result.exit_code == 0, result.output
    assert "watch not started" in result.output
    assert f"inboxflow mailbox connect {ANA}" in " ".join(result.output.split())


def test_connect_starts_the_watch_and_list_shows_credential_scopes_watch_and_health(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with GoogleApiDouble(oauth=OAuthDouble()) as google:
        assert google.oauth is not None
        monkeypatch.setenv("INBOXFLOW_GOOGLE_API_URL", google.url)
        client = tmp_path / "client.json"
        client.write_text(json.dumps(google.oauth.client_secrets(base_url=google.url)))
        added = run("mailbox", "add", ANA, "--graph", "support", "--home", str(home))
        assert "watching" in added.output  # the double needs no credentials: watched at once
        monkeypatch.setitem(webbrowser._browsers, "consent", [None, ConsentBrowser(ANA)])
        monkeypatch.setattr(webbrowser, "_tryorder", ["consent"])
        result = run("mailbox", "connect", ANA, "--client-secret", str(client), "--home", str(home))
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        assert f"connected {ANA} (gmail.modify)" in text and "watching" in text
        token = FileTokenStore(home / "mailbox-tokens").get(ANA)
        assert token is not None and token["refresh_token"] not in result.output
        google.deliver(
            ANA, b"From: a@example.com\r\nTo: ana.ruiz@gmail.com\r\nSubject: hi\r\n\r\nx"
        )
        store = SqliteCheckpointStore(home / "inboxflow.db")
        MailboxRegistry(store).mark_disconnected(ANA, "invalid_grant", 1.0)
        store.close()
        listed = run("mailbox", "list", "--home", str(home))
        assert listed.exit_code == 0, listed.output
        table = " ".join(listed.output.split())
        for expected in ("authorized_user", "gmail.modify", "disconnected"):
            assert expected in table, expected
        assert "calendar" not in table


def test_connect_refuses_a_mailbox_that_is_not_registered(home: Path, tmp_path: Path) -> None:
    client = tmp_path / "client.json"
    client.write_text("{}")
    result = run("mailbox", "connect", ANA, "--client-secret", str(client), "--home", str(home))
    assert result.exit_code == 1
    assert f"inboxflow mailbox add {ANA}" in " ".join(result.output.split())

"""Keyless domain-wide delegation through the real google-auth library.

A local double of the two Google endpoints the flow calls (IAM Credentials
``projects.serviceAccounts.signJwt`` and the OAuth 2.0 token endpoint, with the
JWT-bearer grant for the delegation and the refresh-token grant for the
function's own Application Default Credentials) checks what google-auth sends:
the function's own token on ``signJwt``, a claim set with ``iss`` = the
delegate, ``sub`` = the mailbox, the Gmail and Calendar scopes and ``aud`` =
the token endpoint, then the signed JWT as the assertion.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

import pytest

DELEGATE = "ibx-gmail-delegate@demo.iam.gserviceaccount.com"
MAILBOX = "support@example.com"
SOURCE_TOKEN = "function-identity-token"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _claims(jwt: str) -> dict[str, Any]:
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class GoogleDouble:
    """signJwt and the token endpoint, recording each call."""

    def __init__(self) -> None:
        self.sign_requests: list[dict[str, Any]] = []
        self.grants: list[dict[str, str]] = []
        self.sign_status = 200
        self.url = ""

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, dict[str, Any]]:
        if path.endswith(":signJwt"):
            name = unquote(path.split("/serviceAccounts/", 1)[1].rsplit(":", 1)[0])
            request = json.loads(body)
            self.sign_requests.append(
                {"account": name, "auth": headers.get("Authorization"), **request}
            )
            if self.sign_status != 200:
                return self.sign_status, {
                    "error": {
                        "code": 403,
                        "message": "Permission 'iam.serviceAccounts.signJwt' denied",
                    }
                }
            claims = json.loads(request["payload"])
            return 200, {"keyId": "k1", "signedJwt": f"{_b64({'alg': 'RS256'})}.{_b64(claims)}.sig"}
        if path == "/token":
            form = {key: values[0] for key, values in parse_qs(body.decode()).items()}
            self.grants.append(form)
            if form.get("grant_type") == "refresh_token":
                return 200, {"access_token": SOURCE_TOKEN, "expires_in": 3600}
            if form.get("grant_type") == JWT_BEARER:
                claims = _claims(form["assertion"])
                return 200, {"access_token": f"token-for-{claims['sub']}", "expires_in": 3600}
        return 404, {"error": "not found"}


@pytest.fixture
def google(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[GoogleDouble]:
    """The double on a free port; google-auth's endpoints and ADC pointed at it."""
    from google.auth import iam, impersonated_credentials
    from google.oauth2 import credentials as user_credentials

    double = GoogleDouble()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, answer = double.handle(self.path, self.headers, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    double.url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setattr(
        iam, "_IAM_SIGNJWT_ENDPOINT", double.url + "/v1/projects/-/serviceAccounts/{}:signJwt"
    )
    monkeypatch.setattr(
        impersonated_credentials, "_GOOGLE_OAUTH2_TOKEN_ENDPOINT", double.url + "/token"
    )
    # The function's own identity: Application Default Credentials (an authorized
    # user here, refreshed at the double; on Cloud Run, the metadata server).
    monkeypatch.setattr(user_credentials, "_GOOGLE_OAUTH2_TOKEN_ENDPOINT", double.url + "/token")
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "c",
                "client_secret": "s",
                "refresh_token": "r",
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    try:
        yield double
    finally:
        server.shutdown()
        server.server_close()


KEYLESS = json.dumps({"type": "keyless_delegation", "service_account": DELEGATE})


def test_keyless_delegation_acts_as_the_mailbox_without_a_key(google: GoogleDouble) -> None:
    from google.auth.transport.requests import Request

    from inboxflow.adapters.google_credentials import SCOPES, credentials_from_env

    factory = credentials_from_env({"INBOXFLOW_GMAIL_CREDENTIALS": KEYLESS})
    credentials = factory(MAILBOX)
    credentials.refresh(Request())

    assert credentials.token == f"token-for-{MAILBOX}"
    [sign] = google.sign_requests
    assert sign["account"] == DELEGATE
    assert sign["auth"] == f"Bearer {SOURCE_TOKEN}"  # signed as the function's own identity
    claims = json.loads(sign["payload"])
    assert claims["iss"] == DELEGATE and claims["sub"] == MAILBOX
    assert claims["scope"].split() == list(SCOPES)
    assert claims["aud"] == google.url + "/token"
    assert 0 < claims["exp"] - claims["iat"] <= 3600
    grant = google.grants[-1]
    assert grant["grant_type"] == JWT_BEARER
    assert _claims(grant["assertion"])["sub"] == MAILBOX


def test_each_mailbox_gets_its_own_delegated_token(google: GoogleDouble) -> None:
    from google.auth.transport.requests import Request

    from inboxflow.adapters.google_credentials import credentials_from_env

    factory = credentials_from_env({"INBOXFLOW_GMAIL_CREDENTIALS": KEYLESS})
    other = "sales@example.com"
    for mailbox in (MAILBOX, other):
        factory(mailbox).refresh(Request())
    assert factory(MAILBOX) is factory(MAILBOX)  # cached per mailbox
    assert [json.loads(s["payload"])["sub"] for s in google.sign_requests] == [MAILBOX, other]


def test_a_missing_token_creator_grant_fails_the_refresh_clearly(google: GoogleDouble) -> None:
    from google.auth.exceptions import RefreshError
    from google.auth.transport.requests import Request

    from inboxflow.adapters.google_credentials import credentials_from_env

    google.sign_status = 403
    credentials = credentials_from_env({"INBOXFLOW_GMAIL_CREDENTIALS": KEYLESS})(MAILBOX)
    with pytest.raises(RefreshError, match="signJwt"):
        credentials.refresh(Request())
    assert not [g for g in google.grants if g["grant_type"] == JWT_BEARER]


@pytest.mark.parametrize(
    "value",
    [
        '{"type": "keyless_delegation"}',
        '{"type": "keyless_delegation", "service_account": "ibx-gmail-delegate"}',
    ],
)
def test_a_keyless_delegation_must_name_the_delegate(value: str) -> None:
    from inboxflow.adapters.google_credentials import CredentialsError, credentials_info

    with pytest.raises(CredentialsError, match='needs "service_account"'):
        credentials_info({"INBOXFLOW_GMAIL_CREDENTIALS": value})

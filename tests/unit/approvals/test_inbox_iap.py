"""The inbox behind Identity-Aware Proxy: ES256 assertions signed with a local key, verified
against public keys served by a local HTTP server the way Google's IAP keys are."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from google.auth import crypt, jwt
from google.auth.crypt import es256

from inboxflow.approvals.iap import IAP_HEADER, IAP_ISSUER
from inboxflow.approvals.settings import ApprovalConfig
from tests.harness.approval import REVIEWERS, Harness

AUDIENCE = "/projects/123456/global/backendServices/987654"
KEY_ID = "iap-local-1"
ANA, BEN = REVIEWERS


def _pem(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


IAP_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = ec.generate_private_key(ec.SECP256R1())
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def keys_url() -> Iterator[str]:
    public = IAP_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    body = json.dumps({KEY_ID: public.decode()}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "public, max-age=3600")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/iap/verify/public_key"
    server.shutdown()


@pytest.fixture
def h(tmp_path: Path, keys_url: str) -> Harness:
    config = ApprovalConfig(
        base_url="https://approvals.test", iap_audience=AUDIENCE, iap_keys_url=keys_url
    )
    harness = Harness(tmp_path, config=config)
    harness.start()
    return harness


def assertion(email: str = ANA, key: Any = IAP_KEY, signer: Any = None, **claims: Any) -> str:
    now = int(time.time())
    payload = {
        "iss": IAP_ISSUER,
        "aud": AUDIENCE,
        "sub": "accounts.google.com:1234",
        "email": email,
        "iat": now,
        "exp": now + 600,
        **claims,
    }
    signer = signer or es256.ES256Signer.from_string(_pem(key), KEY_ID)
    return jwt.encode(signer, payload).decode()


def iap(value: str) -> dict[str, str]:
    """The IAP assertion header, as a browser on our own page sends it (Fetch Metadata)."""
    return {IAP_HEADER: value, "Sec-Fetch-Site": "same-origin"}


def test_iap_identity_starts_a_session_on_post_only(h: Harness) -> None:
    page = h.client.get("/inbox/sign-in", headers=iap(assertion()))
    assert page.status_code == 200 and "Continue as ana@brightlane.io" in page.get_data(
        as_text=True
    )
    assert "Set-Cookie" not in page.headers
    response = h.client.post("/inbox/sign-in", headers=iap(assertion()))
    assert response.status_code == 303
    listed = h.client.get("/inbox", headers=iap(assertion()))
    assert listed.status_code == 200 and "1 waiting for you" in listed.get_data(as_text=True)


def test_a_session_needs_the_assertion_of_the_same_reviewer(h: Harness) -> None:
    h.client.post("/inbox/sign-in", headers=iap(assertion()))
    assert h.client.get("/inbox").status_code == 401
    assert h.client.get("/inbox", headers=iap(assertion(BEN))).status_code == 401
    assert h.client.get("/api/inbox", headers=iap(assertion())).status_code == 200


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda: assertion(key=OTHER_KEY), id="signed by another key"),
        pytest.param(lambda: assertion(aud="/projects/1/global/backendServices/2"), id="audience"),
        pytest.param(lambda: assertion(iss="https://accounts.google.com"), id="issuer"),
        pytest.param(lambda: assertion(exp=int(time.time()) - 3600), id="expired"),
        pytest.param(lambda: assertion(exp=str(int(time.time()) + 600)), id="exp a string"),
        pytest.param(lambda: assertion(iat=str(int(time.time()))), id="iat a string"),
        pytest.param(lambda: assertion(exp=None), id="exp null"),
        pytest.param(lambda: assertion(exp=[1]), id="exp a list"),
        pytest.param(lambda: assertion(email=""), id="no email"),
        pytest.param(
            lambda: assertion(signer=crypt.RSASigner.from_string(_pem(RSA_KEY), KEY_ID)),
            id="RS256",
        ),
        pytest.param(lambda: "not.a.jwt", id="garbage"),
    ],
)
def test_a_bad_assertion_is_refused(h: Harness, bad: Any) -> None:
    response = h.client.post("/inbox/sign-in", headers=iap(bad()))
    assert response.status_code == 401
    assert "Set-Cookie" not in response.headers


def test_a_sign_in_link_for_another_reviewer_is_refused_under_iap(h: Harness) -> None:
    token = h.service.sign_ins.issue(BEN).split("token=", 1)[1]
    response = h.client.post("/inbox/sign-in", data={"token": token}, headers=iap(assertion()))
    assert response.status_code == 403

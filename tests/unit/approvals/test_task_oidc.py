"""The deadline endpoint's OIDC check, for real: RS256 tokens signed with a local key,
verified by ``verify_task_oidc`` against certificates served by a local HTTP server."""

from __future__ import annotations

import datetime
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from flask import Flask
from google.auth import crypt, jwt

from inboxflow.approvals import oidc
from inboxflow.approvals.app import handle_http
from inboxflow.approvals.errors import ApprovalError
from inboxflow.approvals.oidc import verify_task_oidc
from tests.harness.approval import Harness

AUDIENCE = "https://approve-abc-ew.a.run.app"
INVOKER = "inboxflow-tasks@proj.iam.gserviceaccount.com"
KEY_ID = "local-key-1"


@dataclass
class CertServer:
    """Serves ``{key id: PEM certificate}`` like Google's certificate endpoint."""

    url: str
    certs: dict[str, str]
    hits: list[str] = field(default_factory=list)
    fail: bool = False


def _key_and_cert(name: str) -> tuple[bytes, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    pem_key = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return pem_key, cert.public_bytes(serialization.Encoding.PEM).decode()


GOOGLE_KEY, GOOGLE_CERT = _key_and_cert("google")
OTHER_KEY, _ = _key_and_cert("someone else")


@pytest.fixture
def certs() -> Iterator[CertServer]:
    served = CertServer(url="", certs={KEY_ID: GOOGLE_CERT})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.hits.append(self.path)
            if served.fail:
                self.send_response(500)
                self.end_headers()
                return
            body = json.dumps(served.certs).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "public, max-age=3600")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.url = f"http://127.0.0.1:{server.server_port}/oauth2/v1/certs"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served
    server.shutdown()


@pytest.fixture
def verifying(certs: CertServer, monkeypatch: pytest.MonkeyPatch) -> CertServer:
    """Verification on, as on Cloud Run, with a fresh certificate cache."""
    monkeypatch.setenv("K_SERVICE", "approve")
    monkeypatch.setenv("INBOXFLOW_TASKS_AUDIENCE", AUDIENCE)
    monkeypatch.setenv("INBOXFLOW_TASKS_INVOKER", INVOKER)
    monkeypatch.setenv("INBOXFLOW_TASKS_CERTS_URL", certs.url)
    monkeypatch.setattr(oidc, "_cache", None)
    return certs


def token(
    key: bytes = GOOGLE_KEY,
    kid: str = KEY_ID,
    **claims: Any,
) -> str:
    now = int(time.time())
    payload = {
        "iss": "https://accounts.google.com",
        "aud": AUDIENCE,
        "sub": "1234567890",
        "email": INVOKER,
        "email_verified": True,
        "iat": now,
        "exp": now + 3600,
        **claims,
    }
    signer = crypt.RSASigner.from_string(key, kid)
    return jwt.encode(signer, payload).decode()


def call(bearer: str | None) -> None:
    app = Flask("oidc-test")
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    with app.test_request_context("/timeout", method="POST", headers=headers, json={}):
        from flask import request

        verify_task_oidc(request, os.environ)


def refused(bearer: str | None) -> ApprovalError:
    with pytest.raises(ApprovalError) as caught:
        call(bearer)
    return caught.value


def test_a_good_token_is_accepted_and_the_certificates_are_fetched_once(
    verifying: CertServer,
) -> None:
    for _ in range(3):
        call(token())
    assert len(verifying.hits) == 1


@pytest.mark.parametrize(
    ("make", "status"),
    [
        pytest.param(lambda: None, 401, id="no-token"),
        pytest.param(lambda: token(aud="https://someone-else.run.app"), 401, id="wrong-audience"),
        pytest.param(
            lambda: token(email="attacker@evil.iam.gserviceaccount.com"), 403, id="wrong-sa"
        ),
        pytest.param(lambda: token(email_verified=False), 403, id="email-not-verified"),
        pytest.param(lambda: token(iat=1_000_000, exp=1_000_600), 401, id="expired"),
        pytest.param(lambda: token(exp="9999999999"), 401, id="exp-a-string"),
        pytest.param(lambda: token(key=OTHER_KEY), 401, id="signed-by-someone-else"),
        pytest.param(lambda: token(kid="unknown-key"), 401, id="unknown-key-id"),
        pytest.param(lambda: token(iss="https://evil.example"), 401, id="wrong-issuer"),
        pytest.param(lambda: "not.a.jwt", 401, id="garbage"),
    ],
)
def test_a_bad_token_is_refused(verifying: CertServer, make: Any, status: int) -> None:
    assert refused(make()).status == status


def test_an_unsigned_token_is_refused(verifying: CertServer) -> None:
    import base64

    def part(doc: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")

    good = jwt.decode(token(), verify=False)
    unsigned = f"{part({'alg': 'none', 'kid': KEY_ID})}.{part(good)}."
    assert refused(unsigned).status == 401


@pytest.mark.parametrize("missing", ["INBOXFLOW_TASKS_AUDIENCE", "INBOXFLOW_TASKS_INVOKER"])
def test_verification_on_without_audience_or_invoker_refuses_every_call(
    verifying: CertServer, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    monkeypatch.delenv(missing)
    for bearer in (token(), token(aud="https://x.run.app"), token(email="any@x.iam"), None):
        assert refused(bearer).status == 500
    assert verifying.hits == []


def test_the_approval_url_stands_in_for_the_audience(
    verifying: CertServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INBOXFLOW_TASKS_AUDIENCE")
    monkeypatch.setenv("INBOXFLOW_APPROVAL_URL", AUDIENCE)
    call(token())
    assert refused(token(aud="https://x.run.app")).status == 401


def test_certificates_that_cannot_be_fetched_are_a_503(verifying: CertServer) -> None:
    verifying.fail = True
    assert refused(token()).status == 503
    verifying.fail = False
    call(token())


def test_off_locally_unless_asked(certs: CertServer, monkeypatch: pytest.MonkeyPatch) -> None:
    call(None)  # no K_SERVICE, no INBOXFLOW_TASKS_VERIFY: the emulator sends no token
    monkeypatch.setenv("INBOXFLOW_TASKS_VERIFY", "1")
    assert refused(token()).status == 500  # on, but no audience or invoker


def test_the_timeout_endpoint_answers_with_the_verifiers_status(
    verifying: CertServer, tmp_path: Path
) -> None:
    h = Harness(tmp_path)
    trace_id = h.start()
    approval = h.approval_of(trace_id)
    before = h.snapshot(trace_id)
    app = Flask("approve")

    @app.post("/timeout")
    def timeout() -> Any:
        from flask import request

        return handle_http(request, h.service, environ=os.environ)  # the default verifier

    client = app.test_client()
    body = {"approval_id": approval.approval_id}
    forged = client.post(
        "/timeout", json=body, headers={"Authorization": f"Bearer {token(email='x@y.iam')}"}
    )
    assert forged.status_code == 403
    assert client.post("/timeout", json=body).status_code == 401
    assert h.snapshot(trace_id) == before
    good = client.post("/timeout", json=body, headers={"Authorization": f"Bearer {token()}"})
    assert good.status_code == 200 and good.get_json()["action"] == "rescheduled"
    verifying.fail = True
    oidc._cache = None
    down = client.post("/timeout", json=body, headers={"Authorization": f"Bearer {token()}"})
    assert down.status_code == 503

"""``credentials_from_env`` per mailbox for every credential type, the scopes each mailbox is
asked for, and the token stores (a 0600 file per mailbox; a Secret Manager secret per mailbox)."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from inboxflow.adapters.google_api import GoogleApiConnection
from inboxflow.adapters.google_credentials import (
    CALENDAR_EVENTS_SCOPE,
    GMAIL_MODIFY_SCOPE,
    CredentialsError,
    credentials_for,
    credentials_from_env,
)
from inboxflow.adapters.google_gmail_reader import GMAIL_ERRORS
from inboxflow.adapters.mailbox_tokens import (
    FileTokenStore,
    SecretManagerTokenStore,
    token_name,
    token_store,
)
from inboxflow.config import parse_config
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.dev.doubles.oauth_api import OAuthDouble
from inboxflow.dev.mailbox_connect import connect_mailbox
from inboxflow.graphs import graph_registry
from inboxflow.mailbox_scopes import mailbox_scopes
from tests.harness.consent import ConsentBrowser

ANA, BEN = "ana.ruiz@gmail.com", "ben.ode@gmail.com"


def profile_of(google: GoogleApiDouble, credentials: Any, mailbox: str) -> str:
    api = GoogleApiConnection(google.url, lambda m: credentials)
    request = api.service("gmail", "v1", mailbox).users().getProfile(userId="me")
    return str(api.execute(request, GMAIL_ERRORS)["emailAddress"])


def test_two_personal_mailboxes_share_a_deployment_each_with_its_own_token(
    tmp_path: Path,
) -> None:
    with GoogleApiDouble(oauth=OAuthDouble()) as google:
        assert google.oauth is not None
        client = tmp_path / "client.json"
        client.write_text(json.dumps(google.oauth.client_secrets(base_url=google.url)))
        store = FileTokenStore(tmp_path / "tokens")
        for address in (ANA, BEN):
            connect_mailbox(
                address,
                client,
                (GMAIL_MODIFY_SCOPE,),
                store,
                browser=ConsentBrowser(address).register(),
                say=lambda line: None,
                api_url=google.url,
                timeout_s=20,
            )
        factory = credentials_from_env({}, tokens=store)
        assert profile_of(google, factory(ANA), ANA) == ANA
        assert profile_of(google, factory(BEN), BEN) == BEN
        assert factory(ANA).refresh_token != factory(BEN).refresh_token
        assert sorted(p.name for p in store.folder.iterdir()) == sorted(
            f"{token_name(a)}.json" for a in (ANA, BEN)
        )


def test_an_authorized_user_token_of_another_account_is_refused() -> None:
    token = {
        "type": "authorized_user",
        "client_id": "c",
        "client_secret": "s",
        "refresh_token": "r",
        "account": ANA,
    }
    assert credentials_for(token, "Ana.Ruiz@gmail.com").refresh_token == "r"
    with pytest.raises(CredentialsError, match=f"run `inboxflow mailbox connect {BEN}`"):
        credentials_for(token, BEN)


@pytest.fixture(scope="module")
def service_account_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return json.dumps(
        {
            "type": "service_account",
            "project_id": "p",
            "private_key_id": "k1",
            "private_key": pem,
            "client_email": "delegate@p.iam.gserviceaccount.com",
            "client_id": "1",
            "token_uri": "https://oauth2.googleapis.com/token",
        }
    )


def test_delegation_acts_as_each_mailbox_with_the_scopes_its_graphs_need(
    tmp_path: Path, service_account_key: str
) -> None:
    scopes = {ANA: (GMAIL_MODIFY_SCOPE,), BEN: (GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE)}
    factory = credentials_from_env(
        {"INBOXFLOW_GMAIL_CREDENTIALS": service_account_key},
        tokens=FileTokenStore(tmp_path / "none"),
        scopes_for=scopes.__getitem__,
    )
    ana, ben = factory(ANA), factory(BEN)
    assert (ana._subject, tuple(ana.scopes)) == (ANA, scopes[ANA])
    assert (ben._subject, tuple(ben.scopes)) == (BEN, scopes[BEN])


def test_keyless_delegation_acts_as_each_mailbox_with_its_scopes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "c",
                "client_secret": "s",
                "refresh_token": "r",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    keyless = json.dumps(
        {"type": "keyless_delegation", "service_account": "d@p.iam.gserviceaccount.com"}
    )
    factory = credentials_from_env(
        {"INBOXFLOW_GMAIL_CREDENTIALS": keyless},
        tokens=FileTokenStore(tmp_path / "none"),
        scopes_for=lambda m: (GMAIL_MODIFY_SCOPE,),
    )
    credentials = factory(ANA)
    assert credentials._subject == ANA and credentials._target_scopes == [GMAIL_MODIFY_SCOPE]


def test_a_mailbox_is_asked_for_the_calendar_only_where_its_graphs_use_it() -> None:
    graphs = graph_registry()
    assert mailbox_scopes(ANA, "support", graphs) == (GMAIL_MODIFY_SCOPE,)
    assert mailbox_scopes(ANA, "planner", graphs) == (GMAIL_MODIFY_SCOPE,)
    assert mailbox_scopes(ANA, "pipeline", graphs) == (GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE)
    assert mailbox_scopes(ANA, "assistant", graphs) == (GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE)
    # A support mailbox whose own rule routes some mail to the pipeline needs the calendar too.
    config = parse_config(
        {
            "routing": {
                "mailboxes": {
                    ANA: {
                        "rules": [
                            {
                                "name": "meetings",
                                "match": {"subject_contains": "meeting"},
                                "route": "pipeline",
                            }
                        ]
                    }
                }
            }
        },
        graphs,
    )
    assert CALENDAR_EVENTS_SCOPE in mailbox_scopes(ANA, "support", graphs, config)
    assert CALENDAR_EVENTS_SCOPE not in mailbox_scopes(BEN, "support", graphs, config)


def test_the_token_store_is_chosen_by_the_environment(tmp_path: Path) -> None:
    home = token_store({"INBOXFLOW_HOME": str(tmp_path)})
    assert isinstance(home, FileTokenStore) and home.folder == tmp_path / "mailbox-tokens"
    cloud = token_store({"INBOXFLOW_MAILBOX_TOKENS": "secret-manager", "GOOGLE_CLOUD_PROJECT": "p"})
    assert isinstance(cloud, SecretManagerTokenStore) and cloud.project == "p"


class SecretManagerDouble:
    """Secret Manager v1's secrets.create, addVersion and versions.access (latest)."""

    def __init__(self) -> None:
        self.secrets: dict[str, dict[str, Any]] = {}
        self.versions: dict[str, list[bytes]] = {}

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        path = request.path.removeprefix("/v1/")
        body = request.get_json(silent=True) or {}
        if request.method == "POST" and path.endswith("/secrets"):
            name = f"{path}/{request.args['secretId']}"
            if name in self.secrets:
                answer, status = {"error": {"code": 409, "status": "ALREADY_EXISTS"}}, 409
            else:
                self.secrets[name] = body
                self.versions[name] = []
                answer, status = {"name": name, **body}, 200
        elif request.method == "POST" and path.endswith(":addVersion"):
            name = path.removesuffix(":addVersion")
            if name not in self.secrets:
                answer, status = {"error": {"code": 404, "status": "NOT_FOUND"}}, 404
            else:
                self.versions[name].append(base64.b64decode(body["payload"]["data"]))
                answer, status = {"name": f"{name}/versions/{len(self.versions[name])}"}, 200
        elif request.method == "GET" and path.endswith("/versions/latest:access"):
            name = path.removesuffix("/versions/latest:access")
            if not self.versions.get(name):
                answer, status = {"error": {"code": 404, "status": "NOT_FOUND"}}, 404
            else:
                data = base64.b64encode(self.versions[name][-1]).decode()
                answer, status = {"payload": {"data": data}}, 200
        else:
            answer, status = {"error": {"code": 404}}, 404
        return Response(json.dumps(answer), status=status, mimetype="application/json")(
            environ, start_response
        )


def test_on_the_cloud_each_mailbox_has_its_own_secret_and_a_reconnect_adds_a_version() -> None:
    double = SecretManagerDouble()
    server = make_server("127.0.0.1", 0, double, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def http(method: str, url: str, body: Any) -> tuple[int, dict[str, Any]]:
        answer = requests.request(method, url, json=body, timeout=10)
        return answer.status_code, answer.json()

    try:
        store = SecretManagerTokenStore(
            "p", http, ("europe-west1",), base_url=f"http://127.0.0.1:{server.server_port}/v1"
        )
        assert store.get(ANA) is None
        store.put(ANA, {"refresh_token": "first"})
        store.put(ANA, {"refresh_token": "second"})
        store.put(BEN, {"refresh_token": "ben"})
        assert store.get(ANA) == {"refresh_token": "second"}
        assert store.get(BEN) == {"refresh_token": "ben"}
        assert store.secret(ANA) != store.secret(BEN)
        replication = double.secrets[store.secret(ANA)]["replication"]
        assert replication == {"userManaged": {"replicas": [{"location": "europe-west1"}]}}
        assert len(double.versions[store.secret(ANA)]) == 2
    finally:
        server.shutdown()
        server.server_close()

"""Where each mailbox's own OAuth token is kept: a file per mailbox, or a secret per mailbox.

``inboxflow mailbox connect ADDRESS`` stores the authorized-user token of the
person's consent here; ``google_credentials.credentials_from_env`` reads it
for that mailbox only. ``INBOXFLOW_MAILBOX_TOKENS`` chooses the store:

- unset (the embedded default and ``--dev``): ``$INBOXFLOW_HOME/mailbox-tokens/``,
  one file per mailbox, ``{address}.json``, mode 0600 in a 0700 folder. One file
  per mailbox rather than one file of entries: connecting one mailbox is one
  atomic write (temporary file, then rename) that can neither lose nor expose
  another mailbox's token, and disconnecting is deleting one file;
- a path: the same, in that folder;
- ``secret-manager``: Secret Manager of ``GOOGLE_CLOUD_PROJECT``, one secret per
  mailbox (``inboxflow-mailbox-{address, made safe}-{hash}``), a new version per
  connect. The functions read it with their own identity over the REST API
  (no client library: the same ``fetch_secret`` as the shared credentials);
  ``connect`` writes it with the person's ``gcloud`` application default
  credentials. Replication follows ``INBOXFLOW_SECRET_LOCATIONS`` (comma
  separated: user-managed replicas there, for organizations restricting
  resource locations), else automatic.

A token is JSON (``type: authorized_user``, client id and secret, refresh token,
``account``, ``scopes``, ``token_uri``); it is never logged or printed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

TOKENS_ENV = "INBOXFLOW_MAILBOX_TOKENS"
SECRET_MANAGER = "secret-manager"
SECRET_PREFIX = "inboxflow-mailbox-"
LOCATIONS_ENV = "INBOXFLOW_SECRET_LOCATIONS"
SECRET_MANAGER_URL = "https://secretmanager.googleapis.com/v1"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


class TokenStoreError(RuntimeError):
    """The token store cannot be read or written; the message says what to do."""


class TokenStore(Protocol):
    """One OAuth token per mailbox."""

    where: str
    """Where tokens are kept, for people (a folder, or ``Secret Manager of P``)."""

    def get(self, address: str) -> dict[str, Any] | None:
        """The mailbox's token, or None when it was never connected."""
        ...

    def put(self, address: str, token: Mapping[str, Any]) -> str:
        """Keep ``token`` as the mailbox's (replacing any earlier one); returns where."""
        ...


def token_name(address: str) -> str:
    """The file stem / secret id of a mailbox: readable, unique, within Secret Manager's charset."""
    from ..mail.addresses import address_key

    key = address_key(address)
    readable = re.sub(r"[^A-Za-z0-9_-]", "-", key)[:180]
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return f"{SECRET_PREFIX}{readable}-{digest}"


class FileTokenStore:
    """``{folder}/{token_name(address)}.json``, mode 0600, written atomically."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.where = str(self.folder)

    def path(self, address: str) -> Path:
        """The mailbox's file."""
        return self.folder / f"{token_name(address)}.json"

    def get(self, address: str) -> dict[str, Any] | None:
        try:
            path = self.path(address)
            text = path.read_text("utf-8")
        except (FileNotFoundError, ValueError):  # never connected, or not an address at all
            return None
        found: dict[str, Any] = json.loads(text)
        return found

    def put(self, address: str, token: Mapping[str, Any]) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)
        path = self.path(address)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(dict(token), file)
            os.replace(temporary, path)
        finally:
            if temporary.exists():
                temporary.unlink()
        return str(path)


Http = Callable[[str, str, Mapping[str, Any] | None], tuple[int, dict[str, Any]]]
"""``(method, url, json body) -> (status, json answer)``: an authorized HTTP call."""


class SecretManagerTokenStore:
    """One Secret Manager secret per mailbox, read and written over the REST API.

    Args:
        project: the project holding the secrets.
        http: the authorized call (default: application default credentials).
        locations: user-managed replica locations (default: automatic replication).
        base_url: Secret Manager's REST root (a local double's in tests).
    """

    def __init__(
        self,
        project: str,
        http: Http | None = None,
        locations: tuple[str, ...] = (),
        base_url: str = SECRET_MANAGER_URL,
    ) -> None:
        self.project = project
        self.http = http or _adc_http
        self.locations = locations
        self.base_url = base_url.rstrip("/")
        self.where = f"Secret Manager of {project}"

    def secret(self, address: str) -> str:
        """The mailbox's secret (``projects/P/secrets/ID``)."""
        return f"projects/{self.project}/secrets/{token_name(address)}"

    def get(self, address: str) -> dict[str, Any] | None:
        try:
            url = f"{self.base_url}/{self.secret(address)}/versions/latest:access"
        except ValueError:  # not an address: never connected
            return None
        status, body = self.http("GET", url, None)
        if status == 404:
            return None
        if status != 200:
            raise TokenStoreError(
                f"Secret Manager answered {status} reading {self.secret(address)}"
            )
        found: dict[str, Any] = json.loads(base64.b64decode(body["payload"]["data"]))
        return found

    def put(self, address: str, token: Mapping[str, Any]) -> str:
        secret = self.secret(address)
        replication: dict[str, Any] = (
            {"userManaged": {"replicas": [{"location": loc} for loc in self.locations]}}
            if self.locations
            else {"automatic": {}}
        )
        status, _ = self.http(
            "POST",
            f"{self.base_url}/projects/{self.project}/secrets?secretId={token_name(address)}",
            {"replication": replication, "labels": {"inboxflow": "mailbox-token"}},
        )
        if status not in (200, 409):  # 409: the mailbox was connected before
            raise TokenStoreError(
                f"Secret Manager answered {status} creating {secret}: you need "
                "roles/secretmanager.admin (or secretmanager.secrets.create) on the project"
            )
        payload = base64.b64encode(json.dumps(dict(token)).encode("utf-8")).decode("ascii")
        status, _ = self.http(
            "POST", f"{self.base_url}/{secret}:addVersion", {"payload": {"data": payload}}
        )
        if status != 200:
            raise TokenStoreError(f"Secret Manager answered {status} adding a version to {secret}")
        return secret


def _adc_http(method: str, url: str, body: Mapping[str, Any] | None) -> tuple[int, dict[str, Any]]:
    import google.auth
    from google.auth.transport.requests import AuthorizedSession

    credentials, _ = google.auth.default(scopes=[CLOUD_PLATFORM_SCOPE])
    response = AuthorizedSession(credentials).request(method, url, json=body, timeout=30)
    try:
        answer = response.json()
    except ValueError:
        answer = {}
    return response.status_code, answer if isinstance(answer, dict) else {}


def token_store(environ: Mapping[str, str]) -> TokenStore:
    """The store ``INBOXFLOW_MAILBOX_TOKENS`` of ``environ`` (the entry point's) chooses (see
    the module).

    Raises:
        TokenStoreError: ``secret-manager`` without ``GOOGLE_CLOUD_PROJECT``.
    """
    env = environ
    choice = env.get(TOKENS_ENV, "").strip()
    if choice == SECRET_MANAGER:
        project = env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT")
        if not project:
            raise TokenStoreError(f"{TOKENS_ENV}={SECRET_MANAGER} needs GOOGLE_CLOUD_PROJECT")
        locations = tuple(
            loc.strip() for loc in env.get(LOCATIONS_ENV, "").split(",") if loc.strip()
        )
        return SecretManagerTokenStore(project, locations=locations)
    if choice:
        return FileTokenStore(Path(choice).expanduser())
    return FileTokenStore(Path(env.get("INBOXFLOW_HOME", ".inboxflow")) / "mailbox-tokens")


__all__ = [
    "SECRET_MANAGER",
    "TOKENS_ENV",
    "FileTokenStore",
    "SecretManagerTokenStore",
    "TokenStore",
    "TokenStoreError",
    "token_name",
    "token_store",
]

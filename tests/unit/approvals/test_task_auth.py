"""``/timeout`` and ``/digest`` answer only their callers wherever they are served (issue 39,
item 5): OIDC on Cloud Run, the home's local task token elsewhere; an anonymous call changes
nothing."""

from __future__ import annotations

import os
import stat
import threading
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.approvals.task_auth import TOKEN_FILE, describe, local_task_token
from tests.harness.paths import ROOT


@pytest.fixture
def approve_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``functions_framework.create_app(target="approve")`` over an embedded store in
    ``tmp_path``, recording what reaches the service's timeout and digest sweep."""
    import functions_framework

    from inboxflow import entry
    from inboxflow.approvals.deadlines import Deadlines
    from inboxflow.approvals.digests import Digests

    calls: list[str] = []
    on_timeout = Deadlines.on_timeout
    sweep = Digests.sweep

    def timeout_seen(self: Any, approval_id: str, hop: int = 0) -> Any:
        calls.append(f"timeout {approval_id}")
        return on_timeout(self, approval_id, hop)

    def sweep_seen(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append("digest")
        return sweep(self, *args, **kwargs)

    monkeypatch.setattr(Deadlines, "on_timeout", timeout_seen)
    monkeypatch.setattr(Digests, "sweep", sweep_seen)
    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path))
    monkeypatch.delenv("INBOXFLOW_TASKS_VERIFY", raising=False)
    monkeypatch.delenv("K_SERVICE", raising=False)
    entry.reset()
    app = functions_framework.create_app(target="approve", source=str(ROOT / "functions/main.py"))
    app.calls = calls  # type: ignore[attr-defined]
    yield app
    entry.reset()


def _tasks(home: Path) -> list[Any]:
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore

    store = SqliteCheckpointStore(home / "inboxflow.db")
    try:
        return store.list("tasks")
    finally:
        store.close()


@pytest.mark.parametrize("authorization", [None, "Bearer nope", "Basic x", "Bearer "])
@pytest.mark.parametrize("path", ["/timeout", "/digest"])
def test_an_unauthenticated_call_is_a_401_that_changes_nothing(
    approve_app: Any, tmp_path: Path, path: str, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = approve_app.test_client().post(
        path, json={"approval_id": "some-approval-1"}, headers=headers
    )
    assert response.status_code == 401, response.get_data(as_text=True)
    assert "reviewers" not in response.get_data(as_text=True)
    assert approve_app.calls == []
    assert _tasks(tmp_path) == []


def test_the_homes_token_opens_both(approve_app: Any, tmp_path: Path) -> None:
    client = approve_app.test_client()
    client.post("/digest")  # the server draws the token on first use
    token = (tmp_path / TOKEN_FILE).read_text()
    auth = {"Authorization": f"Bearer {token}"}
    response = client.post("/timeout", json={"approval_id": "nope-1"}, headers=auth)
    assert response.status_code == 200 and "no such approval" in response.get_data(as_text=True)
    response = client.post("/digest", headers=auth)
    assert response.status_code == 200 and response.get_json()["reviewers"] == 0
    assert approve_app.calls == ["timeout nope-1", "digest"]


def test_the_token_is_random_private_and_kept(tmp_path: Path) -> None:
    first, second = local_task_token(tmp_path / "a"), local_task_token(tmp_path / "b")
    assert first != second and len(first) >= 43
    path = tmp_path / "a" / TOKEN_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert local_task_token(tmp_path / "a") == first
    path.chmod(0o644)  # widened by someone: narrowed again when read
    assert local_task_token(tmp_path / "a") == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_serve_says_how_the_endpoints_are_authenticated(tmp_path: Path) -> None:
    assert f"local task token in {tmp_path / TOKEN_FILE}" in describe(tmp_path, {})
    assert "OIDC" in describe(tmp_path, {"K_SERVICE": "approve"})


def test_the_embedded_queue_calls_timeout_with_the_token(approve_app: Any, tmp_path: Path) -> None:
    """What ``inboxflow serve`` fires: the embedded queue's due task, over HTTP."""
    from werkzeug.serving import make_server

    from inboxflow.adapters.sqlite_tasks import post_json
    from inboxflow.ports.tasks import ScheduledTask

    server = make_server("127.0.0.1", 0, approve_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/timeout"
        task = ScheduledTask(name="t-1", url=url, payload={"approval_id": "nope-2"}, run_at=0)
        with pytest.raises(urllib.error.HTTPError) as refused:
            post_json(task)
        assert refused.value.code == 401
        post_json(task, local_task_token(tmp_path))
    finally:
        server.shutdown()
    assert approve_app.calls == ["timeout nope-2"]


def test_emulated_cloud_tasks_carry_the_token_and_real_ones_oidc() -> None:
    from inboxflow.adapters.cloud_tasks import CloudTasksQueue
    from inboxflow.ports.tasks import ScheduledTask

    task = ScheduledTask(name="t-2", url="http://x/timeout", payload={}, run_at=0)
    emulated = CloudTasksQueue.from_env(os.environ, emulator_host="127.0.0.1:1", local_token="tok")
    assert emulated.build(task).http_request.headers["Authorization"] == "Bearer tok"
    deployed = CloudTasksQueue.from_env(
        os.environ, emulator_host="127.0.0.1:1", service_account="sa@x.iam", local_token="tok"
    )
    request = deployed.build(task).http_request
    assert "Authorization" not in request.headers
    assert request.oidc_token.service_account_email == "sa@x.iam"

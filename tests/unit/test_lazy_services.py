"""Parts of ``Services`` a node may never use (workspace, vector index, CRM, the reviewers'
notifier) are built on first access, once, and then are the real thing."""

from __future__ import annotations

from pathlib import Path

from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.services import Later, LazyNotifier, build_runtime, build_services
from inboxflow.settings import Settings


def _settings(tmp_path: Path) -> Settings:
    return Settings.from_env({"INBOXFLOW_HOME": str(tmp_path)})


def test_the_workspace_vectors_and_crm_are_built_on_first_access_once(tmp_path: Path) -> None:
    services = build_services(_settings(tmp_path))
    raw = object.__getattribute__
    assert type(raw(services, "workspace")) is Later
    assert type(raw(services, "vectors")) is Later
    assert type(services.extras["crm"]) is Later
    workspace = services.workspace
    assert isinstance(workspace, StoreWorkspace)
    assert services["workspace"] is workspace
    assert raw(services, "workspace") is workspace
    crm = services["crm"]
    assert type(crm) is not Later
    assert services["crm"] is crm
    assert services.vectors is services.vectors


def test_a_part_given_is_used_as_given(tmp_path: Path) -> None:
    mine = object()
    services = build_services(_settings(tmp_path), workspace=mine, crm=mine)
    assert services.workspace is mine
    assert services["crm"] is mine


def test_the_notifier_is_built_on_first_send_and_shows_its_own_api(tmp_path: Path) -> None:
    runtime = build_runtime(_settings(tmp_path))
    notifier = runtime.services["approvals"].notifier
    assert isinstance(notifier, LazyNotifier)
    assert notifier._notifier is None
    receipt = notifier.send("ana@example.test", "S", "text", "<p>h</p>", "trace-1:1:n", None)
    assert notifier.find("trace-1:1:n")["id"] == receipt["id"]
    assert [m["to"] for m in notifier.messages()] == ["ana@example.test"]
    runtime.store.close()

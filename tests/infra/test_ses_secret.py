"""infra/ses.tf: the SES credentials are one Secret Manager secret, off until enabled, and
mounted only into the functions that notify reviewers."""

from __future__ import annotations

from inboxflow.dev.infra import export as infra_export
from inboxflow.graphs import graph_registry
from tests.infra.conftest import Infra

SES_ENV = "INBOXFLOW_SES_CREDENTIALS"


def _with(infra: Infra, **values: object) -> Infra:
    return type(infra)(infra.root, infra.modules_by_dir, {**infra.tfvars, **values})


def test_the_secret_is_created_only_when_enabled_and_never_holds_a_value(infra: Infra) -> None:
    variable = infra.root.variables["ses_enabled"]
    assert variable["default"] is False and variable["type"] in ("bool", "${bool}")
    secret = infra.root.resource("google_secret_manager_secret", "ses").body
    assert secret["for_each"] == "${toset(local.ses_secret_ids)}"
    assert "secret_data" not in secret
    ids = infra.root.locals["ses_secret_ids"].replace(" ", "")
    assert ids == '${var.ses_enabled?["INBOXFLOW_SES_CREDENTIALS"]:[]}'
    off = infra.resource_counts()
    on = _with(infra, ses_enabled=True).resource_counts()
    assert on["google_secret_manager_secret"] == off["google_secret_manager_secret"] + 1


def test_only_functions_that_notify_read_it(infra: Infra) -> None:
    node_secrets = infra.root.locals["node_secrets"].replace(" ", "")
    assert "local.ses_secret:name=>secretifnode.notifies" in node_secrets
    assert (
        infra.root.locals["approve_secrets"].replace(" ", "")
        == "${merge(local.gmail_secret,local.ses_secret)}"
    )
    calls = infra.root.modules
    assert calls["approve"]["secret_environment_variables"] == "${local.approve_secrets}"
    for name in ("ingest", "renew_watch"):  # they never notify anyone
        assert "ses" not in calls[name]["secret_environment_variables"], name

    nodes = infra.tfvars["node_functions"]
    enabled = _with(infra, ses_enabled=True)
    readers = {key for key in nodes if SES_ENV in enabled._local_value("node_secrets", key)}
    assert readers == {key for key, node in nodes.items() if node["notifies"]}
    assert {key for key, node in nodes.items() if node["pauses"]} <= readers
    assert "agent.finish" in readers  # escalation notices
    assert "pipeline.classify" not in readers
    # One accessor grant per reader, and one for the approval function.
    off = infra.resource_counts()["google_secret_manager_secret_iam_member"]
    on = enabled.resource_counts()["google_secret_manager_secret_iam_member"]
    assert on == off + len(readers) + 1
    assert all(SES_ENV not in infra._local_value("node_secrets", key) for key in nodes)


def test_the_export_says_which_nodes_notify() -> None:
    nodes = infra_export.export_graph_tfvars(graph_registry().values())["node_functions"]
    for key, node in nodes.items():
        graph, name = key.split(".", 1)
        declared = graph_registry()[graph].nodes[name]
        assert node["notifies"] == (declared.pauses or declared.notifies), key
    # Nodes that tell reviewers outside a pause: the agent's escalation notice, the
    # planner's request for human review.
    assert nodes["agent.finish"]["notifies"] and nodes["planner.tools"]["notifies"]

"""Per-mailbox OAuth tokens on the cloud (issue 38): the functions that act as a
mailbox read the tokens ``inboxflow mailbox connect`` keeps in Secret Manager,
only those secrets, and a disconnected mailbox reaches the alert address.

The environment is read the way the code reads it (``mailbox_tokens.token_store``),
the condition's prefix is the code's secret names' (``token_name``), and the
alert's filter is checked against the JSON line the code logs.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from inboxflow.adapters.mailbox_tokens import (
    SECRET_PREFIX,
    SecretManagerTokenStore,
    token_name,
    token_store,
)
from tests.infra.conftest import INFRA, TerraformDir, first

DEPLOY_DOC = INFRA.parent / "docs" / "deploy.md"
GMAIL_FUNCTIONS = ("ingest", "approve", "renew_watch")


def _token_env(infra, **values: Any) -> dict[str, str]:
    """main.tf's mailbox_token_environment, evaluated for the root variables ``values``."""
    variables = {**infra.variable_values(), **values}
    env: dict[str, str] = {}
    for name, value in infra.root.locals["mailbox_token_environment"].items():
        joined = re.fullmatch(r'\$\{join\(",", var\.(\w+)\)\}', value)
        assert joined or "${" not in value, f"{name}: teach this test {value}"
        env[name] = ",".join(variables[joined.group(1)]) if joined else value
    return env


def test_the_functions_environment_selects_the_secret_manager_store(infra) -> None:
    for locations in ([], ["europe-west1", "europe-west4"]):
        env = _token_env(infra, secret_replication_locations=locations)
        store = token_store({**env, "GOOGLE_CLOUD_PROJECT": "demo-project"})
        assert isinstance(store, SecretManagerTokenStore), env
        assert store.project == "demo-project"
        assert store.locations == tuple(locations)


def test_every_function_acting_as_a_mailbox_gets_that_environment(infra) -> None:
    calls = infra.root.modules
    for name in GMAIL_FUNCTIONS:
        call = calls[name]
        secrets = str(call["secret_environment_variables"])
        assert "gmail_secret" in secrets or "approve_secrets" in secrets, name
        assert "local.mailbox_token_environment" in str(call["environment_variables"]), name
    # Nodes: exactly those that talk to Gmail (the ones mounting GMAIL_CREDENTIALS).
    node_env = str(calls["node"]["environment_variables"])
    assert "local.node_mailbox_token_environment[each.key]" in node_env
    per_node = str(infra.root.locals["node_mailbox_token_environment"]).replace(" ", "")
    assert "local.mailbox_token_environment" in per_node
    assert per_node.endswith("ifnode.uses_gmail}}}")
    node_secrets = str(infra.root.locals["node_secrets"]).replace(" ", "")
    assert "local.gmail_secret:name=>secretifnode.uses_gmail" in node_secrets
    # No function mounts the Gmail credentials without reading the tokens too.
    for name, call in calls.items():
        secrets = str(call.get("secret_environment_variables", ""))
        if "gmail_secret" in secrets or "approve_secrets" in secrets:
            assert "mailbox_token_environment" in str(call["environment_variables"]), name


def test_they_may_read_the_mailbox_token_secrets_and_no_other(infra) -> None:
    grant = infra.root.resource("google_project_iam_member", "mailbox_token_readers").body
    assert grant["role"] == "roles/secretmanager.secretAccessor"
    assert grant["for_each"] == "${local.gmail_functions}"
    assert grant["member"] == "${each.value}"
    expression = first(grant["condition"])["expression"].replace('\\"', '"')
    assert expression == (
        'resource.name.startsWith("projects/${data.google_project.this.number}'
        '/secrets/${local.mailbox_token_prefix}")'
    )
    # The prefix is the one the code names its secrets with.
    prefix = infra.root.locals["mailbox_token_prefix"]
    assert prefix == SECRET_PREFIX
    assert token_name("Maya.Chen@Example.com").startswith(prefix)
    # Every function acting as a mailbox, and only those.
    functions = str(infra.root.locals["gmail_functions"]).replace(" ", "")
    assert "module.node[key].service_account_memberifnode.uses_gmail" in functions
    for name in GMAIL_FUNCTIONS:
        assert f"{name}=module.{name}.service_account_member" in functions, name
    nodes = infra.tfvars["node_functions"]
    expected = sum(node["uses_gmail"] for node in nodes.values()) + len(GMAIL_FUNCTIONS)
    assert len(infra.evaluate(grant["for_each"], None)) == expected
    # The deployer's conditioned Project IAM Admin may grant the role.
    bootstrap = TerraformDir.load(INFRA / "bootstrap", "bootstrap")
    assert "roles/secretmanager.secretAccessor" in bootstrap.locals["grantable_project_roles"]


def _logged_line(caplog_records: list[logging.LogRecord]) -> dict[str, Any]:
    from inboxflow.logs import CloudLoggingFormatter

    [record] = [r for r in caplog_records if getattr(r, "outcome", None) == "mailbox_disconnected"]
    return json.loads(CloudLoggingFormatter(project="demo-project").format(record))


def test_a_disconnected_mailbox_alerts_the_alert_address(infra, tmp_path, caplog) -> None:
    from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
    from inboxflow.clock import FakeClock
    from inboxflow.ingest.mailboxes import MailboxRegistry
    from inboxflow.ingest.watch import renew_watches
    from inboxflow.ports.gmail_reader import MailboxDisconnected

    class RefusedGmail:
        def watch(self, mailbox: str, topic: str, labels: list[str]) -> Any:
            raise MailboxDisconnected("invalid_grant: Token has been expired or revoked.")

    store = SqliteCheckpointStore(tmp_path / "m.db")
    MailboxRegistry(store).add("maya@example.com", 0.0, "support")
    caplog.set_level(logging.INFO)
    renew_watches(store, RefusedGmail(), FakeClock(), topic="projects/p/topics/gmail")  # type: ignore[arg-type]
    line = _logged_line(caplog.records)
    assert line["outcome"] == "mailbox_disconnected"  # jsonPayload.outcome on Cloud Logging

    policy = infra.root.resource("google_monitoring_alert_policy", "mailbox_disconnected").body
    assert policy["notification_channels"] == "${local.alert_channels}"
    matched = first(first(policy["conditions"])["condition_matched_log"])
    assert matched["filter"].replace('\\"', '"') == (
        'resource.type="cloud_run_revision" AND resource.labels.service_name=~"^'
        '${local.function_prefix}" AND jsonPayload.outcome="mailbox_disconnected"'
    )
    # The functions' Cloud Run services carry the prefix the filter selects.
    prefix = infra.root.locals["function_prefix"]
    for key in GMAIL_FUNCTIONS:
        assert infra.tfvars["service_functions"][key]["function_name"].startswith(prefix), key
    # A log-match condition needs a notification rate limit.
    strategy = first(policy["alert_strategy"])
    assert first(strategy["notification_rate_limit"])["period"].endswith("s")

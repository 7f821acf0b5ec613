"""The quoting API reaches only the nodes that call it: its URL and its key (a secret)."""

from __future__ import annotations


def test_quoting_url_and_key_go_only_to_the_quoting_nodes(infra) -> None:
    variables = infra.root.variables
    assert variables["quoting_url"]["default"] == ""
    assert variables["quoting_nodes"]["default"] == ["planner.tools"]
    assert "QUOTING_API_KEY" not in variables["secret_ids"]["default"]  # opt-in

    key = infra.root.locals["quoting_secret"].replace(" ", "")
    assert 'contains(var.secret_ids,"QUOTING_API_KEY")' in key
    assert (
        'INBOXFLOW_QUOTING_API_KEY=google_secret_manager_secret.runtime["QUOTING_API_KEY"]' in key
    )

    secrets = infra.root.locals["node_secrets"].replace(" ", "")
    assert "local.quoting_secret:name=>secretifcontains(var.quoting_nodes,key)" in secrets
    environment = infra.root.locals["node_quoting_environment"].replace(" ", "")
    assert "INBOXFLOW_QUOTING_URL=var.quoting_url" in environment
    assert 'ifvalue!=""&&contains(var.quoting_nodes,key)' in environment
    node_env = infra.root.modules["node"]["environment_variables"]
    assert "local.node_quoting_environment[each.key]" in node_env

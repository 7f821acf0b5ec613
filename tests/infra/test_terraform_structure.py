"""Structural checks on infra/ with python-hcl2 (no provider download needed)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

INFRA = Path(__file__).resolve().parents[2] / "infra"


def first(value: Any) -> Any:
    """Nested blocks parse as a list of one dict; attributes as the value."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        return value[0]
    return value


# Every role any inboxflow identity may hold. Adding one is a reviewed change.
ROLE_ALLOWLIST = {
    "roles/datastore.user",  # Firestore documents (no finer-grained IAM exists)
    "roles/pubsub.publisher",  # on single topics
    "roles/pubsub.subscriber",  # Pub/Sub service agent, on single subscriptions (dead-lettering)
    "roles/secretmanager.secretAccessor",  # on single secrets
    "roles/cloudtasks.enqueuer",  # on the approvals queue
    "roles/cloudtasks.taskDeleter",  # on the approvals queue
    "roles/iam.serviceAccountUser",  # act as the tasks identity, on that account only
    "roles/iam.serviceAccountTokenCreator",  # Pub/Sub agent mints push OIDC tokens (push identity)
    "roles/run.invoker",  # on single Cloud Run services
    "roles/artifactregistry.writer",  # function build only
    "roles/logging.logWriter",  # function build only
    "roles/storage.objectViewer",  # function build only
}
# Roles that may be granted on the whole project (no narrower resource works).
PROJECT_ROLE_ALLOWLIST = {
    "roles/datastore.user",
    "roles/artifactregistry.writer",
    "roles/logging.logWriter",
    "roles/storage.objectViewer",
}
FUNCTION_ID = re.compile(r"^[a-z](?:[-a-z0-9]{2,61}[a-z0-9])$")
SERVICE_ACCOUNT_ID = re.compile(r"^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$")
TOPIC_NAME = re.compile(r"^[A-Za-z][-A-Za-z0-9_.~+%]{2,254}$")


def _iam_resources(infra):
    for tf in (infra.root, infra.module):
        for res in tf.resources:
            if res.type.endswith("_iam_member") or res.type.endswith("_iam_binding"):
                yield res


# --- variables, outputs, versions ----------------------------------------------------


@pytest.mark.parametrize("which", ["root", "module"])
def test_every_variable_has_type_and_description(infra, which: str) -> None:
    tf = getattr(infra, which)
    assert tf.variables, f"{which}: no variables found"
    for name, body in tf.variables.items():
        assert body.get("type"), f"{which} variable {name!r} has no type"
        assert str(body.get("description", "")).strip(), (
            f"{which} variable {name!r} has no description"
        )


@pytest.mark.parametrize("which", ["root", "module"])
def test_every_output_is_described(infra, which: str) -> None:
    tf = getattr(infra, which)
    assert tf.outputs
    for name, body in tf.outputs.items():
        assert str(body.get("description", "")).strip(), (
            f"{which} output {name!r} has no description"
        )


@pytest.mark.parametrize("which", ["root", "module"])
def test_google_provider_range_is_pinned(infra, which: str) -> None:
    tf = getattr(infra, which)
    versions = tf.files["versions.tf"]["terraform"][0]
    google = first(versions["required_providers"])["google"]
    assert google["source"] == "hashicorp/google"
    constraint = google["version"]
    assert ">=" in constraint and "<" in constraint.replace("<=", ""), (
        f"{which}: google provider needs a lower and an upper bound, got {constraint!r}"
    )
    assert versions.get("required_version")


def test_file_per_concern_layout() -> None:
    expected = {
        "versions.tf", "variables.tf", "outputs.tf", "apis.tf", "service_accounts.tf", "iam.tf",
        "pubsub.tf", "functions.tf", "firestore.tf", "cloud_tasks.tf", "scheduler.tf",
        "secrets.tf", "storage.tf",
    }  # fmt: skip
    present = {path.name for path in INFRA.glob("*.tf")}
    assert expected <= present, f"missing: {sorted(expected - present)}"
    module_files = {path.name for path in (INFRA / "modules" / "node_function").glob("*.tf")}
    assert {"main.tf", "variables.tf", "outputs.tf", "versions.tf"} <= module_files


def test_generated_tfvars_match_declared_variables(infra) -> None:
    declared = set(infra.root.variables)
    assert set(infra.tfvars) <= declared, f"undeclared: {sorted(set(infra.tfvars) - declared)}"
    required = {name for name, body in infra.root.variables.items() if "default" not in body}
    assert required - set(infra.tfvars) <= {"project_id", "environment"}


@pytest.mark.parametrize(
    "env_file", sorted((INFRA / "envs").glob("*.tfvars")), ids=lambda p: p.name
)
def test_env_tfvars_set_only_declared_variables(infra, env_file) -> None:
    values = infra.load_hcl(env_file)
    declared = set(infra.root.variables)
    assert {"project_id", "environment", "region"} <= set(values)
    assert set(values) <= declared, f"{env_file.name}: undeclared {sorted(set(values) - declared)}"
    assert env_file.stem == values["environment"]


# --- per node: topic, subscription with dead-letter policy, function, identity ---------


def test_every_node_has_names_for_each_piece(infra) -> None:
    nodes = infra.tfvars["node_functions"]
    assert nodes, "graph.auto.tfvars.json declares no nodes"
    for key, node in nodes.items():
        assert key == f"{node['graph']}.{node['node']}"
        assert FUNCTION_ID.match(node["function_name"]), node["function_name"]
        assert SERVICE_ACCOUNT_ID.match(node["service_account_id"]), node["service_account_id"]
        for topic in (node["topic"], node["dead_letter_topic"], node["subscription"]):
            assert TOPIC_NAME.match(topic) and not topic.startswith("goog"), topic
        assert node["entry_point"] == "run_node"
        all_topics = {other["topic"] for other in nodes.values()}
        assert set(node["publishes_to"]) <= all_topics, f"{key} publishes to an unknown topic"
    for field in (
        "function_name",
        "service_account_id",
        "topic",
        "dead_letter_topic",
        "subscription",
    ):
        names = [node[field] for node in nodes.values()]
        assert len(names) == len(set(names)), f"duplicate {field}"
    entries = {node["graph"] for node in nodes.values() if node["is_entry"]}
    assert entries == {node["graph"] for node in nodes.values()}, "every graph needs one entry node"


def test_nodes_expand_to_topic_subscription_function_and_identity(infra) -> None:
    node_call = infra.root.modules["node"]
    assert node_call["source"] == "./modules/node_function"
    assert node_call["for_each"] == "${var.node_functions}"
    assert "INBOXFLOW_NODE = each.key" in node_call["environment_variables"].replace('"', "")

    # Topics and dead-letter topics exist for every pushed function (nodes + ingest).
    for name in ("pushed", "dead_letter"):
        topic = infra.root.resource("google_pubsub_topic", name)
        assert topic.body["for_each"] == "${local.pushed_functions}"
    assert "var.node_functions" in infra.root.locals["pushed_functions"]
    assert infra.root.resource("google_pubsub_subscription", "dead_letter").body["for_each"] == (
        "${local.pushed_functions}"
    )

    # Inside the module: the identity, the function, the push subscription.
    module = infra.module
    module.resource("google_service_account", "function")
    function = module.resource("google_cloudfunctions2_function", "function").body
    assert (
        "google_service_account.function.email"
        in first(function["service_config"])["service_account_email"]
    )
    subscription = module.resource("google_pubsub_subscription", "push").body
    assert subscription["enable_message_ordering"] is True
    push = first(subscription["push_config"])
    oidc = first(push["oidc_token"])
    assert "push_service_account_email" in oidc["service_account_email"]
    assert oidc["audience"] == push["push_endpoint"]
    retry = first(subscription["retry_policy"])
    assert retry["minimum_backoff"] and retry["maximum_backoff"]
    dead_letter = first(subscription["dead_letter_policy"])
    assert "dead_letter_topic_id" in dead_letter["dead_letter_topic"]
    assert "max_delivery_attempts" in str(dead_letter["max_delivery_attempts"])


def test_dead_lettering_grants_for_the_pubsub_service_agent(infra) -> None:
    publisher = infra.root.resource("google_pubsub_topic_iam_member", "dead_letter_publisher").body
    assert publisher["role"] == "roles/pubsub.publisher"
    assert "pubsub_service_agent" in publisher["member"]
    assert publisher["for_each"] == "${local.pushed_functions}"
    subscriber = infra.module.resource(
        "google_pubsub_subscription_iam_member", "dead_letter_subscriber"
    ).body
    assert subscriber["role"] == "roles/pubsub.subscriber"
    assert "pubsub_service_agent" in subscriber["member"]
    assert "gcp-sa-pubsub.iam.gserviceaccount.com" in infra.root.locals["pubsub_service_agent"]


def test_functions_share_one_hashed_source_archive(infra) -> None:
    source = infra.root.resource("google_storage_bucket_object", "source").body
    assert "filesha256(var.source_archive)" in source["name"]
    functions = [
        res for res in infra.root.resources if res.type == "google_cloudfunctions2_function"
    ]
    for call in infra.root.modules.values():
        assert call["source_object"] == "${google_storage_bucket_object.source.name}"
        assert call["build_service_account"] == "${google_service_account.build.id}"
    for res in functions:
        build = first(res.body["build_config"])
        storage = first(first(build["source"])["storage_source"])
        assert storage["object"] == "${google_storage_bucket_object.source.name}", res.address
        assert build["service_account"] == "${google_service_account.build.id}", res.address


def test_every_function_has_its_own_identity_and_only_approve_is_public(infra) -> None:
    identities = []
    for res in infra.root.resources:
        if res.type == "google_cloudfunctions2_function":
            config = first(res.body["service_config"])
            identities.append(config["service_account_email"])
            expected = "ALLOW_ALL" if res.name == "approve" else "ALLOW_INTERNAL_ONLY"
            assert config["ingress_settings"] == expected, res.address
    assert len(identities) == len(set(identities))
    assert (
        first(
            infra.module.resource("google_cloudfunctions2_function", "function").body[
                "service_config"
            ]
        )["ingress_settings"]
        == "${var.ingress_settings}"
    )
    assert infra.module.variables["ingress_settings"]["default"] == "ALLOW_INTERNAL_ONLY"
    public = [
        res
        for res in _iam_resources(infra)
        if res.body.get("member") in ("allUsers", "allAuthenticatedUsers")
    ]
    assert [res.address for res in public] == ["google_cloud_run_service_iam_member.approve_public"]
    assert "approve" in public[0].body["service"]


def test_invoker_is_granted_on_cloud_run_services_not_functions(infra) -> None:
    for res in _iam_resources(infra):
        assert not res.type.startswith("google_cloudfunctions2_function_iam"), res.address
        if res.body.get("role") == "roles/run.invoker":
            assert res.type == "google_cloud_run_service_iam_member", res.address
            assert "service_config[0].service" in res.body["service"], res.address


# --- IAM allowlist ------------------------------------------------------------------


def test_no_identity_has_a_role_outside_the_allowlist(infra) -> None:
    roles: set[str] = set()
    for res in _iam_resources(infra):
        role = res.body["role"]
        if role.startswith("${each"):
            continue  # checked through its for_each below
        roles.add(role)
        if res.type == "google_project_iam_member":
            assert role in PROJECT_ROLE_ALLOWLIST, f"{res.address}: {role} on the whole project"
    build = infra.root.resource("google_project_iam_member", "build").body["for_each"]
    build_roles = set(re.findall(r"roles/[\w.]+", str(build)))
    assert build_roles <= PROJECT_ROLE_ALLOWLIST
    roles |= build_roles
    for call in infra.root.modules.values():
        module_roles = set(call.get("project_roles", []))
        assert module_roles <= PROJECT_ROLE_ALLOWLIST
        roles |= module_roles
    outside = roles - ROLE_ALLOWLIST
    assert not outside, f"roles outside the allowlist: {sorted(outside)}"
    assert not any(re.search(r"roles/(owner|editor|viewer)$|\.admin$", role) for role in roles)


# --- service functions, Gmail, Tasks, Scheduler, Firestore, secrets --------------------


def test_service_functions(infra) -> None:
    services = infra.tfvars["service_functions"]
    assert set(services) == {"approve", "ingest", "renew_watch"}
    assert services["ingest"]["topic"] == infra.tfvars["gmail_topic"]
    gmail = infra.root.resource("google_pubsub_topic_iam_member", "gmail_push_publisher").body
    assert gmail["member"] == "serviceAccount:gmail-api-push@system.gserviceaccount.com"
    assert gmail["role"] == "roles/pubsub.publisher"
    ingest = infra.root.modules["ingest"]
    assert ingest["source"] == "./modules/node_function"
    assert 'pushed["ingest"]' in ingest["topic_id"]


def test_renew_watch_is_called_daily_by_scheduler_with_oidc(infra) -> None:
    job = infra.root.resource("google_cloud_scheduler_job", "renew_watch").body
    fields = job["schedule"].split()
    assert len(fields) == 5 or job["schedule"].startswith("${var.")
    schedule = infra.root.variables["renew_watch_schedule"]["default"].split()
    assert schedule[2:] == ["*", "*", "*"], "the renewal must run every day"
    target = first(job["http_target"])
    oidc = first(target["oidc_token"])
    assert "scheduler_invoker" in oidc["service_account_email"]
    assert "renew_watch" in target["uri"]


def test_tasks_queue_has_retry_config(infra) -> None:
    queue = infra.root.resource("google_cloud_tasks_queue", "approvals").body
    retry = first(queue["retry_config"])
    for key in ("max_attempts", "max_retry_duration", "min_backoff", "max_backoff"):
        assert key in retry
    assert queue["name"] == "${var.tasks_queue}"
    assert infra.tfvars["tasks_queue"] == "inboxflow-approvals"


def test_firestore_ttl_vector_and_composite_indexes(infra) -> None:
    database = infra.root.resource("google_firestore_database", "default").body
    assert database["type"] == "FIRESTORE_NATIVE"
    ttl = infra.root.resource("google_firestore_field", "expire_at").body
    assert ttl["field"] == "expire_at" and "ttl_config" in ttl
    assert {"traces", "approvals", "effects"} <= set(infra.tfvars["firestore_ttl_collections"])
    vector = infra.root.resource("google_firestore_index", "vector").body
    assert any("vector_config" in first(field) for field in vector["fields"])
    assert {"collection": "kb", "field_path": "embedding", "dimension": 768} in infra.tfvars[
        "firestore_vector_indexes"
    ]
    assert infra.tfvars["firestore_composite_indexes"], "no composite indexes declared"
    infra.root.resource("google_firestore_index", "composite")


def test_secrets_reach_functions_from_secret_manager(infra) -> None:
    assert set(infra.root.variables["secret_ids"]["default"]) == {
        "GEMINI_API_KEY",
        "GMAIL_CREDENTIALS",
    }
    secret = infra.root.resource("google_secret_manager_secret", "runtime").body
    assert "secret_data" not in secret  # values never go through Terraform state
    assert not [
        res for res in infra.root.resources if res.type == "google_secret_manager_secret_version"
    ]
    function = infra.module.resource("google_cloudfunctions2_function", "function").body
    assert "secret_environment_variables" in str(
        first(function["service_config"]).get("dynamic", "")
    )


def test_resource_counts(infra) -> None:
    counts = infra.resource_counts()
    nodes = len(infra.tfvars["node_functions"])
    assert counts["google_cloudfunctions2_function"] == nodes + 3
    assert counts["google_pubsub_topic"] == 2 * (nodes + 1)
    assert counts["google_pubsub_subscription"] == 2 * (nodes + 1)
    assert counts["google_service_account"] == (nodes + 3) + 4  # one per function + 4 callers/build
    width = max(len(rtype) for rtype in counts)
    report = "\n".join(f"  {rtype:<{width}}  {count}" for rtype, count in sorted(counts.items()))
    print(f"\nresource instances per type ({nodes} nodes, {sum(counts.values())} total):\n{report}")

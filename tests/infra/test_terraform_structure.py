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
    "roles/iam.serviceAccountTokenCreator",  # keyless delegation: sign as the Gmail delegate
    "roles/run.invoker",  # on single Cloud Run services
    "roles/artifactregistry.writer",  # function build only
    "roles/logging.logWriter",  # function build only
    "roles/storage.objectViewer",  # function build only
    "roles/cloudtrace.agent",  # functions export their spans to Cloud Trace
    "roles/aiplatform.user",  # llm = "vertex": the nodes that call Gemini on Vertex AI
}
# Roles that may be granted on the whole project (no narrower resource works).
PROJECT_ROLE_ALLOWLIST = {
    "roles/datastore.user",
    "roles/cloudtrace.agent",
    "roles/artifactregistry.writer",
    "roles/logging.logWriter",
    "roles/storage.objectViewer",
    "roles/aiplatform.user",  # Vertex AI has no finer resource for a publisher model
}
# Granted on the project but conditioned on the resource's name (the mailboxes' own
# tokens, secrets created after the apply by `inboxflow mailbox connect`).
NAME_CONDITIONED_PROJECT_ROLES = {"roles/secretmanager.secretAccessor"}
FUNCTION_ID = re.compile(r"^[a-z](?:[-a-z0-9]{2,61}[a-z0-9])$")
SERVICE_ACCOUNT_ID = re.compile(r"^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$")
TOPIC_NAME = re.compile(r"^[A-Za-z][-A-Za-z0-9_.~+%]{2,254}$")


def _iam_resources(infra):
    for tf in (infra.root, *infra.modules_by_dir.values()):
        for res in tf.resources:
            if res.type.endswith("_iam_member") or res.type.endswith("_iam_binding"):
                yield res


def _all_dirs(infra):
    return {"root": infra.root, **infra.modules_by_dir}


def _node(**flags: bool) -> dict[str, bool]:
    return {"pauses": False, "uses_llm": False, "uses_gmail": False, **flags}


# --- variables, outputs, versions ----------------------------------------------------


@pytest.mark.parametrize("which", ["root", "node_function", "http_function"])
def test_every_variable_has_type_and_description(infra, which: str) -> None:
    tf = _all_dirs(infra)[which]
    assert tf.variables, f"{which}: no variables found"
    for name, body in tf.variables.items():
        assert body.get("type"), f"{which} variable {name!r} has no type"
        assert str(body.get("description", "")).strip(), (
            f"{which} variable {name!r} has no description"
        )


@pytest.mark.parametrize("which", ["root", "node_function", "http_function"])
def test_every_output_is_described(infra, which: str) -> None:
    tf = _all_dirs(infra)[which]
    assert tf.outputs
    for name, body in tf.outputs.items():
        assert str(body.get("description", "")).strip(), (
            f"{which} output {name!r} has no description"
        )


@pytest.mark.parametrize("which", ["root", "node_function", "http_function"])
def test_google_provider_range_is_pinned(infra, which: str) -> None:
    tf = _all_dirs(infra)[which]
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
        "secrets.tf", "storage.tf", "monitoring.tf", "budget.tf",
    }  # fmt: skip
    present = {path.name for path in INFRA.glob("*.tf")}
    assert expected <= present, f"missing: {sorted(expected - present)}"
    for module in ("node_function", "http_function"):
        module_files = {path.name for path in (INFRA / "modules" / module).glob("*.tf")}
        assert {"main.tf", "variables.tf", "outputs.tf", "versions.tf"} <= module_files, module


def test_generated_tfvars_match_declared_variables(infra) -> None:
    declared = set(infra.root.variables)
    assert set(infra.tfvars) <= declared, f"undeclared: {sorted(set(infra.tfvars) - declared)}"
    required = {name for name, body in infra.root.variables.items() if "default" not in body}
    assert required - set(infra.tfvars) <= {"project_id", "environment", "alert_email"}
    node_type = infra.root.variables["node_functions"]["type"]
    for key in next(iter(infra.tfvars["node_functions"].values())):
        assert key in node_type, f"node_functions.{key} is exported but not in the variable type"


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
        for flag in ("pauses", "uses_llm", "uses_gmail"):
            assert isinstance(node[flag], bool), f"{key}.{flag}"
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

    # node_function = http_function (identity + function) + the push subscription.
    inner = infra.node_module.modules["function"]
    assert inner["source"] == "../http_function"
    assert inner["ingress_settings"] == "ALLOW_INTERNAL_ONLY"
    assert "push_service_account_email" in str(inner["invoker_members"])
    http = infra.http_module
    http.resource("google_service_account", "function")
    function = http.resource("google_cloudfunctions2_function", "function").body
    assert (
        "google_service_account.function.email"
        in first(function["service_config"])["service_account_email"]
    )
    subscription = infra.node_module.resource("google_pubsub_subscription", "push").body
    assert subscription["enable_message_ordering"] is True
    push = first(subscription["push_config"])
    oidc = first(push["oidc_token"])
    assert "push_service_account_email" in oidc["service_account_email"]
    assert oidc["audience"] == push["push_endpoint"] == "${module.function.function_uri}"
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
    subscriber = infra.node_module.resource(
        "google_pubsub_subscription_iam_member", "dead_letter_subscriber"
    ).body
    assert subscriber["role"] == "roles/pubsub.subscriber"
    assert "pubsub_service_agent" in subscriber["member"]
    # Derived from the project number (infra/bootstrap creates the agent first,
    # tests/infra/test_bootstrap.py).
    assert "gcp-sa-pubsub.iam.gserviceaccount.com" in infra.root.locals["pubsub_service_agent"]
    assert "data.google_project.this.number" in infra.root.locals["pubsub_service_agent"]


def test_shared_dead_letter_topic_is_kept_and_only_ingest_publishes(infra) -> None:
    topic = infra.root.resource("google_pubsub_topic", "shared_dead_letter").body
    assert topic["name"] == "${var.shared_dead_letter_topic}"
    assert infra.root.variables["shared_dead_letter_topic"]["default"] == "inboxflow-dead-letter"
    assert infra.tfvars["shared_dead_letter_topic"] == "inboxflow-dead-letter"
    pull = infra.root.resource("google_pubsub_subscription", "shared_dead_letter").body
    assert "shared_dead_letter.id" in pull["topic"] and "push_config" not in pull
    assert pull["retain_acked_messages"] is True
    grants = [
        res
        for res in infra.root.resources
        if res.type == "google_pubsub_topic_iam_member"
        and "shared_dead_letter" in res.body["topic"]
    ]
    assert [res.name for res in grants] == ["ingest_dead_letters"]
    assert grants[0].body["member"] == "${module.ingest.service_account_member}"


def test_functions_share_one_hashed_source_archive(infra) -> None:
    source = infra.root.resource("google_storage_bucket_object", "source").body
    assert "filesha256(var.source_archive)" in source["name"]
    assert set(infra.root.modules) == {"node", "ingest", "approve", "renew_watch"}
    for call in infra.root.modules.values():
        assert call["source_object"] == "${google_storage_bucket_object.source.name}"
        assert call["build_service_account"] == "${google_service_account.build.id}"
    inner = infra.node_module.modules["function"]
    assert inner["source_object"] == "${var.source_object}"
    assert not [res for res in infra.root.resources if res.type.startswith("google_cloudfunctions")]
    function = infra.http_module.resource("google_cloudfunctions2_function", "function").body
    build = first(function["build_config"])
    storage = first(first(build["source"])["storage_source"])
    assert storage["object"] == "${var.source_object}"
    assert build["service_account"] == "${var.build_service_account}"


def test_http_functions_use_the_module(infra) -> None:
    for name in ("approve", "renew_watch"):
        call = infra.root.modules[name]
        assert call["source"] == "./modules/http_function", name
        assert call["entry_point"] == f'${{var.service_functions["{name}"].entry_point}}'
    assert infra.root.modules["ingest"]["source"] == "./modules/node_function"


def test_every_function_has_its_own_identity_and_only_approve_is_public(infra) -> None:
    ingress = {
        name: call.get("ingress_settings", "ALLOW_INTERNAL_ONLY")
        for name, call in infra.root.modules.items()
    }
    assert ingress == {
        "node": "ALLOW_INTERNAL_ONLY",  # node_function hard-codes internal ingress
        "ingest": "ALLOW_INTERNAL_ONLY",
        "approve": "ALLOW_ALL",
        "renew_watch": "ALLOW_INTERNAL_ONLY",
    }
    assert infra.node_module.modules["function"]["ingress_settings"] == "ALLOW_INTERNAL_ONLY"
    assert "ingress_settings" not in infra.node_module.variables
    assert infra.http_module.variables["ingress_settings"]["default"] == "ALLOW_INTERNAL_ONLY"
    function = infra.http_module.resource("google_cloudfunctions2_function", "function").body
    assert first(function["service_config"])["ingress_settings"] == "${var.ingress_settings}"
    # One identity per function: created inside the module, from a unique account id.
    accounts = [node["service_account_id"] for node in infra.tfvars["node_functions"].values()]
    accounts += [svc["service_account_id"] for svc in infra.tfvars["service_functions"].values()]
    assert len(accounts) == len(set(accounts))
    public = [
        res
        for res in _iam_resources(infra)
        if res.body.get("member") in ("allUsers", "allAuthenticatedUsers")
    ]
    assert [res.address for res in public] == ["google_cloud_run_service_iam_member.approve_public"]
    assert public[0].body["service"] == "${module.approve.service_name}"


def test_invoker_is_granted_on_cloud_run_services_not_functions(infra) -> None:
    for res in _iam_resources(infra):
        assert not res.type.startswith("google_cloudfunctions2_function_iam"), res.address
        if res.body.get("role") == "roles/run.invoker":
            assert res.type == "google_cloud_run_service_iam_member", res.address
            service = res.body["service"]
            assert "service_config[0].service" in service or ".service_name}" in service, (
                res.address
            )
    invoker = infra.http_module.resource("google_cloud_run_service_iam_member", "invoker").body
    assert invoker["for_each"] == "${var.invoker_members}"
    assert infra.root.modules["renew_watch"]["invoker_members"] == {
        "scheduler": "${google_service_account.scheduler_invoker.member}"
    }
    assert "invoker_members" not in infra.root.modules["approve"]  # public; see approve_public


# --- IAM allowlist ------------------------------------------------------------------


def test_no_identity_has_a_role_outside_the_allowlist(infra) -> None:
    roles: set[str] = set()
    for res in _iam_resources(infra):
        role = res.body["role"]
        if role.startswith("${each"):
            continue  # checked through its for_each below
        roles.add(role)
        if res.type == "google_project_iam_member" and role in NAME_CONDITIONED_PROJECT_ROLES:
            # Not the whole project: only resources whose name starts with a given prefix.
            expression = first(res.body["condition"])["expression"]
            assert expression.startswith("resource.name.startsWith("), res.address
        elif res.type == "google_project_iam_member":
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
    # Only approve deletes tasks (a decided approval's deadline), on the approvals queue.
    deleters = [
        r
        for r in infra.root.resources
        if r.type == "google_cloud_tasks_queue_iam_member"
        and r.body["role"] == "roles/cloudtasks.taskDeleter"
    ]
    assert [r.body["member"] for r in deleters] == ["${module.approve.service_account_member}"]


def test_only_pausing_nodes_and_approve_schedule_tasks(infra) -> None:
    assert infra.root.locals["pausing_nodes"].replace(" ", "").endswith("ifnode.pauses}}")
    for rtype, name in (
        ("google_cloud_tasks_queue_iam_member", "node_enqueuer"),
        ("google_service_account_iam_member", "node_act_as_tasks_invoker"),
    ):
        body = infra.root.resource(rtype, name).body
        assert body["for_each"] == "${local.pausing_nodes}", name
        assert body["member"] == "${module.node[each.key].service_account_member}"
    act_as = infra.root.resource("google_service_account_iam_member", "node_act_as_tasks_invoker")
    assert act_as.body["service_account_id"] == "${google_service_account.tasks_invoker.name}"
    assert act_as.body["role"] == "roles/iam.serviceAccountUser"
    counts = infra.resource_counts()
    pausing = sum(node["pauses"] for node in infra.tfvars["node_functions"].values())
    assert pausing >= 1, "the pipeline's review node pauses"
    assert counts["google_cloud_tasks_queue_iam_member"] == pausing + 2  # + approve's two
    assert counts["google_service_account_iam_member"] == pausing + 1  # + approve
    # The task environment reaches pausing nodes (and approve) only.
    task_env = infra.root.locals["node_task_environment"].replace(" ", "")
    assert task_env.endswith("ifnode.pauses}}}")
    assert (
        "local.node_task_environment[each.key]"
        in infra.root.modules["node"]["environment_variables"]
    )
    assert "local.tasks_environment" in infra.root.modules["approve"]["environment_variables"]
    for name in ("ingest", "renew_watch"):
        assert "tasks_environment" not in str(infra.root.modules[name]["environment_variables"])


def test_task_environment_names_the_queue_invoker_and_audience(infra) -> None:
    env = infra.root.locals["tasks_environment"]
    assert set(env) >= {
        "INBOXFLOW_APPROVAL_URL",
        "INBOXFLOW_TASKS_QUEUE",
        "INBOXFLOW_TASKS_INVOKER",
        "INBOXFLOW_TASKS_AUDIENCE",
    }
    assert env["INBOXFLOW_TASKS_INVOKER"] == "${google_service_account.tasks_invoker.email}"
    assert env["INBOXFLOW_TASKS_AUDIENCE"] == env["INBOXFLOW_TASKS_URL"] == "${local.tasks_url}"
    assert env["INBOXFLOW_APPROVAL_URL"] == "${local.approval_url}"
    # The function's own URL unless approval_base_url names a custom domain.
    assert "cloudfunctions.net" in infra.root.locals["default_approval_url"]
    assert infra.root.locals["approval_url"] == (
        '${var.approval_base_url == "" ? local.default_approval_url'
        ' : trimsuffix(var.approval_base_url, "/")}'
    )
    # Reviewer emails (with their links) can go out from a dedicated notifier address.
    assert env["INBOXFLOW_NOTIFY_FROM"] == "${var.notify_from}"
    assert infra.root.variables["notify_from"]["default"] == ""


def test_publish_grants_follow_entry_and_resume_topics(infra) -> None:
    nodes = infra.tfvars["node_functions"]
    by_topic = {node["topic"]: node for node in nodes.values()}
    assert infra.tfvars["entry_topics"] == sorted(
        node["topic"] for node in nodes.values() if node["is_entry"]
    )
    resume = sorted(
        {topic for node in nodes.values() if node["pauses"] for topic in node["publishes_to"]}
    )
    assert infra.tfvars["resume_topics"] == resume
    assert set(resume) <= set(by_topic)
    assert "inboxflow-pipeline-dispatch" in resume
    ingest = infra.root.resource("google_pubsub_topic_iam_member", "ingest_publishes").body
    assert ingest["for_each"] == "${toset(var.entry_topics)}"
    # Ingest resumes too: customer replies and review decisions by email reply.
    resumes = infra.root.resource("google_pubsub_topic_iam_member", "ingest_resumes").body
    assert resumes["for_each"] == "${toset(var.resume_topics)}"
    assert resumes["member"] == "${module.ingest.service_account_member}"
    assert ingest["member"] == "${module.ingest.service_account_member}"
    approve = infra.root.resource("google_pubsub_topic_iam_member", "approve_publishes").body
    assert approve["for_each"] == "${toset(var.resume_topics)}"
    assert approve["member"] == "${module.approve.service_account_member}"
    # Nobody else may publish to another function's topic.
    publishers = {
        res.name
        for res in infra.root.resources
        if res.type == "google_pubsub_topic_iam_member" and "pushed[" in res.body["topic"]
    }
    assert publishers == {
        "node_publishes",
        "ingest_publishes",
        "ingest_resumes",
        "approve_publishes",
        "gmail_push_publisher",
    }


# --- service functions, Gmail, Tasks, Scheduler, Firestore, secrets --------------------


def test_service_functions(infra) -> None:
    services = infra.tfvars["service_functions"]
    assert set(services) == {"approve", "ingest", "renew_watch"}
    assert services["ingest"]["topic"] == infra.tfvars["gmail_topic"]
    gmail = infra.root.resource("google_pubsub_topic_iam_member", "gmail_push_publisher").body
    assert gmail["member"] == "serviceAccount:gmail-api-push@system.gserviceaccount.com"
    assert gmail["role"] == "roles/pubsub.publisher"
    assert gmail["topic"] == '${google_pubsub_topic.pushed["ingest"].name}'
    ingest = infra.root.modules["ingest"]
    assert ingest["source"] == "./modules/node_function"
    assert 'pushed["ingest"]' in ingest["topic_id"]
    renew = infra.root.modules["renew_watch"]
    assert 'INBOXFLOW_GMAIL_TOPIC = google_pubsub_topic.pushed["ingest"].id' in renew[
        "environment_variables"
    ].replace("\\", "")


def test_renew_watch_is_called_daily_by_scheduler_with_oidc(infra) -> None:
    job = infra.root.resource("google_cloud_scheduler_job", "renew_watch").body
    fields = job["schedule"].split()
    assert len(fields) == 5 or job["schedule"].startswith("${var.")
    schedule = infra.root.variables["renew_watch_schedule"]["default"].split()
    assert schedule[2:] == ["*", "*", "*"], "the renewal must run every day"
    target = first(job["http_target"])
    oidc = first(target["oidc_token"])
    assert "scheduler_invoker" in oidc["service_account_email"]
    assert target["uri"] == oidc["audience"] == "${module.renew_watch.function_uri}"


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
    assert {"traces", "approvals", "approval_tokens", "effects"} <= set(
        infra.tfvars["firestore_ttl_collections"]
    )
    vector = infra.root.resource("google_firestore_index", "vector").body
    # Two kb_chunks indexes on one vector (with and without category): the key names the prefix.
    assert 'join(".", index.prefix_fields)' in vector["for_each"]
    keys = [
        (i["collection"], tuple(i["prefix_fields"]), i["field_path"])
        for i in infra.tfvars["firestore_vector_indexes"]
    ]
    assert len(keys) == len(set(keys))
    assert {
        "collection": "kb_chunks",
        "prefix_fields": ["embedder", "category"],
        "field_path": "embedding",
        "dimension": 768,
    } in infra.tfvars["firestore_vector_indexes"]
    assert any("vector_config" in first(field) for field in vector["fields"])
    for collection in ("kb_chunks", "email_vectors"):
        assert {
            "collection": collection,
            "prefix_fields": ["embedder"],
            "field_path": "embedding",
            "dimension": 768,
        } in infra.tfvars["firestore_vector_indexes"]
    pending_list = {
        "collection": "approvals",
        "fields": [
            {"field_path": "reviewers", "array_config": "CONTAINS"},
            {"field_path": "status", "order": "ASCENDING"},
            {"field_path": "deadline", "order": "ASCENDING"},
        ],
    }
    assert pending_list in infra.tfvars["firestore_composite_indexes"]
    composite = infra.root.resource("google_firestore_index", "composite").body
    fields = first(composite["dynamic"])["fields"]
    content = first(first(fields)["content"])
    assert content["array_config"] == "${fields.value.array_config}"
    assert content["order"] == "${fields.value.order}"
    # null order must not break the for_each key (string templates refuse null)
    assert "coalesce(field.order, field.array_config)" in composite["for_each"]
    field_type = infra.root.variables["firestore_composite_indexes"]["type"]
    assert "optional(string)" in field_type and "array_config" in field_type


def test_secrets_reach_functions_from_secret_manager(infra) -> None:
    # GEMINI_API_KEY joins secret_ids with llm = "gemini_api" (the default).
    assert set(infra.root.variables["secret_ids"]["default"]) == {"GMAIL_CREDENTIALS"}
    assert infra.root.variables["llm"]["default"] == "gemini_api"
    assert infra.root.resource("google_secret_manager_secret", "runtime").body["for_each"] == (
        "${local.runtime_secret_ids}"
    )
    secret = infra.root.resource("google_secret_manager_secret", "runtime").body
    assert "secret_data" not in secret  # values never go through Terraform state
    assert not [
        res for res in infra.root.resources if res.type == "google_secret_manager_secret_version"
    ]
    function = infra.http_module.resource("google_cloudfunctions2_function", "function").body
    assert "secret_environment_variables" in str(
        first(function["service_config"]).get("dynamic", "")
    )
    assert set(infra.root.locals["gmail_secret"]) == {"INBOXFLOW_GMAIL_CREDENTIALS"}
    assert 'for id in ["GEMINI_API_KEY"]' in infra.root.locals["gemini_secret"]


def test_secrets_follow_what_each_function_does(infra) -> None:
    node_secrets = infra.root.locals["node_secrets"].replace(" ", "")
    assert "local.gemini_secret:name=>secretifnode.uses_llm" in node_secrets
    assert "local.gmail_secret:name=>secretifnode.uses_gmail" in node_secrets
    calls = infra.root.modules
    assert calls["node"]["secret_environment_variables"] == "${local.node_secrets[each.key]}"
    for name in ("ingest", "renew_watch"):  # Gmail only, never the Gemini key
        assert calls[name]["secret_environment_variables"] == "${local.gmail_secret}", name
    # approve: Gmail, and SES for escalations (tests/infra/test_ses_secret.py)
    assert calls["approve"]["secret_environment_variables"] == "${local.approve_secrets}"

    # The sizing model agrees: one accessor grant per secret a function reads.
    nodes = infra.tfvars["node_functions"]
    expected = sum(node["uses_llm"] + node["uses_gmail"] for node in nodes.values()) + 3
    assert infra.resource_counts()["google_secret_manager_secret_iam_member"] == expected
    assert any(not node["uses_llm"] for node in nodes.values()), "some node has no LLM"
    assert all(node["uses_gmail"] for node in nodes.values() if node["pauses"])


def test_llm_nodes_refuse_to_start_on_the_offline_model_by_mistake(infra) -> None:
    llm_env = infra.root.locals["node_llm_environment"].replace(" ", "")
    assert "local.llm_environment:name=>value" in llm_env
    assert llm_env.endswith("ifnode.uses_llm}}}")
    assert (
        "local.node_llm_environment[each.key]"
        in infra.root.modules["node"]["environment_variables"]
    )
    assert infra.root.variables["llm"]["default"] == "gemini_api"
    approve_env = infra.root.modules["approve"]["environment_variables"].replace(" ", "")
    assert 'INBOXFLOW_TASKS_VERIFY="true"' in approve_env


def test_resource_counts_follow_node_flags(infra) -> None:
    """The sizing model reacts to the exported flags (so the counts below mean something)."""
    base = infra.resource_counts()
    flipped = dict(infra.tfvars)
    nodes = {key: dict(node) for key, node in infra.tfvars["node_functions"].items()}
    quiet = next(key for key, node in nodes.items() if not node["pauses"])
    nodes[quiet].update(pauses=True, uses_llm=True, uses_gmail=True)
    flipped["node_functions"] = nodes
    other = type(infra)(infra.root, infra.modules_by_dir, flipped).resource_counts()
    assert other["google_cloud_tasks_queue_iam_member"] == (
        base["google_cloud_tasks_queue_iam_member"] + 1
    )
    assert other["google_service_account_iam_member"] == (
        base["google_service_account_iam_member"] + 1
    )
    was = infra.tfvars["node_functions"][quiet]
    added = (not was["uses_llm"]) + (not was["uses_gmail"])
    assert other["google_secret_manager_secret_iam_member"] == (
        base["google_secret_manager_secret_iam_member"] + added
    )


def test_resource_counts(infra) -> None:
    counts = infra.resource_counts()
    nodes = len(infra.tfvars["node_functions"])
    assert counts["google_cloudfunctions2_function"] == nodes + 3
    assert counts["google_pubsub_topic"] == 2 * (nodes + 1) + 1  # + the shared dead-letter topic
    assert counts["google_pubsub_subscription"] == 2 * (nodes + 1) + 1
    assert counts["google_service_account"] == (nodes + 3) + 4  # one per function + 4 callers/build
    # run.invoker: the push identity on each pushed function, Scheduler, and allUsers on approve
    assert counts["google_cloud_run_service_iam_member"] == (nodes + 1) + 1 + 1
    width = max(len(rtype) for rtype in counts)
    report = "\n".join(f"  {rtype:<{width}}  {count}" for rtype, count in sorted(counts.items()))
    print(f"\nresource instances per type ({nodes} nodes, {sum(counts.values())} total):\n{report}")


def _entry_points() -> dict[str, str]:
    """Functions of functions/main.py by name, with their functions_framework decorator."""
    import ast

    tree = ast.parse((INFRA.parent / "functions" / "main.py").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Attribute) and decorator.attr in (
                    "http",
                    "cloud_event",
                ):
                    found[node.name] = decorator.attr
    return found


def test_every_deployed_entry_point_exists_with_its_signature(infra) -> None:
    """A deploy fails on an entry point main.py does not define (or serves the wrong way)."""
    expected = {
        node["entry_point"]: "cloud_event" for node in infra.tfvars["node_functions"].values()
    }
    for service in infra.tfvars["service_functions"].values():
        expected[service["entry_point"]] = "http" if service["trigger"] == "http" else "cloud_event"
    assert expected == {
        "run_node": "cloud_event",
        "ingest": "cloud_event",
        "approve": "http",
        "renew_watch": "http",
    }
    defined = _entry_points()
    missing = {name: kind for name, kind in expected.items() if defined.get(name) != kind}
    assert not missing, f"functions/main.py must define {missing} (functions_framework.<kind>)"

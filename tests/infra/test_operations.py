"""Operating inboxflow: alert policies, log-based metrics, the dashboard, the
budget, and the deploy hardening of issue 15 (API dependencies, dead-letter
grants that follow their subscription, the provider lock file)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.infra.conftest import INFRA, Resource, first, load_hcl

CHANNELS = "${local.alert_channels}"  # alert_email's channel + notification_channels


def _text(value: Any) -> str:
    """An HCL string as Terraform sees it (python-hcl2 keeps the \\" escapes)."""
    return str(value).replace('\\"', '"')


def _filter(policy: Resource, index: int = 0) -> str:
    condition = policy.body["conditions"][index]
    return _text(first(condition["condition_threshold"])["filter"])


def _metric_filter(infra, name: str) -> str:
    return _text(_metrics(infra)[name].body["filter"])


def _policies(infra) -> dict[str, Resource]:
    return {
        res.name: res
        for res in infra.root.resources
        if res.type == "google_monitoring_alert_policy"
    }


def _metrics(infra) -> dict[str, Resource]:
    return {res.name: res for res in infra.root.resources if res.type == "google_logging_metric"}


def _locals_resolved(infra, name: str) -> str:
    """A string local with ``${var.shared_dead_letter_topic}`` filled from the tfvars."""
    value = str(infra.root.locals[name])
    values = infra.variable_values()
    return re.sub(r"\$\{var\.(\w+)\}", lambda m: str(values[m.group(1)]), value)


def _subscriptions(infra) -> tuple[list[str], list[str]]:
    """(push subscriptions, dead-letter pull subscriptions) plan would create."""
    nodes = infra.tfvars["node_functions"].values()
    ingest = infra.tfvars["service_functions"]["ingest"]
    push = [node["subscription"] for node in nodes] + [ingest["subscription"]]
    dead = [f"{node['dead_letter_topic']}-sub" for node in nodes]
    dead += [
        f"{ingest['dead_letter_topic']}-sub",
        f"{infra.tfvars['shared_dead_letter_topic']}-sub",
    ]
    return push, dead


# --- alert policies -----------------------------------------------------------------


def test_notification_channels_are_a_list_of_ids(infra) -> None:
    variable = infra.root.variables["notification_channels"]
    assert variable["type"] == "${list(string)}"
    assert variable["default"] == []
    assert "notificationChannels" in str(variable["validation"])


def test_every_alert_policy_notifies_the_channels_and_says_what_to_do(infra) -> None:
    policies = _policies(infra)
    assert set(policies) == {
        "dead_letters",
        "backlog",
        "function_5xx",
        "watch_renewal",
        "tasks_failures",
        "needs_review",
        "stuck_traces",
        "mailbox_disconnected",
    }
    for name, policy in policies.items():
        assert policy.body["notification_channels"] == CHANNELS, name
        assert policy.body["combiner"] == "OR", name
        doc = first(policy.body["documentation"])
        assert len(doc["content"]) > 80, f"{name}: say what happened and what to do"
        waits = ["${google_project_service.enabled}"]
        if "logging.googleapis.com/user/" in json.dumps(policy.body):
            waits.append("${time_sleep.log_metrics_ready}")  # test_first_deploy.py
        assert policy.body["depends_on"] == waits, name


def test_dead_letter_alert_watches_every_dead_letter_subscription_and_nothing_else(infra) -> None:
    policy = _policies(infra)["dead_letters"]
    text = _filter(policy)
    assert 'metric.type = "pubsub.googleapis.com/subscription/num_undelivered_messages"' in text
    assert 'monitoring.regex.full_match("${local.dead_letter_subscription_pattern}")' in text
    threshold = first(policy.body["conditions"][0]["condition_threshold"])
    assert threshold["comparison"] == "COMPARISON_GT" and threshold["threshold_value"] == 0
    pattern = re.compile(_locals_resolved(infra, "dead_letter_subscription_pattern"))
    push, dead = _subscriptions(infra)
    assert len(dead) == len(infra.tfvars["node_functions"]) + 2
    for name in dead:
        assert pattern.fullmatch(name), f"{name} is not watched"
    for name in push:
        assert not pattern.fullmatch(name), f"{name} is not a dead-letter subscription"


def test_backlog_alert_watches_every_push_subscription(infra) -> None:
    policy = _policies(infra)["backlog"]
    text = _filter(policy)
    assert "pubsub.googleapis.com/subscription/oldest_unacked_message_age" in text
    assert "${local.push_subscription_pattern}" in text
    threshold = first(policy.body["conditions"][0]["condition_threshold"])
    assert threshold["threshold_value"] == "${var.backlog_alert_age_seconds}"
    pattern = re.compile(_locals_resolved(infra, "push_subscription_pattern"))
    push, dead = _subscriptions(infra)
    assert all(pattern.fullmatch(name) for name in push), push
    assert not any(pattern.fullmatch(name) for name in dead)
    # Older than the longest retry backoff, or every retry would page someone.
    default = infra.root.variables["backlog_alert_age_seconds"]["default"]
    backoff = int(infra.root.variables["push_maximum_backoff"]["default"].rstrip("s"))
    assert default > backoff


def test_function_5xx_alert_reads_cloud_run_request_counts(infra) -> None:
    text = _filter(_policies(infra)["function_5xx"])
    assert 'resource.type = "cloud_run_revision"' in text  # gen2 functions are Cloud Run services
    assert 'metric.type = "run.googleapis.com/request_count"' in text
    assert 'metric.labels.response_code_class = "5xx"' in text
    assert 'service_name = starts_with("${local.function_prefix}")' in text
    assert infra.root.locals["function_prefix"] == "inboxflow-"
    names = [node["function_name"] for node in infra.tfvars["node_functions"].values()]
    names += [svc["function_name"] for svc in infra.tfvars["service_functions"].values()]
    assert all(name.startswith("inboxflow-") for name in names)


def test_watch_renewal_alert_covers_the_scheduler_job_and_each_mailbox(infra) -> None:
    policy = _policies(infra)["watch_renewal"]
    job = _metric_filter(infra, "renew_watch_job_failures")
    assert 'resource.type="cloud_scheduler_job"' in job
    assert "${google_cloud_scheduler_job.renew_watch.name}" in job and "severity>=ERROR" in job
    errors = _metric_filter(infra, "watch_renewal_errors")
    assert '${var.service_functions["renew_watch"].function_name}' in errors
    assert "severity>=ERROR" in errors
    filters = [_filter(policy, index) for index in range(len(policy.body["conditions"]))]
    assert filters == [
        'resource.type = "cloud_scheduler_job" AND metric.type = '
        '"logging.googleapis.com/user/${google_logging_metric.renew_watch_job_failures.name}"',
        'resource.type = "cloud_run_revision" AND metric.type = '
        '"logging.googleapis.com/user/${google_logging_metric.watch_renewal_errors.name}"',
    ]
    assert "7 days" in first(policy.body["documentation"])["content"]


def test_tasks_failure_alert_reads_non_ok_attempts_on_the_approvals_queue(infra) -> None:
    text = _filter(_policies(infra)["tasks_failures"])
    assert "cloudtasks.googleapis.com/queue/task_attempt_count" in text
    assert "${google_cloud_tasks_queue.approvals.name}" in text
    assert 'metric.labels.response_code != "ok"' in text


def test_needs_review_metric_follows_the_runtime_log_contract(infra) -> None:
    metric = _metrics(infra)["needs_review"].body
    assert 'jsonPayload.outcome="needs_review"' in _metric_filter(infra, "needs_review")
    assert metric["label_extractors"] == {
        "graph": "EXTRACT(jsonPayload.graph)",
        "node": "EXTRACT(jsonPayload.node)",
    }
    descriptor = first(metric["metric_descriptor"])
    assert descriptor["metric_kind"] == "DELTA" and descriptor["value_type"] == "INT64"
    assert [first(label)["key"] for label in descriptor["labels"]] == ["graph", "node"]
    policy = _policies(infra)["needs_review"]
    aggregation = first(first(policy.body["conditions"][0]["condition_threshold"])["aggregations"])
    assert aggregation["group_by_fields"] == ["metric.labels.graph", "metric.labels.node"]
    text = _filter(_policies(infra)["needs_review"])
    assert "logging.googleapis.com/user/${google_logging_metric.needs_review.name}" in text


def test_log_based_metrics_for_failures_watch_expiry_and_tokens(infra) -> None:
    metrics = _metrics(infra)
    assert set(metrics) == {
        "traces_started",
        "needs_review",
        "function_errors",
        "renew_watch_job_failures",
        "watch_renewal_errors",
        "llm_tokens",
        "stuck_traces",
    }
    for name, metric in metrics.items():
        assert metric.body["name"].startswith("inboxflow/"), name
        assert metric.body["depends_on"] == ["${google_project_service.enabled}"], name
    assert "severity>=ERROR" in _metric_filter(infra, "function_errors")
    tokens = metrics["llm_tokens"].body
    assert tokens["value_extractor"] == "EXTRACT(jsonPayload.llm_tokens)"
    assert first(tokens["metric_descriptor"])["value_type"] == "DISTRIBUTION"
    assert "exponential_buckets" in first(tokens["bucket_options"])


# --- dashboard -------------------------------------------------------------------------


def test_dashboard_shows_emails_hops_approvals_and_tokens(infra) -> None:
    tiles = infra.root.locals["dashboard_tiles"]
    titles = " | ".join(tile["title"] for tile in tiles)
    for needle in ("Emails started per minute", "Hop latency", "Waiting approvals", "LLM tokens"):
        assert needle in titles, needle
    by_title = {tile["title"]: tile["filter"] for tile in tiles}
    emails = next(f for t, f in by_title.items() if t.startswith("Emails"))
    # Counted from the runtime's start line, not from publishes to entry topics: a graph may
    # route back to its entry node (the planner), which would count one email many times.
    assert "google_logging_metric.traces_started.name" in emails
    started = infra.root.resource("google_logging_metric", "traces_started").body
    assert 'jsonPayload.message=\\"trace started\\"' in started["filter"], started["filter"]
    assert started["label_extractors"]["graph"] == "EXTRACT(jsonPayload.graph)"
    approvals = next(f for t, f in by_title.items() if t.startswith("Waiting approvals"))
    assert "cloudtasks.googleapis.com/queue/depth" in approvals
    tokens = next(f for t, f in by_title.items() if t.startswith("LLM tokens"))
    assert "google_logging_metric.llm_tokens.name" in tokens
    for tile in tiles:
        assert tile["aggregation"]["alignmentPeriod"].endswith("s")
    dashboard = infra.root.resource("google_monitoring_dashboard", "operations").body
    assert "local.dashboard_tiles" in dashboard["dashboard_json"]
    assert "jsonencode(" in dashboard["dashboard_json"]


# --- budget -----------------------------------------------------------------------------


def test_budget_is_optional_and_alerts_the_channels(infra) -> None:
    budget = infra.root.resource("google_billing_budget", "monthly").body
    assert budget["count"] == '${var.billing_account == "" ? 0 : 1}'
    assert infra.root.variables["billing_account"]["default"] == ""
    assert budget["billing_account"] == "${var.billing_account}"
    thresholds = [first(rule) for rule in budget["threshold_rules"]]
    assert [rule["threshold_percent"] for rule in thresholds] == [0.5, 0.9, 1.0, 1.0]
    assert thresholds[-1]["spend_basis"] == "FORECASTED_SPEND"
    rule = first(budget["all_updates_rule"])
    assert "local.alert_channels" in rule["monitoring_notification_channels"]
    assert "data.google_project.this.number" in str(first(budget["budget_filter"])["projects"])
    assert budget["depends_on"] == ["${google_project_service.enabled}"]


# --- deploy hardening -----------------------------------------------------------------


def test_dead_letter_subscriber_grant_is_recreated_with_its_subscription(infra) -> None:
    grant = infra.node_module.resource(
        "google_pubsub_subscription_iam_member", "dead_letter_subscriber"
    ).body
    assert first(grant["lifecycle"])["replace_triggered_by"] == [
        "${google_pubsub_subscription.push}"
    ]
    assert grant["subscription"] == "${google_pubsub_subscription.push.name}"
    publisher = infra.root.resource("google_pubsub_topic_iam_member", "dead_letter_publisher").body
    assert first(publisher["lifecycle"])["replace_triggered_by"] == [
        "${google_pubsub_topic.dead_letter[each.key]}"
    ]


# Resource type prefix -> the API it needs (monitoring.tf, budget.tf and the rest).
API_OF = {
    "google_monitoring_": "monitoring.googleapis.com",
    "google_logging_": "logging.googleapis.com",
    "google_billing_budget": "billingbudgets.googleapis.com",
    "google_cloud_tasks_": "cloudtasks.googleapis.com",
    "google_cloud_scheduler_": "cloudscheduler.googleapis.com",
    "google_pubsub_": "pubsub.googleapis.com",
    "google_firestore_": "firestore.googleapis.com",
    "google_secret_manager_": "secretmanager.googleapis.com",
    "google_storage_": "storage.googleapis.com",
    "google_service_account": "iam.googleapis.com",
    "google_cloudfunctions2_": "cloudfunctions.googleapis.com",
    "google_cloud_run_": "run.googleapis.com",
}
REFERENCE = re.compile(r"(?<![\w.])(module\.\w+|google_\w+\.\w+)")


def _references(body: Any) -> set[str]:
    text = json.dumps({k: v for k, v in body.items() if k != "depends_on"})
    return {ref for ref in REFERENCE.findall(text)}


def test_every_api_the_stack_uses_is_enabled_by_it(infra) -> None:
    apis = set(infra.root.locals["apis"])
    types = {
        res.type for tf in (infra.root, *infra.modules_by_dir.values()) for res in tf.resources
    }
    for rtype in types:
        needed = [api for prefix, api in API_OF.items() if rtype.startswith(prefix)]
        assert all(api in apis for api in needed), f"{rtype} needs {needed}"
    assert {"cloudtrace.googleapis.com", "cloudresourcemanager.googleapis.com"} <= apis


def test_every_resource_waits_for_its_api(infra) -> None:
    """Each resource depends on google_project_service.enabled, directly or through
    what it references (a topic's subscription waits because the topic does)."""
    nodes: dict[str, dict[str, Any]] = {
        f"{res.type}.{res.name}": res.body for res in infra.root.resources
    }
    nodes.update({f"module.{name}": call for name, call in infra.root.modules.items()})
    grounded = {"google_project_service.enabled"}
    changed = True
    while changed:
        changed = False
        for address, body in nodes.items():
            if address in grounded:
                continue
            direct = "${google_project_service.enabled}" in body.get("depends_on", [])
            if direct or _references(body) & grounded:
                grounded.add(address)
                changed = True
    waiting = sorted(set(nodes) - grounded)
    assert not waiting, f"add depends_on = [google_project_service.enabled] to: {waiting}"


def test_the_api_check_catches_a_resource_that_does_not_wait(infra) -> None:
    account = infra.root.resource("google_service_account", "pubsub_push")
    assert account.body["depends_on"] == ["${google_project_service.enabled}"]
    loose = {k: v for k, v in account.body.items() if k != "depends_on"}
    assert not _references(loose), "a bare service account references nothing else"


def test_provider_versions_are_locked_for_the_stack_and_the_bootstrap() -> None:
    for directory in (INFRA, INFRA / "bootstrap"):
        lock = (directory / ".terraform.lock.hcl").read_text(encoding="utf-8")
        versions = (directory / "versions.tf").read_text(encoding="utf-8")
        required = set(re.findall(r'source\s*=\s*"hashicorp/([\w-]+)"', versions))
        locked = dict(
            re.findall(
                r'provider "registry\.terraform\.io/hashicorp/([\w-]+)" \{\s*version\s*=\s*"([\d.]+)"',
                lock,
            )
        )
        assert required and set(locked) == required, (directory.name, locked, required)
        for provider, version in locked.items():
            if provider == "time":  # time_sleep (test_first_deploy.py)
                assert version == "0.13.1", version
                continue
            major = int(version.split(".")[0])
            assert major == 7, f"{provider} {version} is outside >= 7.0.0, < 8.0.0"


@pytest.mark.parametrize("directory", ["infra", "infra/bootstrap"])
def test_lock_files_are_not_ignored(directory: str) -> None:
    ignore = (INFRA.parent / ".gitignore").read_text(encoding="utf-8")
    assert ".terraform.lock.hcl" not in ignore, directory


TERRAFORM_LOCK_HEADER = '# This file is maintained automatically by "terraform init".'
HASH = re.compile(r"h1:[A-Za-z0-9+/]{43}=|zh:[0-9a-f]{64}")


@pytest.mark.parametrize("directory", ["infra", "infra/bootstrap"])
def test_lock_files_carry_only_hashes_terraform_recorded(directory: str) -> None:
    """A hash Terraform did not record is a guess, and a wrong one fails every
    `terraform init` (read-only or not): hand-written lock files pin versions
    and carry no hashes until `terraform providers lock` writes the file."""
    path = INFRA.parent / directory / ".terraform.lock.hcl"
    text = path.read_text(encoding="utf-8")
    lock = load_hcl(path)
    providers = {name: body for block in lock["provider"] for name, body in block.items()}
    assert providers, directory
    recorded = {name: body.get("hashes", []) for name, body in providers.items()}
    if text.startswith(TERRAFORM_LOCK_HEADER):
        for name, hashes in recorded.items():
            assert hashes and all(HASH.fullmatch(h) for h in hashes), (name, hashes)
    else:
        assert "NO checksums are recorded" in text, directory
        assert not any(recorded.values()), f"hand-written hashes in {directory}: {recorded}"
        assert not HASH.search(text), directory  # not even outside a hashes list

"""What the watch-renewal and approval-deadline alerts select, evaluated on
records shaped as Google writes them, not only how their filters are spelled.

The shapes, and where they come from:

- ``cloudtasks.googleapis.com/queue/task_attempt_count`` on a
  ``cloud_tasks_queue`` (labels ``queue_id``...) carries ``response_code``,
  the attempt's canonical code name in lower case: Google's Cloud Tasks
  dashboard sample (GoogleCloudPlatform/monitoring-dashboard-samples,
  dashboards/google-cloud-tasks/cloud-tasks.json) charts executed tasks as
  ``response_code="ok"`` and failed ones as ``"unavailable"``.
- Cloud Scheduler logs each attempt on the ``cloud_scheduler_job`` resource
  (label ``job_id``) in ``cloudscheduler.googleapis.com/executions``: an
  ``AttemptStarted`` at INFO, then an ``AttemptFinished`` at INFO when it
  succeeded or at ERROR, with its status, when it failed (Google's
  exposure-notifications-verification-server pages on ERROR entries of
  ``cloud_scheduler_job``; public log-based metrics filter AttemptFinished
  at ERROR). Audit logs (``cloudaudit.googleapis.com``) of a failed
  UpdateJob are ERRORs too and may name the job: they must not count.
"""

from __future__ import annotations

import re

import pytest

from tests.infra.conftest import first
from tests.infra.filters import UnsupportedFilter, clauses, matches

TASK_ATTEMPTS = "cloudtasks.googleapis.com/queue/task_attempt_count"


def _resolve(infra, text: str) -> str:
    """The filter with ``${TYPE.NAME.name}`` and ``${var.X}`` filled in as plan would."""

    def resource_name(found: re.Match[str]) -> str:
        return str(infra.root.resource(found[1], found[2]).body["name"])

    text = re.sub(r"\$\{(google_[a-z_]+)\.([a-z_]+)\.name\}", resource_name, text)
    values = infra.variable_values()
    text = re.sub(
        r'\$\{var\.(\w+)\["(\w+)"\]\.(\w+)\}',
        lambda found: str(values[found[1]][found[2]][found[3]]),
        text,
    )
    text = re.sub(r"\$\{var\.(\w+)\}", lambda found: str(values[found[1]]), text)
    assert "${" not in text, f"teach _resolve this reference: {text}"
    return text.replace('\\"', '"')


def _policy_filter(infra, name: str) -> str:
    policy = infra.root.resource("google_monitoring_alert_policy", name).body
    return _resolve(infra, first(policy["conditions"][0]["condition_threshold"])["filter"])


def _metric_filter(infra, name: str) -> str:
    return _resolve(infra, infra.root.resource("google_logging_metric", name).body["filter"])


def _attempt(queue: str, code: str, metric: str = TASK_ATTEMPTS) -> dict[str, str]:
    return {
        "resource.type": "cloud_tasks_queue",
        "resource.labels.queue_id": queue,
        "metric.type": metric,
        "metric.labels.response_code": code,
    }


def _scheduler_entry(job: str, severity: str, log: str, payload: str) -> dict[str, str]:
    return {
        "resource.type": "cloud_scheduler_job",
        "resource.labels.job_id": job,
        "severity": severity,
        "logName": f"projects/p/logs/{log}",
        "jsonPayload.@type": payload,
    }


def test_tasks_alert_fires_on_failed_attempts_of_the_approvals_queue_only(infra) -> None:
    text = _policy_filter(infra, "tasks_failures")
    queue = infra.variable_values()["tasks_queue"]
    assert queue == "inboxflow-approvals"
    # The queue the approval function enqueues its deadlines on is the one watched.
    env = infra.root.locals["tasks_environment"]["INBOXFLOW_TASKS_QUEUE"]
    assert env == "${google_cloud_tasks_queue.approvals.name}"

    for failed in ("unavailable", "deadline_exceeded", "permission_denied", "not_found"):
        assert matches(text, _attempt(queue, failed)), failed
    assert not matches(text, _attempt(queue, "ok"))  # a delivered deadline is no incident
    assert not matches(text, _attempt("another-queue", "unavailable"))
    create_failed = _attempt(queue, "unavailable", "cloudtasks.googleapis.com/api/request_count")
    assert not matches(text, create_failed)  # enqueueing is the caller's error, not dispatch


def test_renewal_metric_counts_failed_attempts_of_the_renewal_job_only(infra) -> None:
    text = _metric_filter(infra, "renew_watch_job_failures")
    job = infra.root.resource("google_cloud_scheduler_job", "renew_watch").body["name"]
    executions = "cloudscheduler.googleapis.com%2Fexecutions"
    finished = "type.googleapis.com/google.cloud.scheduler.logging.AttemptFinished"
    started = "type.googleapis.com/google.cloud.scheduler.logging.AttemptStarted"

    assert matches(text, _scheduler_entry(job, "ERROR", executions, finished))
    assert not matches(text, _scheduler_entry(job, "INFO", executions, finished))
    assert not matches(text, _scheduler_entry(job, "INFO", executions, started))
    assert not matches(text, _scheduler_entry("some-other-job", "ERROR", executions, finished))
    audit = _scheduler_entry(
        job, "ERROR", "cloudaudit.googleapis.com%2Factivity", "type.googleapis.com/x.AuditLog"
    )
    assert not matches(text, audit)  # a failed UpdateJob is a deploy problem, not a renewal


def test_the_renewal_alert_reads_that_metric_on_the_scheduler_resource(infra) -> None:
    policy = infra.root.resource("google_monitoring_alert_policy", "watch_renewal").body
    text = _resolve(infra, first(policy["conditions"][0]["condition_threshold"])["filter"])
    series = {
        "resource.type": "cloud_scheduler_job",
        "metric.type": "logging.googleapis.com/user/inboxflow/renew_watch_job_failures",
    }
    assert matches(text, series)


@pytest.mark.parametrize(
    ("text", "record", "expected"),
    [
        ('a = "x" AND b != "y"', {"a": "x", "b": "z"}, True),
        ('a = "x" AND b != "y"', {"a": "x", "b": "y"}, False),
        ("severity>=ERROR", {"severity": "CRITICAL"}, True),
        ("severity>=ERROR", {"severity": "WARNING"}, False),
        ('NOT logName:"audit"', {"logName": "logs/cloudaudit"}, False),
        ('NOT logName:"audit"', {"logName": "logs/executions"}, True),
        ('a = "x"', {}, False),
    ],
)
def test_the_evaluator_reads_its_subset(text, record, expected) -> None:
    assert matches(text, record) is expected


@pytest.mark.parametrize(
    "text",
    ['a = starts_with("x")', 'a = "x" OR b = "y"', "a = x", 'a > "x"'],
)
def test_the_evaluator_refuses_what_it_cannot_read(text) -> None:
    with pytest.raises(UnsupportedFilter):
        matches(text, {"a": "x", "b": "y"})


def test_clauses_keep_the_operator_and_negation() -> None:
    assert clauses('NOT logName:"a" AND severity>=ERROR') == [
        (True, "logName", ":", "a"),
        (False, "severity", ">=", "ERROR"),
    ]


def test_the_stuck_traces_metric_counts_the_sweeps_lines_and_its_alert_reads_it(infra) -> None:
    text = _metric_filter(infra, "stuck_traces")
    service = infra.variable_values()["service_functions"]["renew_watch"]["function_name"]
    line = {
        "resource.type": "cloud_run_revision",
        "resource.labels.service_name": service,
        "jsonPayload.message": "trace stuck",  # inboxflow.entry.stuck_sweep's line
    }
    assert matches(text, line)
    assert not matches(text, {**line, "resource.labels.service_name": "inboxflow-ingest"})
    assert not matches(text, {**line, "jsonPayload.message": "trace started"})
    series = {
        "resource.type": "cloud_run_revision",
        "metric.type": "logging.googleapis.com/user/inboxflow/stuck_traces",
    }
    assert matches(_policy_filter(infra, "stuck_traces"), series)
    job = infra.root.resource("google_cloud_scheduler_job", "stuck_traces").body
    uri = first(job["http_target"])["uri"]
    assert uri == "${module.renew_watch.function_uri}/stuck-traces"

"""Issue 28: the first deploy works on the first try, in an organization too.

The waits (IAM propagation, new log-based metrics), the variables an
organization chooses with (approval access, the Gmail push grant, keyless
delegation, a custom approval URL, Firestore next to the functions), the
build's preflight and approval-access steps, `make deploy` and the
bootstrap's 2nd-gen repository connection.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import INFRA, TerraformDir, first

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")

REPO = INFRA.parent
CLOUDBUILD = REPO / "cloudbuild.yaml"


def _with(infra, **values: Any):
    """The same configuration with some root variables set (as a tfvars file would)."""
    return type(infra)(infra.root, infra.modules_by_dir, {**infra.tfvars, **values})


def _step(step_id: str) -> dict[str, Any]:
    build = yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))
    return next(step for step in build["steps"] if step["id"] == step_id)


# --- waits ---------------------------------------------------------------------------


def test_each_function_waits_for_its_grants_to_propagate(infra) -> None:
    module = infra.http_module
    wait = module.resource("time_sleep", "iam_propagation").body
    assert wait["create_duration"] == "${var.iam_propagation_wait}"
    # The wait runs again when the grants change, not on every apply; it
    # comes after the grants (issue 38 pins what its triggers may read).
    assert set(wait["depends_on"]) == {
        "${google_secret_manager_secret_iam_member.function}",
        "${google_project_iam_member.function}",
    }
    function = module.resource("google_cloudfunctions2_function", "function").body
    assert function["depends_on"] == ["${time_sleep.iam_propagation}"]
    # IAM: typically 2 minutes (cloud.google.com/iam/docs/access-change-propagation).
    assert infra.root.variables["iam_propagation_wait"]["default"] == "120s"
    for name, call in infra.root.modules.items():
        assert call["iam_propagation_wait"] == "${var.iam_propagation_wait}", name
        # ... and the build account's project roles come before that wait.
        assert "${google_project_iam_member.build}" in call["depends_on"], name
    node_call = infra.node_module.modules["function"]
    assert node_call["iam_propagation_wait"] == "${var.iam_propagation_wait}"


def test_policies_on_log_based_metrics_wait_for_the_metrics(infra) -> None:
    wait = infra.root.resource("time_sleep", "log_metrics_ready").body
    assert wait["create_duration"] == "${var.log_metric_wait}"
    assert infra.root.variables["log_metric_wait"]["default"] == "10m"
    metrics = {res.name for res in infra.root.resources if res.type == "google_logging_metric"}
    assert metrics, "no log-based metrics"
    for name in metrics:  # every metric is in the triggers: a new one waits again
        assert f"google_logging_metric.{name}.name" in wait["triggers"]["metrics"], name
    readers = [
        res
        for res in infra.root.resources
        if res.type == "google_monitoring_alert_policy"
        and "logging.googleapis.com/user/" in str(res.body)
    ]
    assert {res.name for res in readers} == {"watch_renewal", "needs_review", "stuck_traces"}
    # The dashboard's tiles (locals) chart log-based metrics too.
    assert "logging.googleapis.com/user/" in str(infra.root.locals["dashboard_tiles"])
    readers.append(infra.root.resource("google_monitoring_dashboard", "operations"))
    for res in readers:
        assert "${time_sleep.log_metrics_ready}" in res.body["depends_on"], res.address


def test_the_time_provider_is_pinned_where_time_sleep_is_used() -> None:
    lock = (INFRA / ".terraform.lock.hcl").read_text(encoding="utf-8")
    assert re.search(r'hashicorp/time" \{\s*version\s*=\s*"0\.13\.1"', lock)
    for directory in (INFRA, INFRA / "modules" / "http_function"):
        versions = (directory / "versions.tf").read_text(encoding="utf-8")
        assert re.search(r'source\s*=\s*"hashicorp/time"\s*\n\s*version\s*=\s*">= 0\.13', versions)


# --- approval access, Gmail push, custom URL -------------------------------------


def test_approval_access_chooses_between_all_users_and_no_grant(infra) -> None:
    variable = infra.root.variables["approval_access"]
    assert variable["default"] == "all_users"
    for value in ("all_users", "invoker_check_disabled", "none"):
        assert f'"{value}"' in str(first(variable["validation"])["condition"])
    grants = {
        value: _with(infra, approval_access=value).resource_counts()[
            "google_cloud_run_service_iam_member"
        ]
        for value in ("all_users", "invoker_check_disabled", "none")
    }
    # all_users: allUsers; none: the tasks identity (issue 38); invoker_check_disabled: neither.
    assert grants["all_users"] == grants["none"] == grants["invoker_check_disabled"] + 1
    output = infra.root.outputs["approval_invoker_iam_check"]["value"]
    assert output == '${var.approval_access == "invoker_check_disabled" ? "disabled" : "enabled"}'
    assert infra.root.outputs["approval_service"]["value"] == "${module.approve.service_name}"


def _approval_access_step(tmp_path: Path, check: str) -> tuple[int, str]:
    """Run terraform-output's files through approval-access with a recording gcloud."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "approval_invoker_iam_check").write_text(check, encoding="utf-8")
    (workspace / "approval_service").write_text(
        "projects/demo/locations/europe-west1/services/inboxflow-approve", encoding="utf-8"
    )
    calls = tmp_path / "calls.log"
    (tmp_path / "gcloud").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n', encoding="utf-8")
    (tmp_path / "gcloud").chmod(0o755)
    step = _step("approval-access")
    script = step["args"][-1].replace("$$", "$").replace("/workspace/", f"{workspace}/")
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "PROJECT": "demo", "REGION": "europe-west1"}
    done = subprocess.run(
        ["bash", "-ceu", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    return done.returncode, calls.read_text(encoding="utf-8") if calls.exists() else ""


def test_the_build_disables_the_invoker_check_only_when_asked(tmp_path: Path) -> None:
    rc, calls = _approval_access_step(tmp_path / "off", "disabled")
    assert rc == 0
    assert calls.split() == [
        "run",
        "services",
        "update",
        "inboxflow-approve",
        "--project=demo",
        "--region=europe-west1",
        "--no-invoker-iam-check",
    ]
    rc, calls = _approval_access_step(tmp_path / "on", "enabled")
    assert rc == 0 and calls == ""
    output = _step("terraform-output")["args"][-1]
    assert "terraform output -raw approval_invoker_iam_check" in output
    assert "terraform output -raw approval_service" in output


def test_the_approval_steps_run_after_the_apply() -> None:
    build = yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))
    ids = [step["id"] for step in build["steps"]]
    assert (
        ids.index("terraform-apply") < ids.index("terraform-output") < ids.index("approval-access")
    )


def test_the_gmail_push_grant_can_wait_for_an_organization_exception(infra) -> None:
    grant = infra.root.resource("google_pubsub_topic_iam_member", "gmail_push_publisher").body
    assert grant["count"] == "${var.gmail_push_grant ? 1 : 0}"
    assert infra.root.variables["gmail_push_grant"]["default"] is True
    on = infra.resource_counts()["google_pubsub_topic_iam_member"]
    off = _with(infra, gmail_push_grant=False).resource_counts()["google_pubsub_topic_iam_member"]
    assert on == off + 1


def _hcl_regex(variable: dict[str, Any]) -> re.Pattern[str]:
    condition = str(first(variable["validation"])["condition"])
    pattern = re.search(r'regex\("(.*)", var\.', condition).group(1)  # type: ignore[union-attr]
    return re.compile(pattern.replace("\\\\", "\\"))


def test_approval_base_url_feeds_the_links_and_the_tasks_audience(infra) -> None:
    assert infra.root.variables["approval_base_url"]["default"] == ""
    pattern = _hcl_regex(infra.root.variables["approval_base_url"])
    for good in ("https://approvals.example.com", "https://example.com/inboxflow/approve"):
        assert pattern.search(good), good
    for bad in ("http://approvals.example.com", "https://a.example.com/?t=1", "approvals.com"):
        assert not pattern.search(bad), bad
    env = infra.root.locals["tasks_environment"]
    assert env["INBOXFLOW_APPROVAL_URL"] == "${local.approval_url}"
    # The tasks call, and are minted for, approval_url unless approval_access = "none".
    assert env["INBOXFLOW_TASKS_URL"] == env["INBOXFLOW_TASKS_AUDIENCE"] == "${local.tasks_url}"
    assert infra.root.locals["tasks_url"] == (
        '${var.approval_access == "none" ? local.approve_run_url : local.approval_url}'
    )
    assert infra.root.outputs["approval_url"]["value"] == "${local.approval_url}"


def test_firestore_follows_the_region_unless_set(infra) -> None:
    assert infra.root.variables["firestore_location"]["default"] == ""
    database = infra.root.resource("google_firestore_database", "default").body
    assert database["location_id"] == "${local.firestore_location}"
    derived = str(infra.root.locals["firestore_location"])
    assert 'us = "nam5"' in derived and 'europe = "eur3"' in derived
    assert "local.region_prefix" in derived and "var.firestore_location" in derived
    checks = infra.root.files["firestore.tf"]["check"]
    near = first(checks[0]["firestore_near_functions"]["assert"])
    assert near["condition"] == "${local.firestore_near_functions}"
    # The dev example deploys anywhere: it leaves the location to the region.
    dev = (INFRA / "envs" / "dev.tfvars").read_text(encoding="utf-8")
    assert not re.search(r"^\s*firestore_location\s*=", dev, re.M)


# --- keyless domain-wide delegation ---------------------------------------------------


def test_keyless_delegation_grants_token_creator_to_the_gmail_functions_only(infra) -> None:
    assert infra.root.variables["gmail_keyless_delegation"]["default"] is False
    off = infra.resource_counts()
    on = _with(infra, gmail_keyless_delegation=True).resource_counts()
    gmail_nodes = sum(1 for node in infra.tfvars["node_functions"].values() if node["uses_gmail"])
    assert on["google_service_account"] == off["google_service_account"] + 1
    assert on["google_service_account_iam_member"] == (
        off["google_service_account_iam_member"] + gmail_nodes + 3  # ingest, approve, renew_watch
    )
    grant = infra.root.resource("google_service_account_iam_member", "gmail_delegate_signers")
    assert grant.body["role"] == "roles/iam.serviceAccountTokenCreator"
    assert grant.body["service_account_id"] == "${google_service_account.gmail_delegate[0].name}"
    signers = str(infra.root.locals["gmail_delegation_signers"])
    assert signers == "${var.gmail_keyless_delegation ? local.gmail_functions : {}}"
    assert "if node.uses_gmail" in str(infra.root.locals["gmail_functions"])
    assert "iamcredentials.googleapis.com" in infra.root.locals["apis"]  # signJwt
    assert set(infra.root.outputs) >= {
        "gmail_delegation_service_account",
        "gmail_delegation_client_id",
    }


# --- preflight --------------------------------------------------------------------------


def _preflight(tmp_path: Path, tfvars: str | None, labelled: str, versioned: str):
    from tests.infra.test_cloudbuild import _preflight as run

    tmp_path.mkdir(parents=True, exist_ok=True)
    build = yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))
    return run(
        build,
        tmp_path,
        identity="ibx-deployer@demo-project.iam.gserviceaccount.com",
        secrets=labelled,
        versioned=versioned,
        tfvars=tfvars,
    )


BOTH = "GEMINI_API_KEY GMAIL_CREDENTIALS"
ALERTS = 'alert_email = "oncall@example.com"\n'  # required since issue 38


def test_preflight_refuses_a_project_without_any_secret(tmp_path: Path) -> None:
    done = _preflight(tmp_path, 'environment = "dev"\n' + ALERTS, labelled="", versioned="")
    assert done.returncode != 0
    assert "without an enabled version: GEMINI_API_KEY GMAIL_CREDENTIALS" in done.stderr


def test_preflight_requires_ses_credentials_when_ses_is_enabled(tmp_path: Path) -> None:
    on = _preflight(tmp_path / "on", "ses_enabled = true\n" + ALERTS, labelled=BOTH, versioned=BOTH)
    assert on.returncode != 0 and "INBOXFLOW_SES_CREDENTIALS" in on.stderr
    off = _preflight(
        tmp_path / "off", "ses_enabled = false\n" + ALERTS, labelled=BOTH, versioned=BOTH
    )
    assert off.returncode == 0, off.stderr


def test_preflight_requires_the_secret_ids_the_env_file_lists(tmp_path: Path) -> None:
    tfvars = 'secret_ids = ["GEMINI_API_KEY", "GMAIL_CREDENTIALS", "QUOTING_API_KEY"]\n' + ALERTS
    done = _preflight(tmp_path, tfvars, labelled=BOTH, versioned=BOTH)
    assert done.returncode != 0
    assert "without an enabled version: QUOTING_API_KEY" in done.stderr


def test_preflight_refuses_an_environment_without_its_tfvars(tmp_path: Path) -> None:
    build = yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))
    from tests.infra.test_cloudbuild import _preflight as run

    done = run(
        build,
        tmp_path,
        identity="ibx-deployer@demo-project.iam.gserviceaccount.com",
        env="staging-eu",
        versioned=BOTH,
    )
    assert done.returncode != 0 and "no infra/envs/staging-eu.tfvars" in done.stderr


# --- make deploy, build timeout, bootstrap ------------------------------------------------


def _make_deploy(tmp_path: Path, *assignments: str) -> tuple[subprocess.CompletedProcess, str]:
    calls = tmp_path / "gcloud.log"
    (tmp_path / "gcloud").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n', encoding="utf-8")
    (tmp_path / "gcloud").chmod(0o755)
    done = subprocess.run(
        ["make", "--no-print-directory", "deploy", *assignments],
        cwd=REPO,
        env={"PATH": f"{tmp_path}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, calls.read_text(encoding="utf-8") if calls.exists() else ""


def test_make_deploy_names_project_region_state_and_staging(tmp_path: Path) -> None:
    done, calls = _make_deploy(tmp_path, "PROJECT=acme-dev", "REGION=europe-west1", "ENV=dev")
    assert done.returncode == 0, done.stderr
    args = calls.split()
    assert args[:2] == ["builds", "submit"]
    for expected in (
        "--project=acme-dev",
        "--region=europe-west1",
        "--gcs-source-staging-dir=gs://acme-dev-build-staging/source",
        "--service-account=projects/acme-dev/serviceAccounts/"
        "ibx-deployer@acme-dev.iam.gserviceaccount.com",
        "--substitutions=_PROJECT_ID=acme-dev,_REGION=europe-west1,_ENV=dev,"
        "_TF_STATE_BUCKET=acme-dev-tfstate",
    ):
        assert expected in args, expected


@pytest.mark.parametrize("missing", ["PROJECT", "REGION", "ENV"])
def test_make_deploy_refuses_without_project_region_or_env(tmp_path: Path, missing: str) -> None:
    given = {"PROJECT": "acme-dev", "REGION": "europe-west1", "ENV": "dev"}
    del given[missing]
    done, calls = _make_deploy(tmp_path, *(f"{k}={v}" for k, v in given.items()))
    assert done.returncode != 0 and calls == ""
    assert "make deploy needs PROJECT, REGION and ENV" in done.stderr


def test_the_build_has_time_for_the_tests_and_every_function() -> None:
    build = yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))
    assert int(build["timeout"].rstrip("s")) >= 7200


@pytest.fixture(scope="module")
def bootstrap() -> TerraformDir:
    return TerraformDir.load(INFRA / "bootstrap", "bootstrap")


def test_triggers_use_a_2nd_gen_repository_in_the_region(bootstrap: TerraformDir) -> None:
    repository = bootstrap.resource("google_cloudbuildv2_repository", "app").body
    assert repository["location"] == "${var.region}"
    assert repository["parent_connection"] == "${var.github_connection}"
    assert repository["remote_uri"] == (
        "https://github.com/${var.github_owner}/${var.github_repository}.git"
    )
    for name in ("deploy", "deploy_prod"):
        trigger = bootstrap.resource("google_cloudbuild_trigger", name).body
        assert trigger["location"] == "${var.region}", name
        assert "github" not in trigger, f"{name}: the 1st-gen global GitHub connection"
        event = first(trigger["repository_event_config"])
        assert event["repository"] == "${google_cloudbuildv2_repository.app.id}", name
    assert "github_connection" in bootstrap.variables


def test_the_bootstrap_creates_a_staging_bucket_in_the_region(bootstrap: TerraformDir) -> None:
    bucket = bootstrap.resource("google_storage_bucket", "build_staging").body
    assert bucket["name"] == "${var.project_id}-build-staging"
    assert bucket["location"] == "${var.region}"
    assert bucket["uniform_bucket_level_access"] is True
    assert bucket["public_access_prevention"] == "enforced"
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "gs://$(PROJECT)-build-staging/source" in makefile

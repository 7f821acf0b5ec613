"""infra/bootstrap: the APIs Terraform needs first, the deployer service account
(listed roles, never owner/editor, a conditioned Project IAM Admin) and the
Cloud Build triggers (prod only after a manual approval)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import INFRA, TerraformDir, first

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")

CLOUDBUILD = INFRA.parent / "cloudbuild.yaml"
DEPLOYER = "${google_service_account.deployer.member}"

# Every role the deployer holds, and why; adding one is a reviewed change.
DEPLOYER_ROLES = {
    "roles/cloudfunctions.developer",
    "roles/run.admin",
    "roles/pubsub.admin",
    "roles/datastore.owner",
    "roles/cloudtasks.admin",
    "roles/cloudscheduler.admin",
    "roles/secretmanager.admin",
    "roles/storage.admin",
    "roles/serviceusage.serviceUsageAdmin",
    "roles/monitoring.alertPolicyEditor",
    "roles/monitoring.dashboardEditor",
    "roles/monitoring.notificationChannelEditor",  # the alert_email channel (issue 38)
    "roles/artifactregistry.admin",  # the function images' repository, its cleanup policy
    "roles/logging.configWriter",
    "roles/logging.logWriter",
    "roles/iam.serviceAccountAdmin",
    "roles/iam.serviceAccountUser",
    "roles/resourcemanager.projectIamAdmin",  # conditioned, see below
}


@pytest.fixture(scope="module")
def bootstrap() -> TerraformDir:
    return TerraformDir.load(INFRA / "bootstrap", "bootstrap")


def _deployer_grants(bootstrap: TerraformDir) -> dict[str, dict[str, Any]]:
    """role -> the google_project_iam_member body that grants it to the deployer."""
    grants: dict[str, dict[str, Any]] = {}
    locals_ = bootstrap.locals
    for res in bootstrap.resources:
        if res.type != "google_project_iam_member" or res.body["member"] != DEPLOYER:
            continue
        each = re.fullmatch(r"\$\{toset\(local\.(\w+)\)\}", str(res.body.get("for_each", "")))
        roles = locals_[each.group(1)] if each else [res.body["role"]]
        for role in roles:
            assert role not in grants, f"{role} granted twice"
            grants[role] = res.body
    return grants


def _stack_project_roles(infra) -> set[str]:
    """Project-level roles infra/ grants (function identities and the function build)."""
    roles: set[str] = set()
    for call in infra.root.modules.values():
        roles |= set(call.get("project_roles", []))
    build = infra.root.resource("google_project_iam_member", "build").body["for_each"]
    roles |= set(re.findall(r"roles/[\w.]+", str(build)))
    for res in infra.root.resources:
        if res.type == "google_project_iam_member" and res.name != "build":
            roles.add(res.body["role"])
    return roles


def test_terraform_bootstrap_apis_come_first(bootstrap: TerraformDir) -> None:
    apis = set(bootstrap.locals["bootstrap_apis"])
    # data.google_project needs Resource Manager; enabling anything needs Service Usage.
    assert {
        "cloudresourcemanager.googleapis.com",
        "serviceusage.googleapis.com",
        "iam.googleapis.com",
        "cloudbuild.googleapis.com",
        "secretmanager.googleapis.com",
    } <= apis
    enabled = bootstrap.resource("google_project_service", "bootstrap").body
    assert enabled["for_each"] == "${toset(concat(local.bootstrap_apis, local.budget_apis))}"
    # With a billing account: the Billing API (its IAM) and the Budget API.
    assert bootstrap.locals["budget_apis"] == (
        '${var.billing_account == "" ? [] : '
        '["cloudbilling.googleapis.com", "billingbudgets.googleapis.com"]}'
    )
    assert enabled["disable_on_destroy"] is False


def test_the_pubsub_service_agent_exists_before_the_stack_grants_to_it(
    bootstrap: TerraformDir, infra
) -> None:
    identity = bootstrap.resource("google_project_service_identity", "pubsub").body
    assert identity["service"] == "pubsub.googleapis.com"
    assert identity["provider"] == "google-beta"  # beta-only resource
    assert identity["depends_on"] == ["${google_project_service.bootstrap}"]
    assert "pubsub.googleapis.com" in bootstrap.locals["bootstrap_apis"]
    # infra/ grants to exactly that agent (the address Google gives it).
    assert infra.root.locals["pubsub_service_agent"] == (
        "service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
    )
    versions = first(bootstrap.files["versions.tf"]["terraform"])
    assert first(versions["required_providers"])["google-beta"]["source"] == "hashicorp/google-beta"


def test_the_deployer_holds_exactly_the_listed_roles_and_never_owner_or_editor(
    bootstrap: TerraformDir,
) -> None:
    account = bootstrap.resource("google_service_account", "deployer").body
    assert account["account_id"] == "ibx-deployer"
    grants = _deployer_grants(bootstrap)
    assert set(grants) == DEPLOYER_ROLES
    for role in grants:
        assert not re.fullmatch(r"roles/(owner|editor|viewer)", role), role
        assert role != "roles/resourcemanager.projectIamAdmin" or "condition" in grants[role]
    # Nothing else in the bootstrap grants the deployer anything on the project.
    others = [
        res.name
        for res in bootstrap.resources
        if res.type.endswith("_iam_member")
        and res.body.get("member") == DEPLOYER
        and res.type != "google_project_iam_member"
    ]
    assert others == ["deployer_budget"]
    budget = bootstrap.resource("google_billing_account_iam_member", "deployer_budget").body
    assert budget["role"] == "roles/billing.costsManager"
    assert budget["count"] == '${var.billing_account == "" ? 0 : 1}'


def test_project_iam_admin_may_only_grant_what_the_stack_grants(
    bootstrap: TerraformDir, infra
) -> None:
    grant = _deployer_grants(bootstrap)["roles/resourcemanager.projectIamAdmin"]
    expression = first(grant["condition"])["expression"]
    assert "iam.googleapis.com/modifiedGrantsByRole" in expression
    assert "hasOnly(${jsonencode(local.grantable_project_roles)})" in expression
    grantable = set(bootstrap.locals["grantable_project_roles"])
    assert grantable == _stack_project_roles(infra)
    assert not any(role.endswith((".admin", "Admin")) or "owner" in role for role in grantable)


def _triggers(bootstrap: TerraformDir) -> dict[str, dict[str, Any]]:
    return {
        res.name: res.body for res in bootstrap.resources if res.type == "google_cloudbuild_trigger"
    }


def test_prod_deploys_only_after_a_manual_approval(bootstrap: TerraformDir) -> None:
    triggers = _triggers(bootstrap)
    assert set(triggers) == {"deploy", "deploy_prod"}
    prod, other = triggers["deploy_prod"], triggers["deploy"]
    assert first(prod["approval_config"])["approval_required"] is True
    assert "approval_config" not in other
    # Exactly one of the two exists per environment.
    assert prod["count"] == '${var.environment == "prod" ? 1 : 0}'
    assert other["count"] == '${var.environment == "prod" ? 0 : 1}'
    assert prod["substitutions"]["_ENV"] == "prod"
    assert other["substitutions"]["_ENV"] == "${var.environment}"
    for name, trigger in triggers.items():
        assert trigger["service_account"] == "${google_service_account.deployer.id}", name
        assert trigger["filename"] == "cloudbuild.yaml", name
    # Releases are tags; the approver role goes only to the listed people, in prod.
    assert "tag" in first(first(prod["repository_event_config"])["push"])
    approver = bootstrap.resource("google_project_iam_member", "prod_approver").body
    assert approver["role"] == "roles/cloudbuild.builds.approver"
    assert approver["for_each"].startswith('${var.environment == "prod"')


def test_cloudbuild_refuses_prod_builds_from_anything_but_that_trigger(
    bootstrap: TerraformDir,
) -> None:
    prod = _triggers(bootstrap)["deploy_prod"]
    build = yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))
    preflight = next(step for step in build["steps"] if step["id"] == "preflight")
    script = preflight["args"][-1]
    assert f"!= {prod['name']} ]" in script
    assert "TRIGGER=${TRIGGER_NAME}" in preflight["env"]
    # And every build runs as the deployer the bootstrap creates.
    account = bootstrap.resource("google_service_account", "deployer").body["account_id"]
    assert f'deployer="{account}@' in script
    assert preflight is build["steps"][0]


def test_bootstrap_is_laid_out_like_the_stack(bootstrap: TerraformDir) -> None:
    files = {path.name for path in Path(bootstrap.path).glob("*.tf")}
    assert {"main.tf", "variables.tf", "outputs.tf", "versions.tf"} <= files
    for name, body in bootstrap.variables.items():
        assert body.get("type") and str(body.get("description", "")).strip(), name
    for name, body in bootstrap.outputs.items():
        assert str(body.get("description", "")).strip(), name

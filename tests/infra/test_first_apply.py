"""Issue 38: the first `terraform apply` passes on a new project, in an organization too.

The IAM wait's triggers read only what the plan knows; secrets replicate
where the organization allows; every grant to a principal outside the
customer's domain is documented; the model is the Gemini API, Vertex AI or
the offline one, and only the first needs a key; keyless delegation can be
set up in order; alerts mail someone; function images are cleaned up; with
`approval_access = "none"` the deadline tasks and the digest job still get in.
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
DEPLOY_DOC = REPO / "docs" / "deploy.md"
ALERTS = 'alert_email = "oncall@example.com"\n'
DEPLOYER = "ibx-deployer@demo-project.iam.gserviceaccount.com"


def _with(infra, **values: Any):
    """The same configuration with some root variables set (as a tfvars file would)."""
    return type(infra)(infra.root, infra.modules_by_dir, {**infra.tfvars, **values})


def _references(expression: Any) -> set[str]:
    """Every ``kind.name`` an HCL expression (as python-hcl2 returns it) refers to."""
    text = str(expression)
    return set(re.findall(r"\b(var|local|module|data|google_\w+|time_\w+)\.(\w+)", text))


# --- 1. the IAM wait's triggers ----------------------------------------------------------


def test_the_iam_wait_triggers_read_only_module_inputs(infra) -> None:
    """A trigger that the provider rewrites after apply (a secret grant's
    secret_id becomes projects/P/secrets/S) stops the first apply with
    "Provider produced inconsistent final plan": triggers read variables only."""
    wait = infra.http_module.resource("time_sleep", "iam_propagation").body
    triggers = wait["triggers"]
    assert set(triggers) == {"service_account", "secrets", "project_roles"}
    for name, expression in triggers.items():
        kinds = {kind for kind, _ in _references(expression)}
        assert kinds <= {"var"}, f"trigger {name} reads {sorted(kinds - {'var'})}: {expression}"
    assert "var.secret_environment_variables" in triggers["secrets"]
    assert "var.project_roles" in triggers["project_roles"]
    # ... and the wait still comes after the grants it waits for.
    assert "${google_secret_manager_secret_iam_member.function}" in wait["depends_on"]
    assert "${google_project_iam_member.function}" in wait["depends_on"]
    # The node module adds no wait of its own: it is built on this one.
    assert not [r for r in infra.node_module.resources if r.type == "time_sleep"]


def test_the_secret_ids_the_modules_get_are_the_configured_ids(infra) -> None:
    """The modules' secret inputs come from google_secret_manager_secret.secret_id,
    which the provider keeps as configured (never rewritten)."""
    for local in ("gmail_secret", "gemini_secret"):
        assert "google_secret_manager_secret.runtime[" in str(infra.root.locals[local])
        assert ".secret_id" in str(infra.root.locals[local])
    assert "google_secret_manager_secret.ses[id].secret_id" in str(infra.root.locals["ses_secret"])


# --- 2. secret replication -----------------------------------------------------------------


@pytest.mark.parametrize("file,name", [("secrets.tf", "runtime"), ("ses.tf", "ses")])
def test_secrets_replicate_automatically_or_in_the_listed_locations(
    infra, file: str, name: str
) -> None:
    variable = infra.root.variables["secret_replication_locations"]
    assert variable["type"] == "${list(string)}" and variable["default"] == []
    pattern = re.search(r'regex\("(.*)", location\)', first(variable["validation"])["condition"])
    assert pattern is not None
    region = re.compile(pattern.group(1).replace("\\\\", "\\"))
    assert region.search("europe-west1") and region.search("us-central1")
    for refused in ("global", "eu", "europe-west1 "):
        assert not region.search(refused), refused
    assert infra.root.locals["secret_user_managed"] == (
        "${length(var.secret_replication_locations) > 0}"
    )
    secret = infra.root.resource("google_secret_manager_secret", name)
    assert secret.file == file
    replication = first(secret.body["replication"])
    dynamic = {key: first(body) for block in replication["dynamic"] for key, body in block.items()}
    assert dynamic["auto"]["for_each"] == "${local.secret_user_managed ? [] : [1]}"
    assert dynamic["user_managed"]["for_each"] == "${local.secret_user_managed ? [1] : []}"
    replicas = first(first(dynamic["user_managed"]["content"])["dynamic"])["replicas"]
    assert first(replicas)["for_each"] == "${toset(var.secret_replication_locations)}"
    assert first(first(replicas)["content"])["location"] == "${replicas.value}"
    assert "auto" not in replication  # never a fixed auto {} beside the choice


# --- 3. grants to principals outside the customer's domain ---------------------------------


def _outside_grants(infra) -> dict[str, str]:
    """IAM grants whose member is not an inboxflow service account: address -> member."""
    found: dict[str, str] = {}
    for tf in (infra.root, *infra.modules_by_dir.values()):
        for res in tf.resources:
            if not res.type.endswith("_iam_member"):
                continue
            member = str(res.body.get("member", ""))
            ours = (
                "google_service_account." in member
                or ".service_account_member" in member
                or "var.push_service_account_email" in member
                or member == "${each.value}"
            )
            if not ours:
                found[f"{res.type}.{res.name}"] = member
    return found


def test_every_grant_outside_the_domain_is_documented(infra) -> None:
    grants = _outside_grants(infra)
    assert grants == {
        "google_cloud_run_service_iam_member.approve_public": "allUsers",
        "google_pubsub_topic_iam_member.dead_letter_publisher": (
            "serviceAccount:${local.pubsub_service_agent}"
        ),
        "google_pubsub_topic_iam_member.gmail_push_publisher": (
            "serviceAccount:gmail-api-push@system.gserviceaccount.com"
        ),
        "google_pubsub_subscription_iam_member.dead_letter_subscriber": (
            "serviceAccount:${var.pubsub_service_agent}"
        ),
    }
    doc = DEPLOY_DOC.read_text(encoding="utf-8")
    for address in grants:
        assert f"`{address.rsplit('.', 1)[1]}`" in doc, f"docs/deploy.md does not name {address}"
    # ... and the grants made outside Terraform, with the managed constraint's route.
    for needed in (
        "gcp-sa-cloudbuild.iam.gserviceaccount.com",  # the 2nd-gen GitHub connection's secret
        "gcp-sa-pubsub.iam.gserviceaccount.com",
        "constraints/iam.managed.allowedPolicyMembers",
        "constraints/iam.allowedPolicyMemberDomains",
        "allowedMemberSubjects",
    ):
        assert needed in doc, needed


def test_the_pubsub_agent_holds_no_token_creator(infra) -> None:
    for tf in (infra.root, *infra.modules_by_dir.values()):
        for res in tf.resources:
            member = str(res.body.get("member", ""))
            if "pubsub_service_agent" in member:
                assert res.body["role"] in {"roles/pubsub.publisher", "roles/pubsub.subscriber"}
    tokens = [
        r.name
        for r in infra.root.resources
        if r.body.get("role") == "roles/iam.serviceAccountTokenCreator"
    ]
    assert tokens == ["gmail_delegate_signers"]


# --- 4. the model: Gemini API, Vertex AI or offline ------------------------------------------


def _llm_env(infra, llm: str) -> dict[str, str]:
    """The environment a node that calls the LLM gets for ``llm`` (main.tf's llm_environment)."""
    text = infra.root.locals["llm_environment"]
    assert text.rstrip("}").endswith("[var.llm]") or "}[var.llm]" in text
    body = re.search(rf"{llm}\s*=\s*\{{(.*?)\}}", text, re.S)
    assert body is not None, llm
    env = dict(re.findall(r"(\w+)\s*=\s*(\"[^\"]*\"|var\.\w+)", body.group(1)))
    values = infra.variable_values()
    return {
        key: values[value[4:]] if value.startswith("var.") else value.strip('"')
        for key, value in env.items()
    }


def test_vertex_sets_what_google_genai_reads_and_offline_forces_the_offline_model(infra) -> None:
    from inboxflow.adapters.gemini_llm import GeminiSettings
    from inboxflow.llm_selection import gemini_settings

    variable = infra.root.variables["llm"]
    assert variable["default"] == "gemini_api"
    for value in ("gemini_api", "vertex", "offline"):
        assert f'"{value}"' in first(variable["validation"])["condition"]
    base = {"GOOGLE_CLOUD_PROJECT": "demo-project"}  # base_environment gives every function
    assert "GOOGLE_CLOUD_PROJECT = var.project_id" in infra.root.locals["base_environment"]
    vertex = _llm_env(_with(infra, vertex_location="europe-west1"), "vertex")
    settings = GeminiSettings.from_env({**base, **vertex})
    assert settings is not None and settings.mode == "vertex"
    assert settings.role("task").location == "europe-west1"
    assert gemini_settings({**base, **vertex}) is not None  # INBOXFLOW_LLM=gemini is satisfied
    # The default location is google-genai's own default.
    assert infra.root.variables["vertex_location"]["default"] == "global"
    offline = _llm_env(infra, "offline")
    assert gemini_settings({**base, **offline, "GEMINI_API_KEY": "k"}) is None
    assert _llm_env(infra, "gemini_api") == {"INBOXFLOW_LLM": "gemini"}


def test_only_the_gemini_api_mounts_a_key_and_vertex_is_granted(infra) -> None:
    nodes = infra.tfvars["node_functions"]
    llm_nodes = sum(node["uses_llm"] for node in nodes.values())
    assert llm_nodes > 0
    counts = {
        llm: _with(infra, llm=llm).resource_counts() for llm in ("gemini_api", "vertex", "offline")
    }
    accessors = {llm: c["google_secret_manager_secret_iam_member"] for llm, c in counts.items()}
    assert accessors["vertex"] == accessors["offline"] == accessors["gemini_api"] - llm_nodes
    secrets = {llm: c["google_secret_manager_secret"] for llm, c in counts.items()}
    assert secrets["vertex"] == secrets["offline"] == secrets["gemini_api"] - 1
    roles = {llm: c["google_project_iam_member"] for llm, c in counts.items()}
    assert roles["vertex"] == roles["gemini_api"] + llm_nodes == roles["offline"] + llm_nodes
    apis = {llm: c["google_project_service"] for llm, c in counts.items()}
    assert apis["vertex"] == apis["gemini_api"] + 1 == apis["offline"] + 1
    # The sizing above mirrors these expressions (conftest.py): pin them.
    gemini = infra.root.locals["gemini_secret"].replace(" ", "")
    assert gemini.endswith('ifvar.llm=="gemini_api"}}')
    assert infra.root.locals["runtime_secret_ids"].replace(" ", "") == (
        '${toset(concat(var.secret_ids,var.llm=="gemini_api"?["GEMINI_API_KEY"]:[]))}'
    )
    assert infra.root.locals["enabled_apis"].replace(" ", "") == (
        '${concat(local.apis,var.llm=="vertex"?["aiplatform.googleapis.com"]:[])}'
    )
    grant = infra.root.resource("google_project_iam_member", "vertex_users").body
    assert grant["role"] == "roles/aiplatform.user"
    users = infra.root.locals["vertex_users"].replace(" ", "")
    assert 'ifvar.llm=="vertex"&&node.uses_llm' in users
    assert "module.node[key].service_account_member" in users
    assert "aiplatform.googleapis.com" in infra.root.locals["enabled_apis"]
    # The deployer's conditioned Project IAM Admin may grant it.
    bootstrap = TerraformDir.load(INFRA / "bootstrap", "bootstrap")
    assert "roles/aiplatform.user" in bootstrap.locals["grantable_project_roles"]


def _preflight(tmp_path: Path, tfvars: str, labelled: str, versioned: str):
    from tests.infra.test_cloudbuild import _preflight as run

    tmp_path.mkdir(parents=True, exist_ok=True)
    build = yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))
    return run(
        build, tmp_path, identity=DEPLOYER, secrets=labelled, versioned=versioned, tfvars=tfvars
    )


@pytest.mark.parametrize("llm", ["vertex", "offline"])
def test_preflight_needs_no_gemini_key_without_the_gemini_api(tmp_path: Path, llm: str) -> None:
    # Even a key secret kept from an earlier gemini_api deploy, without a version.
    done = _preflight(
        tmp_path,
        f'llm = "{llm}"\n' + ALERTS,
        labelled="GEMINI_API_KEY GMAIL_CREDENTIALS",
        versioned="GMAIL_CREDENTIALS",
    )
    assert done.returncode == 0, done.stderr


def test_preflight_needs_the_gemini_key_with_the_gemini_api(tmp_path: Path) -> None:
    for name, tfvars in (("default", ALERTS), ("explicit", 'llm = "gemini_api"\n' + ALERTS)):
        done = _preflight(tmp_path / name, tfvars, labelled="", versioned="GMAIL_CREDENTIALS")
        assert done.returncode != 0, name
        assert "without an enabled version: GEMINI_API_KEY" in done.stderr, name


def _gemini_check(tmp_path: Path, tfvars: str) -> subprocess.CompletedProcess:
    """Run the gemini-check step; the venv's python does not exist here, so a
    step that went on to read the key would fail."""
    build = yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))
    step = next(s for s in build["steps"] if s["id"] == "gemini-check")
    script = step["args"][-1].replace("$$", "$")
    checkout = tmp_path / "workspace"
    (checkout / "infra" / "envs").mkdir(parents=True)
    (checkout / "infra" / "envs" / "dev.tfvars").write_text(tfvars, encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin"}
    for item in step["env"]:
        name, _, value = item.partition("=")
        env[name] = value.replace("${_PROJECT_ID}", "demo-project").replace("${_ENV}", "dev")
    return subprocess.run(
        ["bash", "-ceu", script],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_gemini_check_is_skipped_saying_why_without_the_gemini_api(tmp_path: Path) -> None:
    offline = _gemini_check(tmp_path / "offline", 'llm = "offline"\n')
    assert offline.returncode == 0, offline.stderr
    assert "inboxflow check skipped" in offline.stdout
    vertex = _gemini_check(tmp_path / "vertex", 'llm = "vertex"\n')
    assert vertex.returncode == 0, vertex.stderr
    assert "GOOGLE_GENAI_USE_VERTEXAI=true GOOGLE_CLOUD_PROJECT=demo-project" in vertex.stdout
    # With the Gemini API the step goes on to read the key (here: no venv, so it fails).
    api = _gemini_check(tmp_path / "api", ALERTS)
    assert api.returncode != 0 and "skipped" not in api.stdout


# --- 5. keyless delegation, in order ----------------------------------------------------------


def test_the_delegate_address_is_known_before_anything_is_applied(infra) -> None:
    output = infra.root.outputs["gmail_delegation_service_account"]
    assert output["value"] == '${var.gmail_keyless_delegation ? local.gmail_delegate_email : ""}'
    # A targeted apply writes the outputs downstream of its targets: step 4 targets the secrets.
    assert output["depends_on"] == ["${google_secret_manager_secret.runtime}"]
    email = infra.root.locals["gmail_delegate_email"]
    assert {kind for kind, _ in _references(email)} <= {"var", "local"}
    assert email == "${local.gmail_delegate_id}@${var.project_id}.iam.gserviceaccount.com"
    account = infra.root.resource("google_service_account", "gmail_delegate").body
    assert account["account_id"] == "${local.gmail_delegate_id}"
    doc = DEPLOY_DOC.read_text(encoding="utf-8")
    # Step 4's targeted apply creates the delegate with the secrets.
    assert "-target=google_service_account.gmail_delegate" in doc


def test_preflight_tells_a_keyless_deploy_what_to_store(tmp_path: Path) -> None:
    done = _preflight(
        tmp_path,
        "gmail_keyless_delegation = true\n" + ALERTS,
        labelled="",
        versioned="GEMINI_API_KEY",
    )
    assert done.returncode != 0
    assert "without an enabled version: GMAIL_CREDENTIALS" in done.stderr
    assert (
        '"service_account":"ibx-gmail-delegate@demo-project.iam.gserviceaccount.com"' in done.stderr
    )


def test_google_auth_has_subject_in_impersonated_credentials() -> None:
    """google-auth 2.38.0 added domain-wide delegation (``subject``) to impersonated credentials."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    requirements = (REPO / "requirements.txt").read_text(encoding="utf-8")
    for text in (pyproject, requirements):
        floor = re.search(r"google-auth>=([\d.]+)", text)
        assert floor is not None
        assert tuple(int(x) for x in floor.group(1).split(".")) >= (2, 38)


# --- 6. alerts, images, approval_access = "none" -------------------------------------------


def test_alerts_mail_the_required_address(infra) -> None:
    variable = infra.root.variables["alert_email"]
    assert "default" not in variable  # required: nobody receiving alerts is not a default
    channel = infra.root.resource("google_monitoring_notification_channel", "email").body
    assert channel["type"] == "email"
    assert channel["labels"] == {"email_address": "${var.alert_email}"}
    channels = infra.root.locals["alert_channels"]
    assert channels == (
        "${concat([google_monitoring_notification_channel.email.id], var.notification_channels)}"
    )
    policies = [r for r in infra.root.resources if r.type == "google_monitoring_alert_policy"]
    assert policies
    for policy in policies:
        assert policy.body["notification_channels"] == "${local.alert_channels}", policy.name
    for env_file in sorted((INFRA / "envs").glob("*.tfvars")):
        assert "alert_email" in infra.load_hcl(env_file), env_file.name


def test_preflight_refuses_an_environment_without_alert_email(tmp_path: Path) -> None:
    versioned = "GEMINI_API_KEY GMAIL_CREDENTIALS"
    missing = _preflight(tmp_path / "missing", "", labelled="", versioned=versioned)
    assert missing.returncode != 0 and "sets no alert_email" in missing.stderr
    present = _preflight(tmp_path / "present", ALERTS, labelled="", versioned=versioned)
    assert present.returncode == 0, present.stderr


def test_function_images_go_to_a_repository_that_cleans_up(infra) -> None:
    repo = infra.root.resource("google_artifact_registry_repository", "functions").body
    assert repo["format"] == "DOCKER" and repo["location"] == "${var.region}"
    assert repo["cleanup_policy_dry_run"] is False
    policies = {p["id"]: p for p in repo["cleanup_policies"]}
    keep = policies["keep-recent"]
    assert keep["action"] == "KEEP"
    assert first(keep["most_recent_versions"])["keep_count"] == "${var.artifact_keep_count}"
    delete = policies["delete-older"]
    assert delete["action"] == "DELETE"
    assert first(delete["condition"])["tag_state"] == "ANY"
    assert first(delete["condition"])["older_than"].endswith("s")
    assert infra.root.variables["artifact_keep_count"]["default"] >= 2
    function = infra.http_module.resource("google_cloudfunctions2_function", "function").body
    assert first(function["build_config"])["docker_repository"] == "${var.docker_repository}"
    assert infra.node_module.modules["function"]["docker_repository"] == "${var.docker_repository}"
    for name, call in infra.root.modules.items():
        assert call["docker_repository"] == (
            "${google_artifact_registry_repository.functions.id}"
        ), name


def test_with_approval_access_none_tasks_call_the_functions_own_url(infra) -> None:
    run_url = infra.root.locals["approve_run_url"]
    assert run_url == (
        '${"https://${var.service_functions["approve"].function_name}'
        '-${data.google_project.this.number}.${var.region}.run.app"}'
    ) or run_url == (
        'https://${var.service_functions["approve"].function_name}'
        "-${data.google_project.this.number}.${var.region}.run.app"
    )
    assert infra.root.locals["tasks_url"] == (
        '${var.approval_access == "none" ? local.approve_run_url : local.approval_url}'
    )
    env = infra.root.locals["tasks_environment"]
    assert env["INBOXFLOW_TASKS_URL"] == env["INBOXFLOW_TASKS_AUDIENCE"] == "${local.tasks_url}"
    job = infra.root.resource("google_cloud_scheduler_job", "digest").body
    target = first(job["http_target"])
    assert target["uri"] == "${local.tasks_url}/digest"
    assert first(target["oidc_token"])["audience"] == "${local.tasks_url}"
    grant = infra.root.resource("google_cloud_run_service_iam_member", "approve_tasks_invoker")
    assert grant.body["member"] == "${google_service_account.tasks_invoker.member}"
    assert grant.body["role"] == "roles/run.invoker"
    assert grant.body["service"] == "${module.approve.service_name}"
    counts = {
        value: _with(infra, approval_access=value).resource_counts()
        for value in ("all_users", "invoker_check_disabled", "none")
    }
    invokers = {v: c["google_cloud_run_service_iam_member"] for v, c in counts.items()}
    assert invokers["none"] == invokers["invoker_check_disabled"] + 1


# --- 8. the first-deploy checklist -------------------------------------------------------------


def test_the_first_deploy_checklist_names_each_organization_policy() -> None:
    doc = DEPLOY_DOC.read_text(encoding="utf-8")
    start = doc.index("### First deploy: the checklist")
    checklist = doc[start : doc.index("\n### ", start + 1)]
    for policy in (
        "constraints/gcp.resourceLocations",
        "constraints/iam.allowedPolicyMemberDomains",
        "constraints/iam.managed.allowedPolicyMembers",
        "constraints/iam.disableServiceAccountKeyCreation",
    ):
        assert policy in checklist, policy
    for setting in (
        "secret_replication_locations",
        "approval_access",
        "gmail_push_grant",
        "gmail_keyless_delegation",
        "llm",
        "alert_email",
    ):
        assert f"`{setting}" in checklist, setting

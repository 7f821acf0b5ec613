"""cloudbuild.yaml: named steps in order, substitutions declared and used."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")

CLOUDBUILD = Path(__file__).resolve().parents[2] / "cloudbuild.yaml"
STEP_ORDER = [
    "preflight",
    "install",
    "lint",
    "test",
    "browser",
    "gemini-check",
    "build-source",
    "terraform-init",
    "terraform-validate",
    "terraform-plan",
    "terraform-apply",
    "terraform-output",
    "approval-access",
]
BUILT_IN = {
    "PROJECT_ID",
    "BUILD_ID",
    "PROJECT_NUMBER",
    "LOCATION",
    "COMMIT_SHA",
    "SHORT_SHA",
    "BRANCH_NAME",
    "TRIGGER_NAME",
}


@pytest.fixture(scope="module")
def build() -> dict[str, Any]:
    return yaml.safe_load(CLOUDBUILD.read_text(encoding="utf-8"))


def _text(step: dict[str, Any]) -> str:
    return " ".join(str(arg) for arg in step.get("args", []))


def _resolve(build: dict[str, Any], text: str) -> str:
    """Apply the build's own substitution defaults to ``text``."""
    return re.sub(
        r"\$\{(_[A-Z0-9_]+)\}", lambda match: str(build["substitutions"][match.group(1)]), text
    )


def _step(build: dict[str, Any], step_id: str) -> dict[str, Any]:
    return next(step for step in build["steps"] if step.get("id") == step_id)


def test_steps_are_named_and_ordered(build: dict[str, Any]) -> None:
    ids = [step.get("id") for step in build["steps"]]
    assert all(ids), "every step needs an id"
    assert ids == STEP_ORDER
    for step in build["steps"]:
        assert step.get("name"), f"{step['id']}: no builder image"
        assert "waitFor" not in step, f"{step['id']}: steps run strictly in order"


def test_substitutions_for_project_region_environment(build: dict[str, Any]) -> None:
    subs = build["substitutions"]
    assert {"_PROJECT_ID", "_REGION", "_ENV"} <= set(subs)
    raw = CLOUDBUILD.read_text(encoding="utf-8")
    body = raw.split("substitutions:", 1)[1].split("options:", 1)[1]
    used = set(re.findall(r"\$\{(_[A-Z0-9_]+)\}|\$(_[A-Z0-9_]+)", body))
    used_names = {name for pair in used for name in pair if name}
    assert used_names <= set(subs), f"undeclared: {sorted(used_names - set(subs))}"
    assert set(subs) <= used_names, f"declared but unused: {sorted(set(subs) - used_names)}"
    # User substitutions that reference built-ins need dynamic substitutions.
    assert build["options"]["dynamic_substitutions"] is True
    for value in subs.values():
        for name in re.findall(r"\$\{([A-Z_]+)\}", str(value)):
            assert name in BUILT_IN


def test_tests_run_before_anything_is_built_or_deployed(build: dict[str, Any]) -> None:
    assert "pip install" in _text(_step(build, "install"))
    lint = _text(_step(build, "lint"))
    assert "ruff" in lint and "inboxflow.dev.infra.export --check" in lint
    assert "inboxflow.dev.infra.archive --out" in _text(_step(build, "build-source"))


def test_the_test_step_runs_make_test_where_the_emulators_are(build: dict[str, Any]) -> None:
    step = _step(build, "test")
    assert re.search(r"google-cloud-cli:[0-9.]+-emulators$", _resolve(build, step["name"]))
    script = _text(step)
    commands = [line.strip() for line in script.splitlines() if line.strip()]
    assert commands[-1].startswith("make test"), "the suite is exactly `make test`"
    # The python:3.11 image's /workspace/.venv does not run in this image: own virtualenv.
    venv = re.search(r"VENV=(\S+)", commands[-1])
    assert venv and not venv.group(1).startswith("/workspace/.venv")
    assert "make" in script.split("apt-get install", 1)[1].split("\n", 1)[0]
    # No browser in the image: the browser tests are deselected (the browser step
    # runs them), every other marker runs, and a missing emulator fails the build.
    assert sorted(step.get("env", [])) == [
        "INBOXFLOW_REQUIRE_EMULATORS=1",
        'PYTEST_ADDOPTS=-m "not browser"',
    ]
    assert "-m emulator" not in script and "not emulator" not in script


def test_the_browser_tests_run_on_chromium_and_cannot_skip(build: dict[str, Any]) -> None:
    step = _step(build, "browser")
    # The image the install step built /workspace/.venv (with Playwright) in.
    assert step["name"] == _step(build, "install")["name"]
    assert step.get("env") == ["INBOXFLOW_REQUIRE_EMULATORS=1"]
    commands = [line.strip() for line in _text(step).splitlines() if line.strip()]
    assert any(
        c.startswith("apt-get install") and c.split()[-2:] == ["chromium", ">/dev/null"]
        for c in commands
    )
    assert commands[-1] == "/workspace/.venv/bin/python -m pytest -m browser tests/browser"


def test_ci_run_requires_the_tools_before_make_test() -> None:
    script = (CLOUDBUILD.parent / ".ci" / "run").read_text(encoding="utf-8")
    lines = [line.strip() for line in script.splitlines()]
    assert "export INBOXFLOW_REQUIRE_EMULATORS=1" in lines
    assert lines.index("export INBOXFLOW_REQUIRE_EMULATORS=1") < lines.index("make test")


def test_gemini_check_runs_with_the_deployment_key_before_anything_is_deployed(
    build: dict[str, Any],
) -> None:
    step = _step(build, "gemini-check")
    script = _text(step)
    ids = [s["id"] for s in build["steps"]]
    assert ids.index("gemini-check") < ids.index("build-source") < ids.index("terraform-apply")
    assert "/workspace/.venv" in script  # the python image, where install built the venv
    assert "_PYTHON_IMAGE" in step["name"]
    assert "/secrets/GEMINI_API_KEY/versions/latest:access" in script
    # Without a key version the step says so and passes; with one, `inboxflow check` decides.
    assert "sys.exit(0)" in script and "skipped" in script
    commands = [line.strip() for line in script.splitlines() if line.strip()]
    assert commands[-1] == 'GEMINI_API_KEY="$${key}" /workspace/.venv/bin/inboxflow check'
    assert "set -x" not in script and 'echo "$${key}"' not in script  # the key is never logged


def test_terraform_uses_the_environment(build: dict[str, Any]) -> None:
    init, validate, plan, apply = (
        _step(build, f"terraform-{verb}") for verb in ("init", "validate", "plan", "apply")
    )
    assert validate["args"] == ["validate"]  # after init (providers), before plan
    for step in (init, validate, plan, apply):
        assert step["dir"] == "infra"
        assert "terraform" in _resolve(build, step["name"])
    assert init["args"][0] == "init"
    assert "-backend-config=prefix=inboxflow/${_ENV}" in init["args"]
    assert plan["args"][0] == "plan"
    for expected in (
        "-var-file=envs/${_ENV}.tfvars",
        "-var=project_id=${_PROJECT_ID}",
        "-var=region=${_REGION}",
        "-var=environment=${_ENV}",
        "-out=tfplan",
    ):
        assert expected in plan["args"], expected
    # Command-line -var flags override the example values in the env file.
    assert plan["args"].index("-var-file=envs/${_ENV}.tfvars") < plan["args"].index(
        "-var=project_id=${_PROJECT_ID}"
    )
    assert apply["args"][0] == "apply" and apply["args"][-1] == "tfplan"
    assert "-auto-approve" in apply["args"]


def test_every_environment_has_a_tfvars_file(build: dict[str, Any]) -> None:
    envs = CLOUDBUILD.parent / "infra" / "envs"
    assert (envs / f"{build['substitutions']['_ENV']}.tfvars").is_file()


# --- pinned images, preflight --------------------------------------------------------

EXACT_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[a-z0-9.-]+)?")
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def test_every_image_is_pinned_to_a_version_or_digest(build: dict[str, Any]) -> None:
    for step in build["steps"]:
        image = _resolve(build, step["name"])
        tag = image.rsplit("/", 1)[-1].partition(":")[2].split("@")[0]
        assert DIGEST.search(image) or EXACT_VERSION.fullmatch(tag), (
            f"{step['id']}: {image} floats (pin an exact version or a digest)"
        )
    # The Terraform image is the version tests/infra runs `terraform fmt` with.
    terraform = _resolve(build, _step(build, "terraform-plan")["name"])
    assert EXACT_VERSION.fullmatch(terraform.rsplit(":", 1)[1])


def _preflight(build: dict[str, Any], tmp_path: Path, **world: str) -> subprocess.CompletedProcess:
    """Run the preflight step's script as Cloud Build would, against stub curl/gcloud.

    ``world``: identity (the metadata server's answer), secrets (names the
    label filter lists), versioned (names with an enabled version), env, trigger,
    tfvars (the text of infra/envs/<env>.tfvars in the build's checkout; the
    committed file when not given).
    """
    step = _step(build, "preflight")
    script = step["args"][-1].replace("$$", "$")  # Cloud Build's escape for a literal $
    values = {
        "_PROJECT_ID": "demo-project",
        "_ENV": world.get("env", "dev"),
        "TRIGGER_NAME": world.get("trigger", ""),
    }
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "CALLS": str(tmp_path / "calls.log")}
    for item in step["env"]:
        name, _, value = item.partition("=")
        env[name] = re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], value)
    env.update(
        FAKE_IDENTITY=world["identity"],
        FAKE_SECRETS=world.get("secrets", ""),
        FAKE_VERSIONED=world.get("versioned", ""),
    )
    (tmp_path / "curl").write_text('#!/bin/sh\necho "$FAKE_IDENTITY"\n', encoding="utf-8")
    (tmp_path / "gcloud").write_text(
        "#!/bin/bash\n"
        'echo "$*" >> "$CALLS"\n'
        'if [ "$1 $2" = "secrets list" ]; then for s in $FAKE_SECRETS; do echo "$s"; done; fi\n'
        'if [ "$1 $2 $3" = "secrets versions list" ]; then\n'
        '  for s in $FAKE_VERSIONED; do [ "$s" = "$4" ] && echo "projects/p/secrets/$4/versions/1"; done\n'
        "fi\n"
        "exit 0\n",
        encoding="utf-8",
    )
    for stub in ("curl", "gcloud"):
        (tmp_path / stub).chmod(0o755)
    checkout = tmp_path / "workspace"
    (checkout / "infra" / "envs").mkdir(parents=True, exist_ok=True)
    env_name = values["_ENV"]
    committed = CLOUDBUILD.parent / "infra" / "envs" / f"{env_name}.tfvars"
    tfvars = world.get("tfvars")
    if tfvars is None and committed.is_file():
        tfvars = committed.read_text(encoding="utf-8")
    if tfvars is not None:
        (checkout / "infra" / "envs" / f"{env_name}.tfvars").write_text(tfvars, encoding="utf-8")
    return subprocess.run(
        ["bash", "-ceu", script],
        env=env,
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


DEPLOYER = "ibx-deployer@demo-project.iam.gserviceaccount.com"


def test_preflight_passes_for_the_deployer_with_every_secret_versioned(
    build: dict[str, Any], tmp_path: Path
) -> None:
    done = _preflight(
        build,
        tmp_path,
        identity=DEPLOYER,
        secrets="GEMINI_API_KEY GMAIL_CREDENTIALS",
        versioned="GEMINI_API_KEY GMAIL_CREDENTIALS",
    )
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / "calls.log").read_text(encoding="utf-8")
    # The secrets are found by the label the provider puts on every resource (versions.tf).
    assert "--filter=labels.app=inboxflow" in calls and "--project=demo-project" in calls
    assert calls.count("secrets versions list") == 2


def test_preflight_refuses_another_identity(build: dict[str, Any], tmp_path: Path) -> None:
    done = _preflight(build, tmp_path, identity="123-compute@developer.gserviceaccount.com")
    assert done.returncode != 0
    assert f"must run as {DEPLOYER}" in done.stderr


def test_preflight_refuses_prod_outside_the_approval_trigger(
    build: dict[str, Any], tmp_path: Path
) -> None:
    manual = _preflight(build, tmp_path, identity=DEPLOYER, env="prod", trigger="")
    assert manual.returncode != 0 and "approval-gated" in manual.stderr
    other = _preflight(
        build, tmp_path, identity=DEPLOYER, env="prod", trigger="inboxflow-deploy-dev"
    )
    assert other.returncode != 0
    approved = _preflight(
        build,
        tmp_path,
        identity=DEPLOYER,
        env="prod",
        trigger="inboxflow-deploy-prod",
        versioned="GEMINI_API_KEY GMAIL_CREDENTIALS",
    )
    assert approved.returncode == 0, approved.stderr


def test_preflight_refuses_a_secret_without_a_version(
    build: dict[str, Any], tmp_path: Path
) -> None:
    done = _preflight(
        build,
        tmp_path,
        identity=DEPLOYER,
        secrets="GEMINI_API_KEY GMAIL_CREDENTIALS",
        versioned="GEMINI_API_KEY",
    )
    assert done.returncode != 0
    assert "secrets missing or without an enabled version: GMAIL_CREDENTIALS" in done.stderr

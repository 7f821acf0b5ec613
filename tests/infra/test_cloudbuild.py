"""cloudbuild.yaml: named steps in order, substitutions declared and used."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is not installed")

CLOUDBUILD = Path(__file__).resolve().parents[2] / "cloudbuild.yaml"
STEP_ORDER = [
    "install",
    "lint",
    "test",
    "browser",
    "build-source",
    "terraform-init",
    "terraform-plan",
    "terraform-apply",
]
BUILT_IN = {
    "PROJECT_ID",
    "BUILD_ID",
    "PROJECT_NUMBER",
    "LOCATION",
    "COMMIT_SHA",
    "SHORT_SHA",
    "BRANCH_NAME",
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
    assert "ruff" in lint and "infra_export tfvars --check" in lint
    assert "infra_export archive" in _text(_step(build, "build-source"))


def test_the_test_step_runs_make_test_where_the_emulators_are(build: dict[str, Any]) -> None:
    step = _step(build, "test")
    assert _resolve(build, step["name"]).endswith("google-cloud-cli:emulators")
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


def test_terraform_uses_the_environment(build: dict[str, Any]) -> None:
    init, plan, apply = (_step(build, f"terraform-{verb}") for verb in ("init", "plan", "apply"))
    for step in (init, plan, apply):
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

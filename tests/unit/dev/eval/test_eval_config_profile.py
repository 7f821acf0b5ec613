"""``inboxflow eval DIR --config FILE`` routes with a changed inboxflow.yaml, ``--profile NAME``
runs the agent's cases with another profile of it (issue 43 part 2); ``inboxflow eval DIR``
is still the command it was beside ``eval collect``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from inboxflow.dev.cli import app
from tests.harness.paths import DATA, ROOT

CASES = """cases:
  - id: agent-reservation
    mail: mail/crisp-reservation.eml
    expect: {graph: agent, profile: pharmacy-brief, run_status: completed}
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("INBOXFLOW_CONFIG", raising=False)
    folder = tmp_path / "set"
    (folder / "mail").mkdir(parents=True)
    shutil.copy(DATA / "evals" / "mail" / "crisp-reservation.eml", folder / "mail")
    (folder / "cases.yaml").write_text(CASES)
    return folder


def changed_config(tmp_path: Path) -> Path:
    """The repo's inboxflow.yaml with a second pharmacy profile (fewer turns)."""
    text = (ROOT / "inboxflow.yaml").read_text()
    brief = "  - name: pharmacy-brief\n    max_iterations: 4\n    system_prompt_file: pharmacy.md\n"
    brief += "    preprocessor: crisp\n    helpdesk: [info@dostupnost-leku.cz]\n"
    brief += "    tools: [search_drugs, manage_reservation, send_reply, create_draft, escalate]\n"
    changed = text.replace("profiles:\n", "profiles:\n" + brief, 1)
    assert changed != text
    path = tmp_path / "changed" / "inboxflow.yaml"
    path.parent.mkdir()
    path.write_text(changed)
    return path


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(
        app, ["eval", *args, "--json", "--jobs", "1", "--min-accuracy", "1"]
    )
    text = result.stdout.strip()
    return result.exit_code, json.loads(text) if text.startswith("{") else {}


def test_profile_runs_the_agent_cases_with_that_profile_of_the_config(
    folder: Path, tmp_path: Path
) -> None:
    config = changed_config(tmp_path)
    code, document = run(str(folder), "--config", str(config))
    assert code == 1 and document["routing"] == str(config)  # the rule names `pharmacy`
    failing = document["failures"][0]
    assert any(d["field"] == "profile" for d in failing["differences"])
    code, document = run(str(folder), "--config", str(config), "--profile", "pharmacy-brief")
    assert code == 0, document
    assert document["profile"] == "pharmacy-brief" and document["routing"] == str(config)


def test_an_unknown_profile_or_config_is_refused_before_anything_runs(
    folder: Path, tmp_path: Path
) -> None:
    result = CliRunner().invoke(app, ["eval", str(folder), "--profile", "nobody"])
    assert result.exit_code == 2 and "no agent profile 'nobody'" in result.output
    result = CliRunner().invoke(app, ["eval", str(folder), "--config", str(tmp_path / "none")])
    assert result.exit_code == 2 and "no such file" in result.output


def test_eval_dir_is_still_the_command_and_eval_collect_is_beside_it(folder: Path) -> None:
    runner = CliRunner()
    assert "collect" in runner.invoke(app, ["eval", "--help"]).output
    assert "--keep-text" in runner.invoke(app, ["eval", "collect", "--help"]).output
    assert "--profile" in runner.invoke(app, ["eval", str(folder), "--help"]).output

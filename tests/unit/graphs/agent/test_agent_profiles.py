"""Agent profiles in inboxflow.yaml: defaults, validation (one line naming the profile), snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from inboxflow.config import ConfigError, load_config
from inboxflow.graphs import graph_registry
from inboxflow.graphs.agent.profiles import UnknownProfile, snapshot
from tests.harness.paths import ROOT


def _write(tmp_path: Path, body: str) -> Path:
    (tmp_path / "prompt.md").write_text("Be helpful.", encoding="utf-8")
    path = tmp_path / "inboxflow.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_defaults_and_the_prompt_relative_to_the_config(tmp_path):
    config = load_config(
        _write(
            tmp_path,
            "profiles:\n  - name: p\n    system_prompt_file: prompt.md\n    tools: [search_drugs]\n",
        ),
        graph_registry(),
    )
    (profile,) = config.profiles
    # No model or budget of its own: the `agent` Gemini role's (gemini_roles) answer.
    assert (profile.model, profile.max_tokens, profile.temperature, profile.max_iterations) == (
        None,
        None,
        0.3,
        10,
    )
    assert profile.preprocessor == "default" and profile.system_prompt == "Be helpful."
    assert snapshot("p", config).system_prompt == "Be helpful."


@pytest.mark.parametrize(
    ("profile", "error"),
    [
        (
            "{name: p, system_prompt_file: prompt.md, tools: [search_drugs, fly]}",
            "profile 'p' (profiles[0]): unknown tool 'fly'; tools: create_draft, escalate,",
        ),
        (
            "{name: p, system_prompt_file: nowhere.md, tools: [search_drugs]}",
            "profile 'p' (profiles[0]): system_prompt_file 'nowhere.md' not found",
        ),
        (
            "{name: p, tools: [search_drugs]}",
            "profile 'p' (profiles[0]): missing key 'system_prompt_file'",
        ),
        (
            "{name: p, system_prompt_file: prompt.md}",
            "profile 'p' (profiles[0]): missing key 'tools'",
        ),
        (
            "{name: p, system_prompt_file: prompt.md, tools: [web_search], max_iterations: 0}",
            "profile 'p' (profiles[0]): max_iterations: Input should be greater than or equal to 1",
        ),
        (
            "{name: p, system_prompt_file: prompt.md, tools: [web_search], preprocessor: zendesk}",
            "profile 'p' (profiles[0]): preprocessor: Input should be 'default' or 'crisp'",
        ),
        (
            "{name: p, system_prompt_file: prompt.md, tools: [web_search], colour: red}",
            "profile 'p' (profiles[0]): unknown key 'colour'",
        ),
    ],
)
def test_a_bad_profile_is_one_line_naming_it(tmp_path, profile, error):
    path = _write(tmp_path, f"profiles:\n  - {profile}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, graph_registry())
    message = str(caught.value)
    assert error in message and "\n" not in message


def test_the_shipped_config_routes_crisp_forwards_to_the_pharmacy_profile():
    config = load_config(ROOT / "inboxflow.yaml", graph_registry())
    (rule,) = [r for r in config.routing.rules if r.name == "pharmacy-crisp"]
    assert (rule.route, rule.profile, rule.match.forwarded_from) == (
        "agent",
        "pharmacy",
        "info@dostupnost-leku.cz",
    )
    pharmacy = snapshot("pharmacy", config)
    assert pharmacy.preprocessor == "crisp" and "escalate" in pharmacy.tools
    assert "Dostupnost léků" in pharmacy.system_prompt


def test_a_trace_without_a_declared_profile_is_refused():
    with pytest.raises(UnknownProfile, match="got 'nope'; profiles: pharmacy"):
        snapshot("nope", load_config(ROOT / "inboxflow.yaml", graph_registry()))

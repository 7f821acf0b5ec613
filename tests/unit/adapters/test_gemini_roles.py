"""The Gemini roles: defaults in one place, sized within the nodes' leases, resolved in order."""

from __future__ import annotations

import pytest

from inboxflow.adapters.gemini_roles import DEFAULTS, RETIRED_MODELS, resolve_roles
from inboxflow.config import ConfigError, load_config
from inboxflow.graphs import graph_registry

CHAT_NODES = {
    ("agent", "agent_turn"): "agent",
    ("assistant", "llm_call"): "assistant",
    ("pipeline", "retrieve"): "embedding",  # embeds the email; asks no task
}


def test_every_llm_node_gives_its_role_the_whole_deadline():
    """A node's lease is timeout_s + 30: the role's deadline (all attempts) fits in timeout_s.

    Every node may also embed (knowledge search): the embedder's deadline fits everywhere.
    """
    checked = 0
    for name, graph in graph_registry().items():
        for node in graph.nodes.values():
            if not node.uses_llm:
                continue
            role = CHAT_NODES.get((name, node.name), "task")
            assert node.timeout_s >= DEFAULTS[role].deadline_s, (name, node.name, role)
            assert node.timeout_s >= DEFAULTS["embedding"].deadline_s, (name, node.name)
            checked += 1
    assert checked >= 8
    assert set(CHAT_NODES) <= {(g, n) for g, graph in graph_registry().items() for n in graph.nodes}


def test_no_default_is_a_shut_down_model():
    assert not {role.model for role in DEFAULTS.values()} & set(RETIRED_MODELS)


def test_environment_wins_over_the_file_and_inboxflow_gemini_model_over_a_profile():
    roles = resolve_roles(
        {"INBOXFLOW_GEMINI_MODEL": "gemini-3.6-flash", "INBOXFLOW_GEMINI_TASK_MODEL": "t"},
        {"agent": {"model": "from-file"}, "assistant": {"timeout_s": 70}},
    )
    assert roles["task"].model == "t" and roles["agent"].model == "gemini-3.6-flash"
    assert roles["agent"].model_for("profile-model") == "gemini-3.6-flash"
    assert roles["embedding"].model == DEFAULTS["embedding"].model  # not a generating role
    assert roles["assistant"].timeout_s == 70
    unset = resolve_roles({}, {"agent": {"model": "from-file"}})
    assert unset["agent"].model_for(None) == "from-file"
    assert unset["agent"].model_for("profile-model") == "profile-model"


def test_vertex_embeddings_are_regional():
    roles = resolve_roles({"GOOGLE_CLOUD_LOCATION": "global"}, vertex=True)
    assert roles["embedding"].location == "us-central1" and roles["task"].location == "global"
    with pytest.raises(ValueError, match="not serve embedding models at location global"):
        resolve_roles({"INBOXFLOW_GEMINI_EMBEDDING_LOCATION": "global"}, vertex=True)


@pytest.mark.parametrize(
    ("env", "error"),
    [
        ({"INBOXFLOW_GEMINI_TASK_TIMEOUT_S": "soon"}, "INBOXFLOW_GEMINI_TASK_TIMEOUT_S: 'soon'"),
        (
            {
                "INBOXFLOW_GEMINI_AGENT_THINKING_LEVEL": "low",
                "INBOXFLOW_GEMINI_AGENT_THINKING_BUDGET": "9",
            },
            "not both",
        ),
        ({"INBOXFLOW_GEMINI_TASK_DEADLINE_S": "5"}, "shorter than timeout_s"),
    ],
)
def test_bad_settings_are_refused_with_the_variable_named(env, error):
    with pytest.raises(ValueError, match=error):
        resolve_roles(env)


def test_inboxflow_yaml_takes_a_gemini_section(tmp_path):
    path = tmp_path / "inboxflow.yaml"
    path.write_text("gemini:\n  task: {model: gemini-3.6-flash, thinking_level: low}\n")
    assert load_config(path, graph_registry()).gemini.by_role()["task"] == {
        "model": "gemini-3.6-flash",
        "thinking_level": "low",
    }
    path.write_text("gemini:\n  task: {thinking_level: lots}\n")
    with pytest.raises(ConfigError, match="thinking_level"):
        load_config(path, graph_registry())

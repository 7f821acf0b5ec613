"""A node function loads only its own graph, and checks the config against it alone."""

from __future__ import annotations

import pytest

from inboxflow.config import ConfigError, parse_config
from inboxflow.graphs import NodeGraphs, graph_registry, load_named_graph, node_graphs

RULES = {
    "profiles": [
        {
            "name": "help",
            "system_prompt_file": "pharmacy.md",
            "tools": ["a_tool_only_another_graph_has"],
        }
    ],
    "routing": {
        "rules": [
            {"name": "to-agent", "match": {"all": True}, "route": "agent", "profile": "help"},
            {"name": "to-elsewhere", "match": {"all": True}, "route": "not-deployed-here"},
        ]
    },
    "graphs": {"pipeline": {"auto_send": True}, "support": {}},
}


def test_a_graph_is_loaded_by_name_and_is_the_registrys() -> None:
    for name, graph in graph_registry().items():
        assert load_named_graph(name) is graph
    assert load_named_graph("nope") is None


def test_node_graphs_serve_their_own_graph_and_look_others_up_in_the_registry() -> None:
    graphs = node_graphs("support.intake")
    assert isinstance(graphs, NodeGraphs)
    assert graphs["support"] is graph_registry()["support"]
    assert graphs["pipeline"] is graph_registry()["pipeline"]
    assert graphs.get("nope") is None
    assert dict(graphs) == graph_registry()


def test_a_node_of_an_unknown_graph_gets_the_whole_registry() -> None:
    assert node_graphs("nope.node") is graph_registry()


def test_a_partial_check_skips_other_graphs_but_validates_its_own() -> None:
    pipeline = graph_registry()["pipeline"]
    config = parse_config(RULES, {"pipeline": pipeline}, partial=True)
    assert config.graph_settings("pipeline") == {"auto_send": True}
    with pytest.raises(ConfigError, match=r"graphs\.pipeline\.auto_sned"):
        parse_config(
            {**RULES, "graphs": {"pipeline": {"auto_sned": True}}},
            {"pipeline": pipeline},
            partial=True,
        )
    with pytest.raises(ConfigError, match="unknown tool"):
        parse_config(RULES, graph_registry())
    with pytest.raises(ConfigError, match="unknown graph 'agent'"):
        parse_config({**RULES, "profiles": [], "graphs": {}}, {"pipeline": pipeline})

"""Every graph the deployment serves, by name: the one list the runtime, the
CLI and the Terraform export read."""

from __future__ import annotations

from functools import cache

from .graph import Graph


@cache
def graph_registry() -> dict[str, Graph]:
    """Graphs by name (imported on first use: node modules stay out of cold start until needed)."""
    from .pipeline.graph import PIPELINE

    return {graph.name: graph for graph in (PIPELINE,)}


def all_graphs() -> list[Graph]:
    """Every declared graph."""
    return list(graph_registry().values())


def get_graph(name: str) -> Graph:
    """The graph called ``name``; KeyError if there is none."""
    return graph_registry()[name]

"""The OAuth scopes a mailbox needs, derived from what its graphs declare.

A mailbox is asked to consent to ``gmail.modify`` (ingestion reads its mail,
the graphs draft, send and mark read) and to ``calendar.events`` only when a
graph its mail can reach uses the calendar: a node declaring
``uses_calendar``, or a tool of a node's ``tools`` declaring it
(``Tool.uses_calendar``). The graphs a mailbox's mail can reach are the one it
is registered with and those its routing rules (its own, then the global
ones) name. Nothing here lists graph or tool names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .adapters.google_credentials import CALENDAR_EVENTS_SCOPE, GMAIL_MODIFY_SCOPE
from .config import InboxflowConfig
from .engine.graph import Graph
from .engine.tools import Tool


def graph_uses_calendar(graph: Graph) -> bool:
    """Whether a node of ``graph``, or a tool a node declares, uses the calendar."""
    for node in graph.nodes.values():
        if node.uses_calendar:
            return True
        if node.tools and any(tool.uses_calendar for tool in _tools(graph, node.tools)):
            return True
    return False


def _tools(graph: Graph, names: Iterable[str]) -> list[Tool]:
    registry = graph.tools
    return [registry.get(name) for name in names if name in registry]


def graph_scopes(graph: Graph) -> tuple[str, ...]:
    """``gmail.modify``, and ``calendar.events`` when the graph uses the calendar."""
    if graph_uses_calendar(graph):
        return (GMAIL_MODIFY_SCOPE, CALENDAR_EVENTS_SCOPE)
    return (GMAIL_MODIFY_SCOPE,)


def reachable_graphs(address: str, registered: str, config: InboxflowConfig | None) -> list[str]:
    """The graph the mailbox is registered with, then those its routing rules name."""
    names = [registered]
    if config is not None:
        for _, rule in config.rules_for(address):
            if rule.route not in names:
                names.append(rule.route)
    return names


def mailbox_scopes(
    address: str,
    registered: str,
    graphs: Mapping[str, Graph],
    config: InboxflowConfig | None = None,
) -> tuple[str, ...]:
    """The scopes ``address`` must consent to: the union of its reachable graphs' scopes.

    Raises:
        KeyError: the mailbox's graph is not one of ``graphs``.
    """
    if registered not in graphs:
        raise KeyError(f"unknown graph {registered!r}")
    wanted: list[str] = []
    for name in reachable_graphs(address, registered, config):
        graph = graphs.get(name)
        for scope in graph_scopes(graph) if graph is not None else ():
            if scope not in wanted:
                wanted.append(scope)
    return tuple(wanted)


__all__ = ["graph_scopes", "graph_uses_calendar", "mailbox_scopes", "reachable_graphs"]

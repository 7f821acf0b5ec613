"""Every graph the deployment serves, by name: the one list the runtime, the
CLI, ingest, the approval function and the Terraform export read.

Adding a graph is its package plus one line in ``BUILT_IN``. A graph that lives
outside the package (a team's own, or a test's) is added by naming it in
``INBOXFLOW_GRAPHS`` (comma-separated ``module:attribute``), which every
function of a deployment reads the same way.

Every graph package has one skeleton (``tests/unit/test_graph_skeleton.py``
builds a throwaway graph from it and runs it, and checks every built-in graph
against it)::

    NAME/
      graph.py     the declaration: ``Graph.build(name, entry, State, [Node(...)], ...)``,
                   nodes named ``lazy("<package>.nodes.X:fn")`` so they import on first call
      state.py     the state model (pydantic; frozen fields for what the email gave)
      settings.py  the graph's settings model (``graphs.NAME`` in inboxflow.yaml)
      pauses.py    its pause kinds (``PauseKind``: choices, editable fields)
      tasks.py     its LLM tasks: prompt, output schema, ``LLMTask(...)``
      offline.py   the offline model's heuristics for those tasks, as data where they are
                   data; a task's ``offline`` imports it on first call (Gemini never loads it)
      tools.py     its tool registry (``tools="<package>.tools:NAME"``)
      outcome.py   ``outcome(checkpoint)`` and ``FIELDS``, what ``inboxflow eval`` judges
      summary.py   ``summary(checkpoint)``, one line per trace in ``inboxflow traces``
      nodes/       one module per node (or per family of nodes)
      samples/     sample emails ``inboxflow demo`` and the eval read

A file the graph does not need is left out: ``settings.py`` only with a settings
model, ``pauses.py`` only with pause kinds; ``tools.py`` may be a package
(``tools/``). Every ``LLMTask`` of the graph is declared in ``tasks.py``, and
importing all its node code leaves ``offline.py`` unloaded. A module of domain
logic that is neither a task nor a heuristic keeps a name saying what it is
beside the skeleton (``review_policy.py``, ``urgency.py``, ``matching.py``,
``tickets.py``, ``learning.py``). What several graphs share lives in
:mod:`inboxflow.graphs.kit` (or a module beside it named for what it is:
:mod:`inboxflow.graphs.reply_learning`, how every graph's drafts learn from
reviewers), never in another graph: graphs do not import each other.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from ..engine.graph import Graph

BUILT_IN: tuple[str, ...] = (
    "inboxflow.graphs.pipeline.graph:PIPELINE",
    "inboxflow.graphs.agent.graph:AGENT",
    "inboxflow.graphs.support.graph:SUPPORT",
    "inboxflow.graphs.assistant.graph:ASSISTANT",
    "inboxflow.graphs.planner.graph:PLANNER",
)
"""The graphs shipped with inboxflow, as ``module:attribute``."""

PLUGINS_VARIABLE = "INBOXFLOW_GRAPHS"

_loaded: dict[tuple[str, ...], dict[str, Graph]] = {}


def load_graph(reference: str) -> Graph:
    """Import the graph declared at ``module:attribute``.

    Raises:
        ValueError: the reference is malformed, does not import, or is not a ``Graph``.
    """
    module_name, _, attribute = reference.strip().partition(":")
    if not module_name or not attribute:
        raise ValueError(f"graph reference {reference!r}: expected module:attribute")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(
            f"graph reference {reference!r}: cannot import {module_name}: {exc}"
        ) from exc
    graph = getattr(module, attribute, None)
    if not isinstance(graph, Graph):
        raise ValueError(f"graph reference {reference!r}: {attribute} is not a Graph declaration")
    return graph


def graph_references(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The built-in graphs and those ``INBOXFLOW_GRAPHS`` of ``environ`` adds.

    ``environ`` is the environment the entry point read (``Settings.environ``); None: the
    built-in graphs only.
    """
    env = environ or {}
    extra = tuple(ref.strip() for ref in env.get(PLUGINS_VARIABLE, "").split(",") if ref.strip())
    return BUILT_IN + extra


def graph_registry(environ: Mapping[str, str] | None = None) -> dict[str, Graph]:
    """Graphs by name (imported on first use: node modules stay out of cold start until needed).

    Raises:
        ValueError: a reference does not load, or two graphs share a name.
    """
    references = graph_references(environ)
    cached = _loaded.get(references)
    if cached is not None:
        return cached
    registry: dict[str, Graph] = {}
    for reference in references:
        graph = load_graph(reference)
        if graph.name in registry and registry[graph.name] is not graph:
            raise ValueError(f"two graphs are called {graph.name!r} ({reference})")
        registry[graph.name] = graph
    _loaded[references] = registry
    return registry


def load_named_graph(name: str, environ: Mapping[str, str] | None = None) -> Graph | None:
    """The graph called ``name``, importing only its own package when its reference names it.

    A reference names a graph when its module path has a segment ``name`` or
    its attribute is ``name`` in any case (``inboxflow.graphs.pipeline.graph:PIPELINE``);
    otherwise, or when that guess loads another graph, the whole registry is loaded.
    """
    references = graph_references(environ)
    loaded = _loaded.get(references)
    if loaded is not None:
        return loaded.get(name)
    for reference in references:
        module_name, _, attribute = reference.strip().partition(":")
        if name in module_name.split(".") or attribute.lower() == name.lower():
            graph = load_graph(reference)
            if graph.name == name:
                return graph
    return graph_registry(environ).get(name)


class NodeGraphs(Mapping[str, Graph]):
    """The registry as a node function sees it: its own graph, the others imported only if asked.

    A node function runs one graph's node; importing every graph's nodes (and
    what they import) would only slow its cold start. Looking up another graph,
    or iterating, loads the whole registry, so answers are the registry's.
    """

    def __init__(self, own: Graph, environ: Mapping[str, str] | None = None) -> None:
        self.own = own
        self._environ = environ

    def _all(self) -> dict[str, Graph]:
        return graph_registry(self._environ)

    def __getitem__(self, name: str) -> Graph:
        if name == self.own.name:
            return self.own
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def node_graphs(node: str, environ: Mapping[str, str] | None = None) -> Mapping[str, Graph]:
    """The graphs a function serving ``node`` (``graph.node``) needs: only its own, imported.

    Falls back to the whole registry when ``node`` names no known graph (the
    runtime then refuses its envelopes exactly as before).
    """
    graph_name = node.partition(".")[0]
    own = load_named_graph(graph_name, environ)
    if own is None:
        return graph_registry(environ)
    return NodeGraphs(own, environ)


def all_graphs(environ: Mapping[str, str] | None = None) -> list[Graph]:
    """Every declared graph (those ``INBOXFLOW_GRAPHS`` of ``environ`` adds too)."""
    return list(graph_registry(environ).values())


def get_graph(name: str, environ: Mapping[str, str] | None = None) -> Graph:
    """The graph called ``name`` (of ``graph_registry(environ)``); KeyError if there is none."""
    return graph_registry(environ)[name]

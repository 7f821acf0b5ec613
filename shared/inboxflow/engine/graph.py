"""Graph declarations: nodes, their possible routes, an entry node.

A node is a function ``(state, ctx) -> Step``. The graph declares, for each
node, the targets it may route to; the runtime refuses any other target, and
the Terraform export reads the same declaration.

A declaration names its node functions and its tool registry by reference
(``lazy("package.nodes.review:review")``, ``tools="package.tools:TOOLS"``), so
importing a graph imports no node code: a node function imports its own
node's module on its first call, and the tools only when a node uses them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..lazy import Lazy, import_reference
from .pause_kinds import PauseKind
from .step import END, Step
from .tools import Tool, ToolRegistry

if TYPE_CHECKING:
    from ..config import InboxflowConfig
    from ..ports.checkpoint import Checkpoint
    from ..ports.wired import Service
    from .context import NodeContext
    from .guards import Guard


NodeFn = Callable[[Any, "NodeContext"], Step]


class LazyNodeFunction:
    """A node function named by ``module:function``, imported on its first call."""

    def __init__(self, reference: str) -> None:
        if ":" not in reference:
            raise ValueError(f"node function reference {reference!r}: expected module:function")
        self.reference = reference
        self._function: Lazy[NodeFn] = Lazy(self._import)

    @property
    def loaded(self) -> bool:
        """Whether the function's module was imported."""
        return self._function.built

    def resolve(self) -> NodeFn:
        """The function itself (its module is imported now if needed).

        Raises:
            ValueError: the reference does not name a callable.
        """
        return self._function.get()

    def _import(self) -> NodeFn:
        function = import_reference(self.reference, "node function")
        if not callable(function):
            raise ValueError(f"node function reference {self.reference!r} is not callable")
        return function  # type: ignore[no-any-return]

    def __call__(self, state: Any, ctx: NodeContext) -> Step:
        return self.resolve()(state, ctx)

    def __repr__(self) -> str:
        return f"lazy({self.reference!r})"


def lazy(reference: str) -> NodeFn:
    """A node function declared as ``module:function``, imported on its first call."""
    return LazyNodeFunction(reference)


class LazyToolRegistry(ToolRegistry):
    """A graph's tool registry named by ``module:attribute``, imported on first use.

    The attribute is a ``ToolRegistry``, or a function returning one or the tools.
    """

    def __init__(self, reference: str) -> None:
        self.reference = reference
        self._registry: Lazy[ToolRegistry] = Lazy(self._import)
        self._checks: list[Callable[[ToolRegistry], None]] = []

    @property
    def loaded(self) -> bool:
        """Whether the tools were imported."""
        return self._registry.built

    def when_loaded(self, check: Callable[[ToolRegistry], None]) -> None:
        """Run ``check`` on the registry once it is imported (now, if it is)."""
        if self._registry.built:
            check(self._registry.get())
        else:
            self._checks.append(check)

    @property
    def _tools(self) -> dict[str, Tool]:  # type: ignore[override]
        return self._registry.get()._tools

    def _import(self) -> ToolRegistry:
        found = import_reference(self.reference, "tool registry")
        if callable(found) and not isinstance(found, ToolRegistry):
            found = found()
        registry = found if isinstance(found, ToolRegistry) else ToolRegistry(found)
        for check in self._checks:
            check(registry)
        return registry

    def __repr__(self) -> str:
        return f"LazyToolRegistry({self.reference!r})"


@dataclass(frozen=True)
class Node:
    """One node of a graph, deployed as its own Cloud Function.

    Attributes:
        name: node name, unique in its graph.
        run: the node function; ``lazy("module:function")`` imports it on its first call.
        routes: every target ``run`` may return (node names, ``END``, or the
            resume node of a pause).
        memory_mb, timeout_s, max_instances, min_instances: deployment sizing.
        pauses: True if ``run`` may return a ``Pause``: only such nodes get the
            permissions to notify reviewers and schedule deadline tasks.
        uses_llm: the node calls the language model or the embedder: only such
            nodes get the Gemini secret and ``INBOXFLOW_LLM``.
        uses_gmail: the node reads or writes the mailbox (Gmail / Calendar): only
            such nodes get the Gmail credentials.
        uses_calendar: the node itself (not through a tool) reads or writes the
            mailbox owner's calendar: its graph's mailboxes consent to
            ``calendar.events`` (tools declare it on ``Tool``).
        notifies: the node notifies reviewers outside a pause (an escalation
            notice): such nodes, like pausing ones, get the credentials of the
            notification channels (SES).
        tools: the tools (of its graph's registry) this node may call; a call to
            any other tool is refused.
        ports: the ports (``Ports`` fields) this node and its tools read beyond
            the store, the clock, the model and the graph settings; reading
            another fails the step (``UndeclaredPort``).
        services: the business services (of those its graph declares) this node
            and its tools read (``ctx.ports.service(...)``); reading another fails the step.
        guards: rules applied, in order, to every step the node proposes before
            it is routed (``guards.Guard``): what the graph promises whatever
            the model answers.
    """

    name: str
    run: NodeFn
    routes: tuple[str, ...]
    memory_mb: int = 512
    timeout_s: int = 60
    max_instances: int = 20
    min_instances: int = 0
    description: str = ""
    pauses: bool = False
    uses_llm: bool = False
    uses_gmail: bool = False
    uses_calendar: bool = False
    notifies: bool = False
    tools: tuple[str, ...] = ()
    ports: tuple[str, ...] = ()
    services: tuple[str, ...] = ()
    guards: tuple[Guard, ...] = ()

    def __post_init__(self) -> None:
        from ..ports.wired import PORT_NAMES

        unknown = sorted(set(self.ports) - PORT_NAMES)
        if unknown:
            raise ValueError(
                f"node {self.name}: unknown ports {unknown}; ports: {sorted(PORT_NAMES)}"
            )


InitialState = Callable[[Mapping[str, Any], "StartContext"], BaseModel | Mapping[str, Any]]
Summary = Callable[["Checkpoint"], "TraceSummary"]
OutcomeProjection = Callable[["Checkpoint"], Mapping[str, Any]]
"""A graph's judgment on one trace as named fields (``Graph.outcome``), for ``inboxflow eval``."""


@dataclass(frozen=True)
class StartContext:
    """How a trace is being started: what routing decided, for ``Graph.initial_state``.

    Attributes:
        rule: the routing rule that matched (``None``: the graph was named explicitly).
        profile: the agent profile the rule names, if any.
        mailbox: the mailbox the email arrived in, if known.
        config: ``inboxflow.yaml`` as the process loaded it (agent profiles live there).
    """

    rule: str | None = None
    profile: str | None = None
    mailbox: str | None = None
    config: InboxflowConfig | None = None


@dataclass(frozen=True)
class TraceSummary:
    """One row of a trace in the CLI's table, as the graph sees it.

    Attributes:
        label: what the graph made of the email (a category, a classification, a ticket).
        confidence: how sure it was, if it says.
        preview: the answer, the draft or the plan, shortened by the table.
    """

    label: str = "-"
    confidence: float | None = None
    preview: str = ""


def email_state(email: Mapping[str, Any], start: StartContext) -> Mapping[str, Any]:
    """The default ``initial_state``: the graph's state takes the email as ``email``."""
    return {"email": dict(email)}


def no_summary(checkpoint: Checkpoint) -> TraceSummary:
    """The default ``summary``: nothing beyond status and route."""
    return TraceSummary()


def no_outcome(checkpoint: Checkpoint) -> Mapping[str, Any]:
    """The default ``outcome``: no field beyond the common ones (``inboxflow.dev.eval.outcomes``)."""
    return {}


@dataclass(frozen=True)
class Graph:
    """A plain declaration of an agent graph: everything the rest of the system reads.

    Attributes:
        name: the graph's name (routing rules, envelopes, topics use it).
        entry: the first node.
        state_model: the pydantic model of the trace's state.
        nodes: the nodes by name.
        description: one line for ``inboxflow graphs``.
        tools: the graph's own tool registry; each node may call the tools it declares.
        pause_kinds: the kinds of pause its nodes may return, by name.
        initial_state: how an email (JSON form of ``mail.Email``) becomes the first state.
        summary: the graph's view of a trace for the CLI table.
        outcome: the graph's judgment on a trace as the fields ``outcome_fields``
            names (``inboxflow eval`` compares them with labels); the fields every
            graph has (status, route, what was sent...) come from ``inboxflow.dev.eval.outcomes``.
        outcome_fields: the names ``outcome`` returns, documented in docs/evaluating.md.
        settings_model: the graph's settings (read from ``inboxflow.yaml``), if any.
        samples: folder of sample emails the demo runs through this graph, if any.
        takes_profile: routing rules to this graph must name an agent profile.
        queues_thread_replies: a customer's reply in the trace's Gmail thread that
            arrives while the trace is running (not waiting on ``customer_reply``)
            is queued for it (``reply_queue.py``) instead of starting a new trace.
        services: the business services its nodes use (``ports.wired.Service``: a
            name and the protocol the graph's package defines); the composition root
            builds those of the graphs it serves.
    """

    name: str
    entry: str
    state_model: type[BaseModel]
    nodes: Mapping[str, Node]
    description: str = ""
    tools: ToolRegistry = field(default_factory=ToolRegistry)
    pause_kinds: Mapping[str, PauseKind] = field(default_factory=dict)
    initial_state: InitialState = email_state
    summary: Summary = no_summary
    outcome: OutcomeProjection = no_outcome
    outcome_fields: tuple[str, ...] = ()
    settings_model: type[BaseModel] | None = None
    samples: Path | None = None
    takes_profile: bool = False
    queues_thread_replies: bool = False
    services: tuple[Service[Any], ...] = ()

    def __post_init__(self) -> None:
        if self.entry not in self.nodes:
            raise ValueError(f"graph {self.name}: entry node {self.entry!r} is not declared")
        self._check_services()
        for node in self.nodes.values():
            for target in node.routes:
                if target != END and target not in self.nodes:
                    raise ValueError(
                        f"graph {self.name}: {node.name} routes to undeclared node {target!r}"
                    )
            if node.pauses and not self.pause_kinds:
                raise ValueError(
                    f"graph {self.name}: {node.name} pauses but no pause kind is declared"
                )
        for key, kind in self.pause_kinds.items():
            if key != kind.name:
                raise ValueError(f"graph {self.name}: pause kind {kind.name!r} filed as {key!r}")
        if isinstance(self.tools, LazyToolRegistry):
            self.tools.when_loaded(self._check_tools)
        else:
            self._check_tools(self.tools)

    def _check_services(self) -> None:
        """Services have their own names, and each node reads only services the graph declares."""
        from ..ports.wired import PORT_NAMES

        names = [service.name for service in self.services]
        clash = sorted((set(names) & PORT_NAMES) | {n for n in names if names.count(n) > 1})
        if clash:
            raise ValueError(f"graph {self.name}: services named as ports or twice: {clash}")
        for node in self.nodes.values():
            unknown = sorted(set(node.services) - set(names))
            if unknown:
                raise ValueError(
                    f"graph {self.name}: {node.name} reads services {unknown} "
                    f"that the graph does not declare"
                )

    def _check_tools(self, registry: ToolRegistry) -> None:
        """Every tool a node declares is in the graph's registry (checked when it is imported)."""
        for node in self.nodes.values():
            unknown = [tool for tool in node.tools if tool not in registry]
            if unknown:
                raise ValueError(
                    f"graph {self.name}: {node.name} declares tools {unknown} "
                    f"that the graph's registry does not have"
                )

    @classmethod
    def build(
        cls, name: str, entry: str, state_model: type[BaseModel], nodes: list[Node], **declared: Any
    ) -> Graph:
        """Declare a graph from a list of nodes (and pause kinds as a list, if given).

        ``tools`` may be given as ``module:attribute`` (a ``LazyToolRegistry``).
        """
        kinds = declared.pop("pause_kinds", ())
        if not isinstance(kinds, Mapping):
            kinds = {kind.name: kind for kind in kinds}
        if isinstance(declared.get("tools"), str):
            declared["tools"] = LazyToolRegistry(declared["tools"])
        return cls(
            name,
            entry,
            state_model,
            {node.name: node for node in nodes},
            pause_kinds=kinds,
            **declared,
        )

    def import_code(self) -> None:
        """Import every node function and the tool registry now (they load on first use otherwise).

        Raises:
            ValueError: a node function or the registry does not import, or a node
                declares a tool the registry does not have.
        """
        for node in self.nodes.values():
            if isinstance(node.run, LazyNodeFunction):
                node.run.resolve()
        self.tools.names()

    def node_tools(self, node: str) -> ToolRegistry:
        """The registry ``node`` sees: only the tools it declares (none imported if it has none)."""
        return self.tools.only(self.nodes[node].tools)

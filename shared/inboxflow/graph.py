"""Graph declarations: nodes, their possible routes, an entry node.

A node is a function ``(state, ctx) -> Step``. The graph declares, for each
node, the targets it may route to; the runtime refuses any other target, and
the Terraform export reads the same declaration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

if TYPE_CHECKING:
    from .context import NodeContext

END = "__end__"
"""Routing target that finishes the trace."""

TimeoutPolicy = Literal["escalate", "reject", "needs_review"]


@dataclass(frozen=True)
class Pause:
    """Stop the trace until a human (or a customer's reply) resumes it.

    Attributes:
        kind: what is being asked, e.g. ``approve_draft``; decides the choices offered.
        payload: what the reviewer approves (the draft); its hash binds the decision.
        resume_node: the node that runs with the decision.
        reviewers: email addresses of the reviewers.
        deadline_s: seconds from now until ``on_timeout`` applies.
        on_timeout: ``escalate``, ``reject`` or ``needs_review``.
        escalate_to: backup reviewers notified when ``on_timeout`` is ``escalate``.
        context: what the reviewer needs to see to decide (the email, why it
            waits); shown on the review page, not part of the approved payload.
    """

    kind: str
    payload: dict[str, Any]
    resume_node: str
    reviewers: tuple[str, ...] = ()
    deadline_s: float = 24 * 3600
    on_timeout: TimeoutPolicy = "needs_review"
    escalate_to: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """What a node returns: a state update and where the trace goes next.

    Attributes:
        update: top-level state fields to replace.
        goto: the next node's name, ``END``, or a ``Pause``.
        status: final status when ``goto`` is ``END`` (``done`` or ``rejected``).
    """

    update: Mapping[str, Any] = field(default_factory=dict)
    goto: str | Pause = END
    status: Literal["done", "rejected"] = "done"


NodeFn = Callable[[Any, "NodeContext"], Step]


@dataclass(frozen=True)
class Node:
    """One node of a graph, deployed as its own Cloud Function.

    Attributes:
        name: node name, unique in its graph.
        run: the node function.
        routes: every target ``run`` may return (node names, ``END``, or the
            resume node of a pause).
        memory_mb, timeout_s, max_instances, min_instances: deployment sizing.
        pauses: True if ``run`` may return a ``Pause``: only such nodes get the
            permissions to notify reviewers and schedule deadline tasks.
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


@dataclass(frozen=True)
class Graph:
    """A plain declaration of an agent graph."""

    name: str
    entry: str
    state_model: type[BaseModel]
    nodes: Mapping[str, Node]
    description: str = ""

    def __post_init__(self) -> None:
        if self.entry not in self.nodes:
            raise ValueError(f"graph {self.name}: entry node {self.entry!r} is not declared")
        for node in self.nodes.values():
            for target in node.routes:
                if target != END and target not in self.nodes:
                    raise ValueError(
                        f"graph {self.name}: {node.name} routes to undeclared node {target!r}"
                    )

    @classmethod
    def build(
        cls,
        name: str,
        entry: str,
        state_model: type[BaseModel],
        nodes: list[Node],
        description: str = "",
    ) -> Graph:
        """Declare a graph from a list of nodes."""
        return cls(name, entry, state_model, {node.name: node for node in nodes}, description)

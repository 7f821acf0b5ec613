"""Stuck traces: ``running``, no live lease on their step, quiet for longer than its node may take.

A running trace's next step is in Pub/Sub (or the in-process queue) until a
delivery takes its lease (docs/architecture.md §5). When the function that
should run it is gone (a killed server whose subscription stopped, a message
dead-lettered), nothing takes that lease again: the trace stays ``running``
for ever. A trace is **stuck** when it is ``running``, its step has no live
lease (none was taken, or the one taken ran out), and it has not changed for
longer than the node's timeout plus ``GRACE_S`` (a healthy delivery, retried
with backoff, has taken the lease by then). ``repair.retry`` re-publishes the
step of a stuck trace; should the first delivery come back after all, the step
protocol drops the duplicate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .engine.graph import Graph
from .ports.checkpoint import Checkpoint
from .ports.documents import DocumentStore
from .schema import TRACES

GRACE_S = 60.0
"""Beyond the node's timeout: a delivery under Pub/Sub's backoff has taken the lease by then."""

DEFAULT_TIMEOUT_S = 60
"""The timeout assumed for a node this deployment does not know (a graph no longer deployed)."""


@dataclass(frozen=True)
class StuckTrace:
    """A trace no delivery is running.

    Attributes:
        checkpoint: the trace as read.
        quiet_s: seconds since it last changed.
        timeout_s: the timeout of the node its step runs.
        lease_expired_at: when the lease of its step ran out (None: no lease was taken).
    """

    checkpoint: Checkpoint
    quiet_s: float
    timeout_s: int
    lease_expired_at: float | None


def node_timeout_s(graphs: Mapping[str, Graph], graph: str, node: str) -> int:
    """The timeout of ``graph.node`` (``DEFAULT_TIMEOUT_S`` when it is not deployed here)."""
    declared = graphs.get(graph)
    if declared is None or node not in declared.nodes:
        return DEFAULT_TIMEOUT_S
    return declared.nodes[node].timeout_s


def stuck(checkpoint: Checkpoint, graphs: Mapping[str, Graph], now: float) -> StuckTrace | None:
    """The trace as a ``StuckTrace`` if it is stuck at ``now``, else None."""
    if checkpoint.status != "running":
        return None
    lease = checkpoint.lease
    if lease is not None and lease.step == checkpoint.step and lease.expires_at > now:
        return None
    timeout_s = node_timeout_s(graphs, checkpoint.graph, checkpoint.node)
    quiet_s = now - checkpoint.updated_at
    if quiet_s <= timeout_s + GRACE_S:
        return None
    expired = lease.expires_at if lease is not None and lease.step == checkpoint.step else None
    return StuckTrace(checkpoint, quiet_s, timeout_s, expired)


def stuck_traces(
    store: DocumentStore, graphs: Mapping[str, Graph], now: float, limit: int = 100
) -> list[StuckTrace]:
    """The stuck traces, the longest quiet first (at most ``limit``).

    Reads running traces quiet for longer than the shortest node timeout plus
    ``GRACE_S`` (the ``status, updated_at`` index), then checks each one's node.
    """
    shortest = min(
        (node.timeout_s for graph in graphs.values() for node in graph.nodes.values()),
        default=DEFAULT_TIMEOUT_S,
    )
    rows = store.list(
        TRACES.name,
        where=[("status", "==", "running"), ("updated_at", "<", now - shortest - GRACE_S)],
        order_by="updated_at",
        descending=True,
    )
    found = [
        item
        for _, doc in rows
        if (item := stuck(Checkpoint.model_validate(doc), graphs, now)) is not None
    ]
    found.sort(key=lambda item: item.quiet_s, reverse=True)
    return found[:limit]

"""Warm-up deliveries: build a function's runtime before the first real message.

A function's first message pays for its imports, its clients and its node code
(seconds); ``inboxflow dev`` sends each function one warm-up right after it
starts, so a burst of mail just after start-up does not queue behind every
function's cold start. A warm-up is a Pub/Sub-shaped message with the
attribute ``inboxflow_warmup=1`` and no data; it is acknowledged and changes
nothing (one read of a trace that does not exist).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine.runtime import Runtime

WARMUP_ATTRIBUTE = "inboxflow_warmup"
WARMUP_TRACE = "inboxflow-warmup"


def warmup_message() -> dict[str, Any]:
    """The ``message`` of a warm-up push (shaped as Pub/Sub pushes one)."""
    return {
        "data": "",
        "attributes": {WARMUP_ATTRIBUTE: "1"},
        "messageId": "warmup",
        "publishTime": "2026-01-01T00:00:00Z",
    }


def is_warmup(message: Any) -> bool:
    """Whether a push's ``message`` is a warm-up."""
    attributes = message.get("attributes") if isinstance(message, dict) else None
    return isinstance(attributes, dict) and attributes.get(WARMUP_ATTRIBUTE) == "1"


def warm_runtime(rt: Runtime) -> None:
    """Build what the first step needs: the store's client, the publisher, the node's code."""
    from ..engine.graph import LazyNodeFunction

    rt.checkpoints.get_trace(WARMUP_TRACE)
    _ = rt.bus
    served = rt.options.only_node
    for graph in rt.graphs.values():
        for name, node in graph.nodes.items():
            if served in (None, f"{graph.name}.{name}") and isinstance(node.run, LazyNodeFunction):
                node.run.resolve()

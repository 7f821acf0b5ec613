"""Names shared by the runtime, the adapters and the Terraform export."""

from .schema import EFFECTS, STEPS, TRACES

PREFIX = "inboxflow"


def node_id(graph: str, node: str) -> str:
    """The ``INBOXFLOW_NODE`` value that selects a node: ``graph.node``."""
    return f"{graph}.{node}"


def topic_name(graph: str, node: str) -> str:
    """The Pub/Sub topic a node's function is subscribed to."""
    return f"{PREFIX}-{graph}-{node.replace('_', '-')}"


def dead_letter_topic_name(graph: str, node: str) -> str:
    """The dead-letter topic of a node's subscription."""
    return f"{topic_name(graph, node)}-dlq"


def subscription_name(graph: str, node: str) -> str:
    """The push subscription delivering a node's topic to its function."""
    return f"{topic_name(graph, node)}-push"


def function_name(graph: str, node: str) -> str:
    """The Cloud Function (and Cloud Run service) that runs a node."""
    return topic_name(graph, node)


def trace_path(trace_id: str) -> str:
    """Document path of a trace's checkpoint."""
    return TRACES.path(trace_id)


def step_path(trace_id: str, step: int) -> str:
    """Document path of one step log entry (zero-padded so they sort)."""
    return f"{trace_path(trace_id)}/{STEPS.name}/{step:06d}"


def effect_path(trace_id: str, step: int, name: str) -> str:
    """Document path of an effect journal entry."""
    return EFFECTS.path(f"{trace_id}:{step}:{name}")

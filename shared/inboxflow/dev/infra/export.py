"""Export the deployable shape of the graphs for Terraform.

The code is the one source of truth for which functions exist: every node of
every registered graph becomes a Pub/Sub-pushed Cloud Function, beside the
three service functions (approval, Gmail ingest, watch renewal). Per node it
also says what the node may do, so Terraform grants only that: whether it
pauses (Cloud Tasks, reviewer mail), calls the LLM (Gemini key) and talks to
Gmail/Calendar (Gmail credentials).
``write_graph_tfvars`` writes that list to ``infra/graph.auto.tfvars.json``,
which ``terraform plan`` loads automatically; a test fails when the committed
file differs from what this module generates.

The source archive the functions deploy is built by ``archive.py``. Neither
ships in it (``inboxflow/dev/`` is development tooling).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from ...naming import (
    PREFIX,
    dead_letter_topic_name,
    function_name,
    node_id,
    subscription_name,
    topic_name,
)
from ...schema import COLLECTIONS, TTL_FIELD, Collection
from . import REPO_ROOT

DEFAULT_TFVARS_PATH = REPO_ROOT / "infra" / "graph.auto.tfvars.json"

RUNTIME = "python311"
NODE_ENTRY_POINT = "run_node"
GMAIL_TOPIC = "inboxflow-gmail"
TASKS_QUEUE = "inboxflow-approvals"
SHARED_DEAD_LETTER_TOPIC = f"{PREFIX}-dead-letter"
"""Dead letters of functions that serve no node (``adapters.pubsub_bus`` publishes there)."""
END = "__end__"


def ttl_collections(collections: Iterable[Collection] = COLLECTIONS) -> tuple[str, ...]:
    """The collection groups with a TTL policy on ``expire_at``, in declaration order.

    A TTL policy applies to a collection *group*, so ``steps`` covers
    ``traces/{trace_id}/steps``.

    Raises:
        ValueError: a collection declares another TTL field (``infra/firestore.tf``
            sets the policy on ``expire_at`` only).
    """
    names = []
    for collection in collections:
        if collection.ttl_field is None:
            continue
        if collection.ttl_field != TTL_FIELD:
            raise ValueError(
                f"collection {collection.name}: TTL field {collection.ttl_field!r} is not "
                f"{TTL_FIELD!r}, the only one infra/firestore.tf sets a policy on"
            )
        names.append(collection.name)
    return tuple(names)


def composite_indexes(
    collections: Iterable[Collection] = COLLECTIONS,
) -> tuple[dict[str, Any], ...]:
    """The declared composite indexes as Terraform reads them.

    Each field has ``order`` or ``array_config``, never both.
    """
    return tuple(
        {
            "collection": collection.name,
            "fields": [
                {"field_path": field.field_path, "order": field.order}
                if field.order is not None
                else {"field_path": field.field_path, "array_config": field.array_config}
                for field in index.fields
            ],
        }
        for collection in collections
        for index in collection.composite_indexes
    )


def vector_indexes(collections: Iterable[Collection] = COLLECTIONS) -> tuple[dict[str, Any], ...]:
    """The declared vector (``find_nearest``) indexes as Terraform reads them."""
    return tuple(
        {
            "collection": collection.name,
            "prefix_fields": list(index.prefix_fields),
            "field_path": index.field_path,
            "dimension": index.dimension,
        }
        for collection in collections
        for index in collection.vector_indexes
    )


def index_exemptions(collections: Iterable[Collection] = COLLECTIONS) -> tuple[dict[str, str], ...]:
    """The fields exempt from single-field indexing, as Terraform reads them."""
    return tuple(
        {"collection": collection.name, "field": field}
        for collection in collections
        for field in collection.index_exemptions
    )


TTL_COLLECTIONS = ttl_collections()
COMPOSITE_INDEXES = composite_indexes()
"""The composite indexes the queries the code runs need (``composite_index_for``)."""
VECTOR_INDEXES = vector_indexes()
INDEX_EXEMPTIONS = index_exemptions()


_FUNCTION_ID = re.compile(r"^[a-z](?:[-a-z0-9]{2,61}[a-z0-9])$")
_SERVICE_ACCOUNT_ID = re.compile(r"^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$")


class NodeLike(Protocol):
    """The attributes of a graph node that deployment reads."""

    @property
    def name(self) -> str: ...
    @property
    def memory_mb(self) -> int: ...
    @property
    def timeout_s(self) -> int: ...
    @property
    def max_instances(self) -> int: ...
    @property
    def min_instances(self) -> int: ...


class GraphLike(Protocol):
    """The attributes of a graph that deployment reads (``inboxflow.engine.graph.Graph``)."""

    @property
    def name(self) -> str: ...
    @property
    def entry(self) -> str: ...
    @property
    def nodes(self) -> Mapping[str, Any]: ...


def service_account_id(name: str) -> str:
    """A service account id (6-30 chars, ``[a-z][-a-z0-9]*[a-z0-9]``) for a function.

    Short names read as themselves (``ibx-pipeline-classify``); longer ones
    keep a readable prefix and end in a hash of the full name, so two nodes
    never collide.
    """
    slug = re.sub(r"[^a-z0-9-]", "-", name.lower()).strip("-")
    candidate = f"ibx-{slug}"
    if len(candidate) > 30:
        digest = hashlib.sha256(slug.encode()).hexdigest()[:6]
        candidate = f"{candidate[:23].rstrip('-')}-{digest}"
    if not _SERVICE_ACCOUNT_ID.match(candidate):
        raise ValueError(f"cannot derive a valid service account id from {name!r}: {candidate!r}")
    return candidate


def _check_function_id(name: str) -> str:
    if not _FUNCTION_ID.match(name):
        raise ValueError(
            f"{name!r} is not a valid Cloud Functions (2nd gen) id: 4-63 characters of [a-z0-9-]"
        )
    return name


def _sizing(
    memory_mb: int, timeout_s: int, max_instances: int, min_instances: int
) -> dict[str, int]:
    if not 128 <= memory_mb <= 32768:
        raise ValueError(f"memory_mb {memory_mb} outside 128..32768")
    if not 1 <= timeout_s <= 3600:
        raise ValueError(f"timeout_s {timeout_s} outside 1..3600")
    if not 0 <= min_instances <= max_instances:
        raise ValueError(f"instances: need 0 <= min ({min_instances}) <= max ({max_instances})")
    return {
        "memory_mb": int(memory_mb),
        "timeout_s": int(timeout_s),
        "max_instances": int(max_instances),
        "min_instances": int(min_instances),
    }


def uses_llm(node: NodeLike) -> bool:
    """Whether the node gets the Gemini key and ``INBOXFLOW_LLM``: what it declares (``Node.uses_llm``)."""
    return bool(getattr(node, "uses_llm", False))


def uses_gmail(node: NodeLike) -> bool:
    """Whether the node gets the Gmail credentials: declared ``Node.uses_gmail``, or it pauses
    (a pausing node emails its reviewers)."""
    return bool(getattr(node, "uses_gmail", False) or getattr(node, "pauses", False))


def notifies(node: NodeLike) -> bool:
    """Whether the node gets the notification channels' credentials (SES): it pauses (its
    reviewers are notified) or declares ``Node.notifies`` (escalation notices)."""
    return bool(getattr(node, "notifies", False) or getattr(node, "pauses", False))


def _routes(graph: GraphLike, node: NodeLike) -> list[str]:
    """Nodes ``node`` may publish to; every node of the graph if it declares no routes."""
    declared = getattr(node, "routes", None)
    names = list(graph.nodes) if declared is None else [t for t in declared if t != END]
    return sorted(set(names))


def _node_entries(graphs: Iterable[GraphLike]) -> dict[str, dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {}
    for graph in graphs:
        for node in graph.nodes.values():
            key = node_id(graph.name, node.name)
            if key in entries:
                raise ValueError(f"node {key} is declared twice")
            name = _check_function_id(function_name(graph.name, node.name))
            entries[key] = {
                "graph": graph.name,
                "node": node.name,
                "function_name": name,
                "entry_point": NODE_ENTRY_POINT,
                "service_account_id": service_account_id(f"{graph.name}-{node.name}"),
                "topic": topic_name(graph.name, node.name),
                "dead_letter_topic": dead_letter_topic_name(graph.name, node.name),
                "subscription": subscription_name(graph.name, node.name),
                "publishes_to": [topic_name(graph.name, target) for target in _routes(graph, node)],
                "is_entry": node.name == graph.entry,
                "pauses": bool(getattr(node, "pauses", False)),
                "uses_llm": uses_llm(node),
                "uses_gmail": uses_gmail(node),
                "notifies": notifies(node),
                **_sizing(node.memory_mb, node.timeout_s, node.max_instances, node.min_instances),
            }
    return dict(sorted(entries.items()))


def entry_topics(graphs: Iterable[GraphLike]) -> list[str]:
    """Topics of the graphs' entry nodes: where ingest starts traces."""
    return sorted({topic_name(graph.name, graph.entry) for graph in graphs})


def resume_topics(graphs: Iterable[GraphLike]) -> list[str]:
    """Topics of the nodes a pause can resume: the routes of every pausing node.

    The approval function publishes the resume envelope there, and nowhere else.
    """
    topics: set[str] = set()
    for graph in graphs:
        for node in graph.nodes.values():
            if getattr(node, "pauses", False):
                declared = getattr(node, "routes", None)
                targets = list(graph.nodes) if declared is None else declared
                topics.update(topic_name(graph.name, t) for t in targets if t != END)
    return sorted(topics)


def composite_index_for(
    collection: str,
    where: Iterable[tuple[str, str, Any]] = (),
    order_by: str | None = None,
    descending: bool = False,
) -> dict[str, Any] | None:
    """The declared composite index that serves a query, if the query needs one.

    Follows Firestore's rule: equality and array-contains filters alone, or an
    order on a single field, are served by single-field indexes; equality or
    array-contains filters combined with an order (or a range) on another
    field need a composite index with those fields first and the ordered
    field last, in the query's direction.

    Args:
        collection: collection (group) id, e.g. ``approvals``.
        where: ``(field, op, value)`` filters as passed to ``CheckpointStore.list``.
        order_by: the ordered field, if any.
        descending: the order's direction.

    Returns:
        The matching entry of ``COMPOSITE_INDEXES``, or None when the query
        needs no composite index.

    Raises:
        LookupError: the query needs a composite index that is not declared.
    """
    prefix: dict[str, str] = {}
    ranged: str | None = None
    for field_path, op, _ in where:
        if op in {"==", "in"}:
            prefix[field_path] = "ORDER"
        elif op == "array_contains":
            prefix[field_path] = "CONTAINS"
        elif op in {"<", "<=", ">", ">=", "!="}:
            ranged = field_path
        else:
            raise ValueError(f"filter operator {op!r} is not supported by composite_index_for")
    ordered = order_by or ranged
    if ordered is None or not set(prefix) - {ordered}:
        return None
    direction = "DESCENDING" if descending and order_by else "ASCENDING"
    for index in COMPOSITE_INDEXES:
        if index["collection"] != collection:
            continue
        *head, last = index["fields"]
        kinds = {f["field_path"]: "CONTAINS" if f.get("array_config") else "ORDER" for f in head}
        equalities_match = all(
            kinds.get(name) == kind for name, kind in prefix.items() if name != ordered
        )
        if (
            equalities_match
            and set(kinds) == set(prefix) - {ordered}
            and last["field_path"] == ordered
            and last.get("order") == direction
        ):
            return index
    raise LookupError(
        f"query on {collection} (where {sorted(prefix)}, order by {ordered} {direction}) needs a "
        "composite index: declare it on the collection in inboxflow.schema and run "
        "`inboxflow infra export`"
    )


def _service_entries() -> dict[str, dict[str, Any]]:
    """The functions that are not graph nodes (entry points in functions/main.py)."""
    return {
        "approve": {
            "function_name": "inboxflow-approve",
            "entry_point": "approve",
            "service_account_id": service_account_id("approve"),
            "trigger": "http",
            "public": True,  # the single-use reviewer token is the credential
            "topic": None,
            "dead_letter_topic": None,
            "subscription": None,
            **_sizing(512, 60, 10, 0),
        },
        "ingest": {
            "function_name": "inboxflow-ingest",
            "entry_point": "ingest",
            "service_account_id": service_account_id("ingest"),
            "trigger": "pubsub",
            "public": False,
            "topic": GMAIL_TOPIC,
            "dead_letter_topic": f"{GMAIL_TOPIC}-dlq",
            "subscription": f"{GMAIL_TOPIC}-push",
            **_sizing(512, 300, 10, 0),
        },
        "renew_watch": {
            "function_name": "inboxflow-renew-watch",
            "entry_point": "renew_watch",
            "service_account_id": service_account_id("renew-watch"),
            "trigger": "http",
            "public": False,
            "topic": None,
            "dead_letter_topic": None,
            "subscription": None,
            **_sizing(256, 300, 1, 0),
        },
    }


def _load_graphs() -> list[GraphLike]:
    from ...graphs import all_graphs  # imported late: the registry imports every node

    return list(all_graphs(os.environ))


def export_graph_tfvars(graphs: Iterable[GraphLike] | None = None) -> dict[str, Any]:
    """The Terraform variables that describe what the code deploys.

    Args:
        graphs: the graphs to export; defaults to ``inboxflow.graphs.all_graphs()``.

    Returns:
        A JSON-ready mapping of Terraform variable name to value, with stable
        key order so the written file only changes when the graphs do.
    """
    graph_list = _load_graphs() if graphs is None else list(graphs)
    if not graph_list:
        raise ValueError("no graphs to export")
    return {
        "runtime": RUNTIME,
        "node_functions": _node_entries(graph_list),
        "service_functions": _service_entries(),
        "entry_topics": entry_topics(graph_list),
        "resume_topics": resume_topics(graph_list),
        "gmail_topic": GMAIL_TOPIC,
        "shared_dead_letter_topic": SHARED_DEAD_LETTER_TOPIC,
        "tasks_queue": TASKS_QUEUE,
        "firestore_ttl_collections": list(TTL_COLLECTIONS),
        "firestore_composite_indexes": [dict(index) for index in COMPOSITE_INDEXES],
        "firestore_vector_indexes": [dict(index) for index in VECTOR_INDEXES],
        "firestore_index_exemptions": [dict(item) for item in INDEX_EXEMPTIONS],
    }


def render_graph_tfvars(graphs: Iterable[GraphLike] | None = None) -> str:
    """``export_graph_tfvars`` as the exact text written to disk."""
    return json.dumps(export_graph_tfvars(graphs), indent=2) + "\n"


def write_graph_tfvars(
    path: str | Path = DEFAULT_TFVARS_PATH, graphs: Iterable[GraphLike] | None = None
) -> Path:
    """Write ``infra/graph.auto.tfvars.json`` (or ``path``) and return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_graph_tfvars(graphs), encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    """``python -m inboxflow.dev.infra.export [--out PATH] [--check]`` (used by cloudbuild.yaml)."""
    parser = argparse.ArgumentParser(
        prog="python -m inboxflow.dev.infra.export",
        description="write infra/graph.auto.tfvars.json",
    )
    parser.add_argument("--out", default=str(DEFAULT_TFVARS_PATH))
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        current = Path(args.out).read_text(encoding="utf-8") if Path(args.out).exists() else ""
        if current != render_graph_tfvars():
            print(f"{args.out} is out of date: run `inboxflow infra export`")
            return 1
        print(f"{args.out} is up to date")
        return 0
    print(write_graph_tfvars(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Every collection inboxflow stores, with its TTL field and its indexes.

One declaration per collection: the code imports collection names from here
(never a string of its own), and the Terraform export
(``infra_export.export_graph_tfvars``) reads the TTL policies, composite and
vector indexes and index exemptions from here. A sub-collection (``steps``
under ``traces/{trace_id}``) is declared by its group name: Firestore TTL
policies and index settings apply per collection group.

The order of ``COLLECTIONS`` is the order of the exported lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TTL_FIELD = "expire_at"
"""The timestamp a TTL policy deletes documents by (``adapters.firestore_store`` writes it)."""

EMBEDDING_FIELD = "embedding"
"""The field vector indexes are built on, holding a document's embedding."""


EMBEDDING_DIMENSIONS = 768
"""Every embedder returns vectors of this length, so one Firestore vector index serves them all
(``ports.embeddings`` holds embedders to it)."""


@dataclass(frozen=True)
class IndexField:
    """One field of a composite index: ordered, or array-contains (never both)."""

    field_path: str
    order: Literal["ASCENDING", "DESCENDING"] | None = None
    array_config: Literal["CONTAINS"] | None = None

    def __post_init__(self) -> None:
        if (self.order is None) == (self.array_config is None):
            raise ValueError(f"index field {self.field_path!r}: give order or array_config")


@dataclass(frozen=True)
class CompositeIndex:
    """A Firestore composite index: equality/array-contains fields, then an order.

    Attributes:
        fields: the indexed fields, in index order.
        serves: the query the code runs that needs it (documentation only).
    """

    fields: tuple[IndexField, ...]
    serves: str = ""


@dataclass(frozen=True)
class VectorIndex:
    """A ``find_nearest`` index: equality pre-filters, then the embedding."""

    prefix_fields: tuple[str, ...]
    field_path: str = EMBEDDING_FIELD
    dimension: int = EMBEDDING_DIMENSIONS


@dataclass(frozen=True)
class Collection:
    """One stored collection (or collection group).

    Attributes:
        name: the collection id (the first segment of its document paths, or
            the segment under the parent document for a sub-collection).
        ttl_field: the field a TTL policy deletes by, or None (kept forever).
        composite_indexes: the composite indexes its queries need.
        vector_indexes: its vector indexes.
        index_exemptions: fields exempt from single-field indexing (large or
            never filtered on).
        parent: the collection whose documents hold it, for a sub-collection.
    """

    name: str
    ttl_field: str | None = None
    composite_indexes: tuple[CompositeIndex, ...] = ()
    vector_indexes: tuple[VectorIndex, ...] = ()
    index_exemptions: tuple[str, ...] = ()
    parent: str | None = None

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"collection name {self.name!r} must be one path segment")

    def path(self, doc_id: str) -> str:
        """The path of a top-level document of this collection: ``name/doc_id``."""
        if self.parent is not None:
            raise ValueError(f"{self.name} lives under {self.parent}: build its path from there")
        return f"{self.name}/{doc_id}"


def _asc(field_path: str) -> IndexField:
    return IndexField(field_path, order="ASCENDING")


# --- the step protocol --------------------------------------------------------

TRACES = Collection(
    "traces",
    ttl_field=TTL_FIELD,
    composite_indexes=(
        CompositeIndex(
            (_asc("status"), IndexField("updated_at", order="DESCENDING")),
            serves="`inboxflow traces --status S`: traces by status, newest first",
        ),
    ),
    # lease: written twice a hop (taken, then cleared by the commit)
    index_exemptions=(
        "state",
        "next",
        "lease",
        "pause",
        "error",
        "route",
        "traceparent",
        "forked_from",
        "forks",
    ),
)
STEPS = Collection(
    "steps",
    parent="traces",
    ttl_field=TTL_FIELD,
    # a trace's steps are only read in order (step_order): nothing else of them is queried
    index_exemptions=(
        "output_delta",
        "output_patch",
        "removed",
        "inputs_in_checkpoint",
        "tool_calls",
        "llm_calls",
        "error",
        "step_name",
        "input_ref",
        "latency_ms",
        "started_at",
        "attempt",
        "worker",
        "routed_to",
        "route",
    ),
)
RETRIED = Collection("retried", parent="traces")
"""A failed step's log entry as it was before ``inboxflow retry`` reopened the trace."""
EFFECTS = Collection("effects", ttl_field=TTL_FIELD)
FAILURES = Collection("failures", ttl_field=TTL_FIELD)
DELIVERY_ATTEMPTS = Collection("delivery_attempts", ttl_field=TTL_FIELD)
"""Failed deliveries per function and message, where the function dead-letters (the emulator)."""

# --- approvals ------------------------------------------------------------------

APPROVALS = Collection(
    "approvals",
    ttl_field=TTL_FIELD,
    composite_indexes=(
        CompositeIndex(
            (
                IndexField("reviewers", array_config="CONTAINS"),
                _asc("status"),
                _asc("deadline"),
            ),
            serves="a reviewer's pending list: reviewers array-contains R, status == pending",
        ),
        CompositeIndex(
            (_asc("status"), _asc("deadline")),
            serves="every pending approval by deadline (`inboxflow approvals`)",
        ),
    ),
    index_exemptions=("payload", "applied_payload", "context"),
)
APPROVAL_TOKENS = Collection("approval_tokens", ttl_field=TTL_FIELD)

# --- retrieval (vectors live in the collection of their documents) ----------------

# Searches pre-filter on ``embedder == name`` (vectors of different embedders are
# not comparable); the support specialists' KB searches also filter on category.
KB_CHUNKS = Collection(
    "kb_chunks",
    vector_indexes=(VectorIndex(("embedder",)), VectorIndex(("embedder", "category"))),
    index_exemptions=(EMBEDDING_FIELD, "text"),
)
EMAIL_VECTORS = Collection(
    "email_vectors",
    vector_indexes=(VectorIndex(("embedder",)),),
    index_exemptions=(EMBEDDING_FIELD,),
)

# --- ingestion --------------------------------------------------------------------

MAIL_CLAIMS = Collection("mail_claims", ttl_field=TTL_FIELD)
THREADS = Collection("threads", ttl_field=TTL_FIELD)
TRACE_REPLIES = Collection(
    "trace_replies",
    ttl_field=TTL_FIELD,
    composite_indexes=(
        CompositeIndex(
            (_asc("trace_id"), _asc("received_at")),
            serves="the replies queued on a trace, oldest first (reply_queue.py)",
        ),
    ),
    index_exemptions=("email",),
)
REVIEW_MAILS = Collection("review_mails", ttl_field=TTL_FIELD)
REVIEW_THREADS = Collection("review_threads", ttl_field=TTL_FIELD)
MAIL_STAMPS = Collection("mail_stamps", ttl_field=TTL_FIELD)
QUOTE_KEYS = Collection("quote_keys", ttl_field=TTL_FIELD)
MAILBOXES = Collection("mailboxes")
INGEST_EVENTS = Collection("ingest_events")

# --- features' long-lived data ------------------------------------------------------

MEMORY = Collection("memory")
MEMORY_HISTORY = Collection("history", parent="memory")
"""Earlier versions of a memory document (the last few kept)."""
TICKETS = Collection("tickets")
QUOTES = Collection("quotes")
RESERVATIONS = Collection("reservations")
AGENT_RUNS = Collection("agent_runs")
LLM_CALLS = Collection("llm_calls")
EMAIL_EVENTS = Collection("email_events")

# --- the embedded adapters' own records ---------------------------------------------

TASKS = Collection("tasks")
"""``adapters.sqlite_tasks``: the embedded task queue."""
OUTBOX = Collection("outbox")
"""``adapters.notifiers``: notifications kept instead of sent."""
CONTACTS = Collection("contacts")
CALENDAR_EVENTS = Collection("calendar_events")
SAVED_REPLIES = Collection("saved_replies")
MAILBOX_DRAFTS = Collection("mailbox_drafts")
MAILBOX_SENT = Collection("mailbox_sent")
MAILBOX_READ = Collection("mailbox_read")

COLLECTIONS: tuple[Collection, ...] = (
    TRACES,
    STEPS,
    RETRIED,
    EFFECTS,
    FAILURES,
    DELIVERY_ATTEMPTS,
    APPROVALS,
    APPROVAL_TOKENS,
    KB_CHUNKS,
    EMAIL_VECTORS,
    MAIL_CLAIMS,
    THREADS,
    TRACE_REPLIES,
    REVIEW_MAILS,
    REVIEW_THREADS,
    MAIL_STAMPS,
    QUOTE_KEYS,
    MAILBOXES,
    INGEST_EVENTS,
    MEMORY,
    MEMORY_HISTORY,
    TICKETS,
    QUOTES,
    RESERVATIONS,
    AGENT_RUNS,
    LLM_CALLS,
    EMAIL_EVENTS,
    TASKS,
    OUTBOX,
    CONTACTS,
    CALENDAR_EVENTS,
    SAVED_REPLIES,
    MAILBOX_DRAFTS,
    MAILBOX_SENT,
    MAILBOX_READ,
)


def collection(name: str) -> Collection:
    """The declaration named ``name`` (a collection or collection-group id).

    Raises:
        LookupError: no collection of that name is declared.
    """
    for declared in COLLECTIONS:
        if declared.name == name:
            return declared
    raise LookupError(f"no collection {name!r} in inboxflow.schema")

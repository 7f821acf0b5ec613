"""Every collection inboxflow stores, with its TTL field, its indexes, its retention and
the personal data it can hold.

One declaration per collection: the code imports collection names from here
(never a string of its own), and the Terraform export
(``infra_export.export_graph_tfvars``) reads the TTL policies, composite and
vector indexes and index exemptions from here. A sub-collection (``steps``
under ``traces/{trace_id}``) is declared by its group name: Firestore TTL
policies and index settings apply per collection group.

Each collection also says how long its documents are kept (``Retention``: the
README's "Personal data" table is generated from it, and a TTL'd retention is
the TTL policy Terraform sets) and what personal data they can hold
(``PersonalData``: the fields, the keys by which a document is about a person,
and those by which it only mentions them). A collection that holds none says so
(``NO_PERSONAL_DATA``); a test refuses a collection that says nothing.

The order of ``COLLECTIONS`` is the order of the exported lists.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal, get_args

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


KeyKind = Literal["address", "customer_id", "trace_id", "quote_id", "message_id", "mail_text"]
"""What a person is found by: their email address, an identifier that leads to them, or the
text of their own mail (``mail_text``: subjects and body lines, to find and erase where another
person's record repeats them). Never a Gmail thread: anyone who names a message of it in
``References`` shares it, so it would make one person's records another's."""

DOCUMENT_ID = "__id__"
"""A ``PersonKey.field`` naming the document's id rather than one of its fields."""
ANYWHERE = "*"
"""A ``PersonKey.field`` naming every string anywhere in the document (and its id)."""

KEY_KINDS: tuple[KeyKind, ...] = get_args(KeyKind)
"""``KeyKind``'s names, in its order."""


@dataclass(frozen=True)
class PersonKey:
    """Where in a document a person's key can be found.

    Attributes:
        kind: what the key is (an address, a trace id ...).
        field: a dotted path into the document (lists are searched item by
            item), ``DOCUMENT_ID`` for the document id, or ``ANYWHERE``. An
            address matches wherever it appears in the text; an identifier
            matches a whole value or one ``:``-, ``-``- or ``/``-separated
            part of it (``{trace_id}:{step}:{name}``); ``mail_text`` (a
            subject, a body line of some length) anywhere in a string.
    """

    kind: KeyKind
    field: str

    def __post_init__(self) -> None:
        if self.kind not in KEY_KINDS:
            raise ValueError(f"unknown person key kind {self.kind!r} (known: {KEY_KINDS})")
        if not self.field:
            raise ValueError(f"person key {self.kind}: give a field, DOCUMENT_ID or ANYWHERE")


@dataclass(frozen=True)
class PersonalData:
    """The personal data a collection can hold, and how a person's documents are found in it.

    A document is *about* a person when a ``found_by`` key matches (they sent
    or received the email, it is their ticket, the approval of their trace):
    an erasure deletes it, and its ``leads_to`` find more. Otherwise it may
    only *mention* them (a ``mentioned_in`` key matches: their email retrieved
    into another person's trace, a memory note, a calendar entry): an erasure
    redacts it in place (the entries naming them dropped, their address and
    the text of their mail replaced), the rest is kept, and nothing it names
    is followed, so another person's records never count as theirs.

    Attributes:
        fields: the fields that can hold personal data (dotted paths, for the
            README and reviewers; ``()`` when it holds none).
        found_by: the keys by which a document is about a person.
        leads_to: what a document about the person gives for finding more of
            their documents elsewhere (a trace's id finds its effects; its
            email's text is erased where others' records repeat it).
        mentioned_in: the keys by which a document only mentions a person.
        others: lists (dotted paths) of other people's records copied into a document
            about the person (the pipeline's retrieved past emails): its export keeps of
            each item only what is the person's own (``personal.matching.mentioning``).
    """

    fields: tuple[str, ...]
    found_by: tuple[PersonKey, ...]
    leads_to: tuple[PersonKey, ...] = ()
    mentioned_in: tuple[PersonKey, ...] = ()
    others: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if bool(self.fields) != self.holds_personal_data:
            raise ValueError(
                "personal data needs both its fields and the keys it is found or mentioned by"
            )
        if self.leads_to and not self.found_by:
            raise ValueError("only a document about a person leads to more of theirs")

    @property
    def holds_personal_data(self) -> bool:
        """Whether documents of the collection can hold anything about a person."""
        return bool(self.found_by or self.mentioned_in)


NO_PERSONAL_DATA = PersonalData(fields=(), found_by=())
"""The declaration of a collection that holds nothing about anyone."""


@dataclass(frozen=True)
class Retention:
    """How long a collection's documents are kept.

    Attributes:
        days: days until the TTL policy deletes a document (``expire_at``
            set that far ahead when written), or None: kept until deleted.
        rule: one line for the README: from when the days count, or who deletes it.
    """

    days: float | None
    rule: str

    def text(self) -> str:
        """``30 days: ...`` or ``until deleted: ...``, as the README's table says it."""
        unit = "day" if self.days == 1 else "days"
        span = "until deleted" if self.days is None else f"{self.days:g} {unit}"
        return f"{span}: {self.rule}"


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
        retention: how long its documents are kept (None: undeclared, which a test refuses).
        personal: the personal data it can hold (None: undeclared, which a test refuses).
    """

    name: str
    ttl_field: str | None = None
    composite_indexes: tuple[CompositeIndex, ...] = ()
    vector_indexes: tuple[VectorIndex, ...] = ()
    index_exemptions: tuple[str, ...] = ()
    parent: str | None = None
    retention: Retention | None = None
    personal: PersonalData | None = None

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"collection name {self.name!r} must be one path segment")
        if self.retention is not None and (self.retention.days is None) != (self.ttl_field is None):
            raise ValueError(
                f"collection {self.name}: a retention in days is kept by a TTL field, "
                "and a TTL field needs a retention in days"
            )

    def path(self, doc_id: str) -> str:
        """The path of a top-level document of this collection: ``name/doc_id``."""
        if self.parent is not None:
            raise ValueError(f"{self.name} lives under {self.parent}: build its path from there")
        return f"{self.name}/{doc_id}"


def _asc(field_path: str) -> IndexField:
    return IndexField(field_path, order="ASCENDING")


def _may_decide() -> IndexField:
    return IndexField("may_decide", array_config="CONTAINS")


def _key(kind: KeyKind, *fields: str) -> tuple[PersonKey, ...]:
    return tuple(PersonKey(kind, field) for field in fields)


_MENTIONS = _key("address", ANYWHERE)
"""The person's address anywhere in the document (a sender, a recipient, a body, a note)."""


_RETRIEVED_EMAILS = "context.similar_emails"
"""Where the pipeline's retrieval keeps past emails in a trace's state: other people's mail."""


def _parties(email: str) -> tuple[PersonKey, ...]:
    """The email at ``email`` (a dotted path to a ``mail.Email``) is from, to or copied to them,
    or forwards a message they wrote (``Email.writer``)."""
    return _key(
        "address", *(f"{email}.{role}.address" for role in ("sender", "writer", "to", "cc"))
    )


def _mail_text(email: str) -> tuple[PersonKey, ...]:
    """The text of the email at ``email``: erased where others' records repeat it."""
    return _key("mail_text", f"{email}.subject", f"{email}.body_text")


_TRACE_DAYS = 30
"""``RuntimeOptions.retention_days``: traces, their steps and effects, approvals, audit records."""
_AFTER_LAST_STEP = "after the trace's last step (`RuntimeOptions.retention_days`)"


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
        "shadow_of",
        "log",  # the step log's entries while they fit (``ports/inline_log.py``)
        "log_bytes",
        "log_spilled",
    ),
    retention=Retention(
        _TRACE_DAYS, f"{_AFTER_LAST_STEP}; a waiting one at least 7 days past its deadline"
    ),
    personal=PersonalData(
        fields=("state", "next", "pause", "error", "log"),
        # their email, or their inquiry through a helpdesk form (the agent's Crisp mail)
        found_by=(
            *_parties("state.email"),
            *_key("address", "state.inquiry.sender_email", "state.inquiry.reply_to"),
        ),
        leads_to=(
            PersonKey("trace_id", DOCUMENT_ID),
            PersonKey("message_id", "state.email.message_id"),
            *_mail_text("state.email"),
        ),
        mentioned_in=_MENTIONS,
        others=(f"state.{_RETRIEVED_EMAILS}",),
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
        "guards",
    ),
    retention=Retention(_TRACE_DAYS, _AFTER_LAST_STEP),
    personal=PersonalData(
        fields=("output_delta", "output_patch", "tool_calls", "llm_calls", "error"),
        found_by=(),  # erased with a trace about the person
        mentioned_in=_MENTIONS,
        # the state change of the step that retrieved them (``runtime._delta``)
        others=(
            f"output_delta.{_RETRIEVED_EMAILS}",
            "output_patch.{}.set.{}".format(*_RETRIEVED_EMAILS.split(".", 1)),
        ),
    ),
)
RETRIED = Collection(
    "retried",
    parent="traces",
    retention=Retention(None, "outlives its trace (no TTL)"),
    personal=PersonalData(
        fields=("output_delta", "error"),
        found_by=(),
        mentioned_in=_MENTIONS,
        others=(f"output_delta.{_RETRIEVED_EMAILS}",),
    ),
)
"""A failed step's log entry as it was before ``inboxflow retry`` reopened the trace."""
EFFECTS = Collection(
    "effects",
    ttl_field=TTL_FIELD,
    # read by key; a shadow's held effects by trace_id and held_path (engine/shadow.py)
    index_exemptions=("result", "would", "started_at", "done_at", "attempts", "reconciled"),
    retention=Retention(_TRACE_DAYS, "after the step that ran the effect"),
    # a shadow's held effects keep what they would have done (``would``: a tool's arguments)
    personal=PersonalData(
        fields=("result", "would"), found_by=_key("trace_id", DOCUMENT_ID), mentioned_in=_MENTIONS
    ),
)
FAILURES = Collection(
    "failures",
    ttl_field=TTL_FIELD,
    retention=Retention(_TRACE_DAYS, "after the failure was recorded"),
    personal=PersonalData(
        fields=("message", "error", "reason"),
        found_by=_key("trace_id", "trace_id"),
        mentioned_in=_MENTIONS,
    ),
)
DELIVERY_ATTEMPTS = Collection(
    "delivery_attempts",
    ttl_field=TTL_FIELD,
    retention=Retention(7, "after the failed delivery (`delivery_attempts.RETENTION_S`)"),
    personal=PersonalData(fields=("last_error",), found_by=_MENTIONS),
)
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
        CompositeIndex(
            (_may_decide(), _asc("status"), _asc("deadline")),
            serves="a reviewer's inbox page (approvals/inbox.py): may_decide array-contains R, "
            "status == pending, by deadline",
        ),
        *(
            CompositeIndex(
                (_may_decide(), _asc("status"), _asc(narrowed), _asc("deadline")),
                serves=f"a reviewer's inbox page filtered by {narrowed}; also its counts",
            )
            for narrowed in ("graph", "kind", "mailbox")
        ),
        CompositeIndex(
            (_may_decide(), IndexField("decided_at", order="DESCENDING")),
            serves="a reviewer's inbox history: may_decide array-contains R, decided since T",
        ),
    ),
    # queried by trace_id, reviewers, may_decide, status, deadline, graph, kind, mailbox,
    # decided_at (the indexes above): nothing else of an approval is filtered or ordered on
    index_exemptions=(
        "payload",
        "applied_payload",
        "context",
        "payload_hash",
        "applied_payload_hash",
        "comment",
        "notify_errors",
        "escalate_to",
        "window_s",
        "on_timeout",
        "round",
        "resume_node",
        "edited",
        "resumed_at",
        "timed_out_at",
    ),
    retention=Retention(_TRACE_DAYS, "as its trace, and at least 7 days past its deadline"),
    personal=PersonalData(
        fields=("payload", "applied_payload", "context", "decision", "reviewers"),
        found_by=_key("trace_id", "trace_id"),
        mentioned_in=_MENTIONS,
    ),
)
APPROVAL_TOKENS = Collection(
    "approval_tokens",
    ttl_field=TTL_FIELD,
    index_exemptions=("form_key", "expires_at", "used_at"),  # read by the token's hash
    retention=Retention(7, "after the approval's deadline (`TOKEN_RETENTION_S`)"),
    personal=PersonalData(fields=("reviewer",), found_by=_key("trace_id", "approval_id")),
)
INBOX_SIGN_INS = Collection(
    "inbox_sign_ins",
    ttl_field=TTL_FIELD,
    retention=Retention(1, "after the sign-in link expires (`SIGN_IN_RETENTION_S`)"),
    personal=PersonalData(fields=("reviewer",), found_by=_key("address", "reviewer")),
)
"""``approvals.sign_in``: single-use inbox sign-in tokens by hash, bound to a reviewer."""
INBOX_SESSIONS = Collection(
    "inbox_sessions",
    ttl_field=TTL_FIELD,
    retention=Retention(1, "after the session ends (`SESSION_RETENTION_S`)"),
    personal=PersonalData(fields=("reviewer",), found_by=_key("address", "reviewer")),
)
"""``approvals.sessions``: reviewers' inbox sessions by the hash of their cookie."""

# --- retrieval (vectors live in the collection of their documents) ----------------

# Searches pre-filter on ``embedder == name`` (vectors of different embedders are
# not comparable); the support specialists' KB searches also filter on category.
KB_CHUNKS = Collection(
    "kb_chunks",
    vector_indexes=(VectorIndex(("embedder",)), VectorIndex(("embedder", "category"))),
    index_exemptions=(EMBEDDING_FIELD, "text"),
    retention=Retention(None, "the knowledge base, replaced by `inboxflow kb`"),
    personal=NO_PERSONAL_DATA,
)
EMAIL_VECTORS = Collection(
    "email_vectors",
    vector_indexes=(VectorIndex(("embedder",)),),
    index_exemptions=(EMBEDDING_FIELD,),
    retention=Retention(None, "past emails the pipeline retrieves (no TTL)"),
    personal=PersonalData(
        fields=("sender", "subject", "excerpt", EMBEDDING_FIELD),
        found_by=(
            *_key("address", "sender"),
            *_key("message_id", "message_id", DOCUMENT_ID),
        ),
        mentioned_in=_key("address", "subject", "excerpt"),
    ),
)

# --- ingestion --------------------------------------------------------------------

_INGEST_DAYS = 30
"""``IngestOptions.retention_days``: claims, ingest failures and full-sync records."""

MAIL_CLAIMS = Collection(
    "mail_claims",
    ttl_field=TTL_FIELD,
    retention=Retention(
        _INGEST_DAYS, "after the message was claimed (`IngestOptions.retention_days`)"
    ),
    personal=PersonalData(
        fields=("thread_id", "reason"),
        found_by=_key("trace_id", "trace_id"),
    ),
)
THREADS = Collection(
    "threads",
    ttl_field=TTL_FIELD,
    retention=Retention(90, "after the trace last waited in the thread"),
    personal=PersonalData(
        fields=("thread_id", "parties"),
        found_by=_key("trace_id", "trace_id"),
        mentioned_in=_key("address", "parties"),
    ),
)
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
    retention=Retention(90, "after the reply was queued"),
    personal=PersonalData(
        fields=("email",),
        found_by=(*_key("trace_id", "trace_id"), *_parties("email")),
        leads_to=_mail_text("email"),
        mentioned_in=_MENTIONS,
    ),
)
REVIEW_MAILS = Collection(
    "review_mails",
    ttl_field=TTL_FIELD,
    retention=Retention(_TRACE_DAYS, "as the approval it was sent for"),
    personal=PersonalData(fields=("reviewer",), found_by=_key("trace_id", "trace_id")),
)
REVIEW_THREADS = Collection(
    "review_threads",
    ttl_field=TTL_FIELD,
    retention=Retention(_TRACE_DAYS, "as the approval it was sent for"),
    personal=PersonalData(fields=("reviewer",), found_by=_key("trace_id", "trace_id")),
)
MAIL_STAMPS = Collection(
    "mail_stamps",
    ttl_field=TTL_FIELD,
    # read by the effect key's hash, or queried by stamp (a reply, a crashed send)
    index_exemptions=("approval_id",),
    retention=Retention(90, "after the message was written (`mail_stamps.RETENTION_S`)"),
    personal=PersonalData(fields=("trace_key",), found_by=_key("trace_id", "trace_id")),
)
QUOTE_KEYS = Collection(
    "quote_keys",
    ttl_field=TTL_FIELD,
    index_exemptions=("result", "fingerprint"),  # read by the key's hash
    retention=Retention(90, "after the quoting call (`KEY_RETENTION_S`)"),
    personal=PersonalData(
        fields=("result",),
        found_by=(
            *_key("address", "result.applicant.email"),
            *_key("quote_id", "result.quote_id"),
        ),
        mentioned_in=_MENTIONS,
    ),
)
MAILBOXES = Collection(
    "mailboxes",
    retention=Retention(None, "our own mailboxes"),
    personal=NO_PERSONAL_DATA,
)
INGEST_EVENTS = Collection(
    "ingest_events",
    ttl_field=TTL_FIELD,
    retention=Retention(_INGEST_DAYS, "after the full sync it records"),
    personal=NO_PERSONAL_DATA,
)

# --- features' long-lived data ------------------------------------------------------

MEMORY = Collection(
    "memory",
    retention=Retention(None, "a mailbox's preferences (the person's entries are erased)"),
    personal=PersonalData(
        fields=("profile", "why", "sources"),
        found_by=(),  # the mailbox's: it only mentions people
        mentioned_in=(*_MENTIONS, *_key("trace_id", "sources.source")),
    ),
)
MEMORY_HISTORY = Collection(
    "history",
    parent="memory",
    retention=Retention(None, "the last 50 changes of a memory document"),
    personal=PersonalData(
        fields=("profile", "why", "source"),
        found_by=(),
        mentioned_in=(*_MENTIONS, *_key("trace_id", "source")),
    ),
)
"""Earlier versions of a memory document (the last few kept)."""
GUEST_PREFIX = "guest_"


def guest_customer_id(address: str) -> str:
    """The ``customer_id`` of a sender the CRM does not know: ``guest_`` and a hash of ``address``.

    The support desk files a guest's tickets under it; a person's data is found by it.

    Args:
        address: the sender's ``mail.addresses.address_key``.
    """
    digest = hashlib.sha256(address.strip().encode("utf-8")).hexdigest()[:12]
    return f"{GUEST_PREFIX}{digest}"


TICKETS = Collection(
    "tickets",
    retention=Retention(None, "support tickets"),
    personal=PersonalData(
        fields=("customer_email", "subject", "messages", "working"),
        found_by=(
            *_key("address", "customer_email"),
            *_key("customer_id", "customer_id"),
            *_key("trace_id", "traces", "opened_by"),
        ),
        mentioned_in=_MENTIONS,
    ),
)
QUOTES = Collection(
    "quotes",
    retention=Retention(None, "insurance quotes"),
    personal=PersonalData(
        fields=("quote",),
        found_by=(*_key("address", "quote.applicant.email"), *_key("quote_id", DOCUMENT_ID)),
        leads_to=_key("quote_id", DOCUMENT_ID),
        mentioned_in=_MENTIONS,
    ),
)
RESERVATIONS = Collection(
    "reservations",
    retention=Retention(None, "pharmacy reservations (health data)"),
    personal=PersonalData(
        fields=("patient", "drug"), found_by=_key("address", "patient"), mentioned_in=_MENTIONS
    ),
)
_AUDIT = Retention(_TRACE_DAYS, "as the agent's trace")
AGENT_RUNS = Collection(
    "agent_runs",
    ttl_field=TTL_FIELD,
    retention=_AUDIT,
    personal=PersonalData(
        fields=("tool_calls_log", "final_reply"),
        found_by=_key("trace_id", "trace_id"),
        mentioned_in=_MENTIONS,
    ),
)
LLM_CALLS = Collection(
    "llm_calls",
    ttl_field=TTL_FIELD,
    retention=_AUDIT,
    personal=PersonalData(fields=("error",), found_by=_key("trace_id", "trace_id")),
)
EMAIL_EVENTS = Collection(
    "email_events",
    ttl_field=TTL_FIELD,
    retention=_AUDIT,
    personal=PersonalData(fields=("subject",), found_by=_key("trace_id", "trace_id")),
)
REVIEWER_DIGESTS = Collection(
    "reviewer_digests",
    retention=Retention(None, "one per reviewer with digests (the last few sent, counts only)"),
    personal=PersonalData(fields=("reviewer",), found_by=_key("address", "reviewer")),
)
"""One per reviewer with digests (``approvals/digests.py``): when the last went out, the one
being sent (claimed in a transaction before it is sent), the last few sent."""

# --- the embedded adapters' own records ---------------------------------------------

TASKS = Collection(
    "tasks",
    retention=Retention(None, "the embedded task queue's deadlines"),
    personal=PersonalData(fields=("payload",), found_by=_key("trace_id", DOCUMENT_ID)),
)
"""``adapters.sqlite_tasks``: the embedded task queue."""
OUTBOX = Collection(
    "outbox",
    retention=Retention(None, "notifications kept instead of sent"),
    personal=PersonalData(
        fields=("to", "subject", "text", "html"),
        found_by=(*_key("address", "to"), *_key("trace_id", "trace_key")),
        mentioned_in=_MENTIONS,
    ),
)
"""``adapters.notifiers``: notifications kept instead of sent."""
CONTACTS = Collection(
    "contacts",
    retention=Retention(None, "the embedded address book"),
    personal=PersonalData(
        fields=("email", "name"), found_by=_key("address", "email"), mentioned_in=_MENTIONS
    ),
)
CALENDAR_EVENTS = Collection(
    "calendar_events",
    retention=Retention(None, "the embedded calendar (the person's entries are erased)"),
    personal=PersonalData(fields=("attendees", "title"), found_by=(), mentioned_in=_MENTIONS),
)
SAVED_REPLIES = Collection(
    "saved_replies",
    retention=Retention(None, "reply templates"),
    personal=NO_PERSONAL_DATA,
)
_MAILBOX_MESSAGE = PersonalData(
    fields=("to", "subject", "body"),
    found_by=(
        *_key("address", "to"),
        *_key("trace_id", "trace_key"),
    ),
    mentioned_in=_MENTIONS,
)
MAILBOX_DRAFTS = Collection(
    "mailbox_drafts",
    retention=Retention(None, "the embedded mailbox's drafts"),
    personal=_MAILBOX_MESSAGE,
)
MAILBOX_SENT = Collection(
    "mailbox_sent",
    retention=Retention(None, "the embedded mailbox's sent mail"),
    personal=_MAILBOX_MESSAGE,
)
MAILBOX_READ = Collection(
    "mailbox_read",
    retention=Retention(None, "the embedded mailbox's read marks"),
    personal=PersonalData(fields=("message_id",), found_by=_key("message_id", "message_id")),
)

# --- erasure ----------------------------------------------------------------------

ERASURES = Collection(
    "erasures",
    retention=Retention(None, "proof of each erasure: a hash of the address, never the address"),
    personal=NO_PERSONAL_DATA,
)
"""``personal.erasure``: one record per erased address, by the address's SHA-256."""

# --- evaluation data sets collected from decisions (``inboxflow eval collect``) ---------

PSEUDONYM_KEYS = Collection(
    "pseudonym_keys",
    retention=Retention(None, "the key that pseudonymises collected eval cases (never exported)"),
    personal=NO_PERSONAL_DATA,
)
"""``dev.eval.pseudonyms``: the deployment's HMAC key for collected cases' pseudonyms."""
EVAL_COLLECTED = Collection(
    "eval_collected",
    retention=Retention(None, "which decisions went into a collected data set"),
    personal=PersonalData(
        fields=("people",),
        found_by=_key("trace_id", "trace_id"),
    ),
)
"""``dev.eval.collect``: one per collected approval (``approval_id``, ``trace_id``,
``decided_at``, ``collected_at``, ``case_id``, ``people``: the SHA-256 of each address
the case holds, as erasure records name them); the reviewer inbox's history reads it."""

COLLECTIONS: tuple[Collection, ...] = (
    TRACES,
    STEPS,
    RETRIED,
    EFFECTS,
    FAILURES,
    DELIVERY_ATTEMPTS,
    APPROVALS,
    APPROVAL_TOKENS,
    INBOX_SIGN_INS,
    INBOX_SESSIONS,
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
    REVIEWER_DIGESTS,
    TASKS,
    OUTBOX,
    CONTACTS,
    CALENDAR_EVENTS,
    SAVED_REPLIES,
    MAILBOX_DRAFTS,
    MAILBOX_SENT,
    MAILBOX_READ,
    ERASURES,
    PSEUDONYM_KEYS,
    EVAL_COLLECTED,
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

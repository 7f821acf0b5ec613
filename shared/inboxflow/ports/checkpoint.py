"""The checkpoint port: the step protocol (docs/architecture.md §5).

A trace is one checkpoint document and its step log; a worker leases a step,
runs it and commits the new checkpoint, the step's log entry and the documents
born with the step in one transaction. ``CheckpointStore`` is what the runtime
needs and nothing more. ``DocumentCheckpointStore`` builds it once, for every
backend, on the documents port's primitives (``ports/documents.py``): the
SQLite and Firestore adapters derive from it (one database holds both) and
override the hot paths with cheaper writes.

Paths: ``traces/{trace_id}`` and ``traces/{trace_id}/steps/{step:06d}``; a store
with an ``inline_policy`` keeps the step log's entries in the checkpoint
document's ``log`` map while they fit (``ports/inline_log.py``).
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import LeaseHeld, StepMoved
from ..field_defaults import empty_dict, empty_list
from ..naming import step_path, trace_path
from ..schema import STEPS
from . import inline_log
from .documents import DocumentExists, DocumentStore, Transaction

Status = Literal["running", "waiting", "done", "rejected", "failed", "needs_review"]
TERMINAL: frozenset[str] = frozenset({"done", "rejected", "failed", "needs_review"})
SCHEMA_VERSION = 1


class _Record(BaseModel):
    """A stored record: its JSON writes infinities and NaN as ``json`` does (``Infinity``, ``NaN``)."""

    model_config = ConfigDict(ser_json_inf_nan="constants", defer_build=True)


class Lease(_Record):
    """Who is running a step, until when."""

    step: int
    owner: str
    expires_at: float


class TraceRoute(_Record):
    """How a trace was started from an email, recorded at step 0.

    Attributes:
        rule: the routing rule that matched (``None``: no rule matched, or the
            graph was named explicitly).
        profile: the agent profile the rule (or the caller) named.
        mailbox: the mailbox whose rules applied.
        blocked: why loop protection stopped the email before any node ran
            (the trace ends ``done`` at once); ``None`` when it ran.
        outside_thread: why the email did not join the thread it names (its sender
            is not a party of it, ``threads.py``); ``None`` when it did or is new.
    """

    rule: str | None = None
    profile: str | None = None
    mailbox: str | None = None
    blocked: str | None = None
    outside_thread: str | None = None


class TraceLink(_Record):
    """A fork's tie to the trace it was forked from (``inboxflow replay --from-step``)."""

    trace_id: str
    step: int
    """The original's step whose stored state the fork started from."""
    at: float


class Checkpoint(_Record):
    """The ``traces/{trace_id}`` document."""

    trace_id: str
    graph: str
    status: Status
    step: int
    node: str
    state: dict[str, Any]
    next: list[dict[str, Any]] = Field(default_factory=empty_list)
    lease: Lease | None = None
    pause: dict[str, Any] | None = None
    error: str | None = None
    route: TraceRoute | None = None
    """How the trace was started (routing rule, profile, a loop-protection block)."""
    traceparent: str | None = None
    """W3C trace context of the trace's latest span: what a resume continues (``telemetry``)."""
    forked_from: TraceLink | None = None
    """Set on a fork: the trace and step it started from."""
    forks: list[TraceLink] = Field(default_factory=empty_list)
    """Set on an original: the forks made of it (their trace ids and starting steps)."""
    shadow: bool = False
    """A shadow trace: its effects are held, its pauses ask nobody (``engine/shadow.py``)."""
    shadow_of: str | None = None
    """Set on a shadow trace: the live trace it runs beside."""
    created_at: float
    updated_at: float
    expire_at: float
    schema_version: int = SCHEMA_VERSION

    @property
    def terminal(self) -> bool:
        """True when the trace can no longer move."""
        return self.status in TERMINAL


class StepLog(_Record):
    """One ``traces/{trace_id}/steps/{step:06d}`` entry: a delta, never a snapshot."""

    step_name: str
    step_order: int
    input_ref: str | None = None
    output_delta: dict[str, Any] = Field(default_factory=empty_dict)
    """Top-level state fields replaced by the step."""
    output_patch: dict[str, dict[str, Any]] = Field(default_factory=empty_dict)
    """Fields changed in part: an object's ``{field: {"set": {key: value}, "unset": [key]}}``,
    a list that only grew ``{field: {"append": [items]}}``."""
    removed: list[str] = Field(default_factory=empty_list)
    inputs_in_checkpoint: list[str] = Field(default_factory=empty_list)
    """Entry 0 only: frozen input fields not repeated here; fold takes them from the checkpoint."""
    latency_ms: float = 0.0
    started_at: float
    attempt: int = 1
    worker: str | None = None
    """``host:pid:delivery`` of the process that ran the step (the lease owner)."""
    error: str | None = None
    routed_to: str | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=empty_list)
    llm_calls: list[dict[str, Any]] = Field(default_factory=empty_list)
    guards: list[dict[str, str]] = Field(default_factory=empty_list)
    """The node's guards that replaced its proposed step: ``{"guard": name, "reason": why}``."""
    route: TraceRoute | None = None
    """Entry 0 only: how the trace was started."""
    expire_at: float | None = None


class CheckpointStore(ABC):
    """The step protocol's persistence: traces, leases, one-transaction commits, step logs."""

    @abstractmethod
    def get_trace(self, trace_id: str) -> Checkpoint | None:
        """The checkpoint of a trace, or None."""

    @abstractmethod
    def create_trace(self, checkpoint: Checkpoint, start: StepLog) -> bool:
        """Create a trace and its step-0 log entry (the initial state) atomically.

        Returns False if the trace already exists.
        """

    def take_lease(
        self,
        trace_id: str,
        step: int,
        owner: str,
        now: float,
        ttl_s: float,
        admit: Callable[[Checkpoint | None], None] | None = None,
    ) -> Checkpoint:
        """Lease ``step`` of a trace for ``owner`` (docs/architecture.md §5, rules 1 and 2).

        The checkpoint is read once: ``admit`` sees it first and may refuse
        the delivery by raising (duplicate, early, wrong node).

        Raises:
            StepMoved: the checkpoint is no longer at ``step`` (someone committed it).
            LeaseHeld: another owner holds a live lease on this step.
        """
        return self.grant_lease(LeaseRequest(trace_id, step, owner, now, ttl_s, admit))

    @abstractmethod
    def grant_lease(self, request: LeaseRequest) -> Checkpoint:
        """``take_lease``: lease ``request.step`` for ``request.owner`` (its rules)."""

    @abstractmethod
    def release_lease(self, trace_id: str, step: int, owner: str) -> None:
        """Give a lease back early (after a failure) so a redelivery need not wait."""

    @abstractmethod
    def commit_step(
        self,
        checkpoint: Checkpoint,
        owner: str,
        log: StepLog,
        creates: Mapping[str, dict[str, Any]] | None = None,
    ) -> None:
        """Commit one step in one transaction (rule 4).

        ``checkpoint`` is the new checkpoint (``step`` already advanced). The
        write is preconditioned on the stored checkpoint still being at
        ``log.step_order`` under ``owner``'s lease. ``creates`` are documents
        born with the step (a pause's approval record), written in the same
        transaction.

        Raises:
            StepMoved: the precondition failed; another worker committed the step.
        """

    @abstractmethod
    def step_logs(self, trace_id: str) -> list[StepLog]:
        """The step log of a trace, in order (entry 0 holds the initial state)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


@dataclass(frozen=True)
class LeaseRequest:
    """A ``take_lease`` call, as the store's ``grant_lease`` sees it."""

    trace_id: str
    step: int
    owner: str
    now: float
    ttl_s: float
    admit: Callable[[Checkpoint | None], None] | None = None

    @property
    def key(self) -> tuple[str, int, str]:
        """Trace, step and owner: what a commit by the same owner finds its lease by."""
        return self.trace_id, self.step, self.owner

    def grant(self, doc: dict[str, Any] | None) -> Checkpoint:
        """Decide the lease on the checkpoint ``doc`` just read, and record it in ``doc``.

        The store writes ``doc`` back in its transaction; an adapter with a cheaper
        conditional write may write it back its own way.

        Raises:
            StepMoved: the checkpoint is no longer at ``step`` (someone committed it).
            LeaseHeld: another owner holds a live lease on this step.
            Exception: whatever ``admit`` raises.
        """
        trace_id, step, owner, now = self.trace_id, self.step, self.owner, self.now
        checkpoint = Checkpoint.model_validate(doc) if doc is not None else None
        if self.admit is not None:
            self.admit(checkpoint)
        if checkpoint is None or doc is None:
            raise StepMoved(f"trace {trace_id} does not exist")
        if checkpoint.step != step:
            raise StepMoved(
                f"trace {trace_id} is at step {checkpoint.step}, not {step}", checkpoint
            )
        held = checkpoint.lease
        if held and held.step == step and held.owner != owner and held.expires_at > now:
            raise LeaseHeld(
                f"step {step} of trace {trace_id} is leased by {held.owner} for "
                f"{held.expires_at - now:.1f}s more"
            )
        checkpoint.lease = Lease(step=step, owner=owner, expires_at=now + self.ttl_s)
        doc["lease"] = checkpoint.lease.model_dump()
        return checkpoint


class DocumentCheckpointStore(DocumentStore, CheckpointStore):
    """Both ports on one database: the step protocol built on the document primitives.

    An adapter implements the five primitives of ``DocumentStore``; the step
    protocol below is correct on any of them. An adapter may make a hop cheaper
    with two hooks that keep the same rules: ``_write_lease`` writes the lease
    its own way and returns a mark of what it wrote (Firestore: the checkpoint's
    update time; SQLite: its body); ``_commit_on_mark`` then commits the step
    with a write preconditioned on the checkpoint still being as marked. When
    there is no mark, or the precondition fails (someone wrote the checkpoint
    since), the commit is the port's transaction, which checks step and owner.

    ``inline_policy``: when set, step-log entries go in the checkpoint document while
    the policy allows (``ports/inline_log.py``); every write here keeps them.
    """

    inline_policy: inline_log.InlineLog | None = None

    def __init__(self) -> None:
        self._lease_marks: dict[tuple[str, int, str], Any] = {}
        """What each live lease of this instance wrote, by ``LeaseRequest.key``."""

    def get_trace(self, trace_id: str) -> Checkpoint | None:
        doc = self.get(trace_path(trace_id))
        return Checkpoint.model_validate(doc) if doc is not None else None

    def create_trace(self, checkpoint: Checkpoint, start: StepLog) -> bool:

        doc, entry = checkpoint.model_dump(), start.model_dump()
        placed = self.inline_policy.start(doc, entry) if self.inline_policy is not None else None

        def create(tx: Transaction) -> None:
            if placed is None:
                tx.create(trace_path(checkpoint.trace_id), doc)
                tx.set(step_path(checkpoint.trace_id, 0), entry)
                return
            inline = {inline_log.entry_key(0): entry} if placed.inline else {}
            tx.create(
                trace_path(checkpoint.trace_id),
                {**doc, inline_log.LOG_FIELD: inline, **placed.fields()},
            )
            if not placed.inline:
                tx.set(step_path(checkpoint.trace_id, 0), entry)

        try:
            self.run_transaction(create)
        except DocumentExists:
            return False
        return True

    def grant_lease(self, request: LeaseRequest) -> Checkpoint:
        checkpoint, mark = self._write_lease(request)
        if mark is not None:
            self._lease_marks[request.key] = mark
        return checkpoint

    def _write_lease(self, request: LeaseRequest) -> tuple[Checkpoint, Any]:
        """Lease in a transaction: the checkpoint is read once, inside it. No mark."""

        def lease(tx: Transaction) -> Checkpoint:
            doc = tx.get(trace_path(request.trace_id))
            checkpoint = request.grant(doc)
            tx.set(trace_path(request.trace_id), doc)  # type: ignore[arg-type]
            return checkpoint

        return self.run_transaction(lease), None

    def release_lease(self, trace_id: str, step: int, owner: str) -> None:
        self._lease_marks.pop((trace_id, step, owner), None)

        def release(tx: Transaction) -> None:
            doc = tx.get(trace_path(trace_id))
            lease = (doc or {}).get("lease")
            if doc and lease and lease.get("owner") == owner and lease.get("step") == step:
                doc["lease"] = None
                tx.set(trace_path(trace_id), doc)

        self.run_transaction(release)

    def commit_step(
        self,
        checkpoint: Checkpoint,
        owner: str,
        log: StepLog,
        creates: Mapping[str, dict[str, Any]] | None = None,
    ) -> None:
        step = log.step_order
        mark = self._lease_marks.pop((checkpoint.trace_id, step, owner), None)
        if mark is not None and self._commit_on_mark(mark, checkpoint, log, creates or {}):
            return

        def commit(tx: Transaction) -> None:
            doc = tx.get(trace_path(checkpoint.trace_id))
            lease = (doc or {}).get("lease") or {}
            if doc is None or doc.get("step") != step or lease.get("owner") != owner:
                raise StepMoved(
                    f"step {step} of trace {checkpoint.trace_id} was committed by another worker"
                )
            self._write_commit(tx, doc, checkpoint, log)
            for path, born in (creates or {}).items():
                tx.set(path, born)

        self.run_transaction(commit)

    def _write_commit(
        self, tx: Transaction, stored: dict[str, Any], checkpoint: Checkpoint, log: StepLog
    ) -> None:
        """Write the committed checkpoint over ``stored`` (just read) and the step's entry,
        keeping the inline log (and moving it out when the policy says so)."""
        trace_id, step = checkpoint.trace_id, log.step_order
        doc, entry = checkpoint.model_dump(), log.model_dump(exclude_defaults=True)
        if self.inline_policy is None:
            tx.set(trace_path(trace_id), doc)
            tx.set(step_path(trace_id, step), entry)
            return
        placed = self.inline_policy.place(
            inline_log.Held.of(stored), doc, entry, checkpoint.updated_at
        )
        inline = inline_log.entries(stored)
        if placed.evict:
            for at, held in inline.items():
                tx.set(step_path(trace_id, at), held)
            inline = {}
        if placed.inline:
            inline[step] = entry
        else:
            tx.set(step_path(trace_id, step), entry)
        log_map = {inline_log.entry_key(at): held for at, held in sorted(inline.items())}
        tx.set(trace_path(trace_id), {**doc, inline_log.LOG_FIELD: log_map, **placed.fields()})

    def _commit_on_mark(
        self, mark: Any, checkpoint: Checkpoint, log: StepLog, creates: Mapping[str, dict[str, Any]]
    ) -> bool:
        """Commit with a write preconditioned on the checkpoint being as ``_write_lease``
        marked it; False (nothing written) when it is not."""
        return False

    def step_logs(self, trace_id: str) -> builtins.list[StepLog]:
        inline = inline_log.entries(self.get(trace_path(trace_id)))
        rows = self.list(f"{trace_path(trace_id)}/{STEPS.name}", order_by="step_order")
        entries = inline_log.merge(inline, rows)
        return [StepLog.model_validate(doc) for doc in entries]

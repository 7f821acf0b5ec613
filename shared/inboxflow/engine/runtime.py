"""The step runtime: docs/architecture.md §5, rule by rule.

``Runtime.handle_message`` is what every node function runs on a Pub/Sub
message, whether it arrives as a CloudEvent from functions-framework or from
the embedded in-process bus.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import secrets
import socket
import time
import traceback
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import pydantic_core
from pydantic import BaseModel, ValidationError

from .. import logs, telemetry
from ..clock import Clock
from ..envelope import Envelope, decode_pubsub_message
from ..errors import (
    BadEnvelope,
    EarlyArrival,
    LeaseHeld,
    NodeFailed,
    PermanentError,
    RejectedEnvelope,
    RetryableError,
    StepMoved,
)
from ..lazy import Lazy
from ..naming import node_id, step_path
from ..ports.bus import MessageBus
from ..ports.checkpoint import (
    Checkpoint,
    CheckpointStore,
    DocumentCheckpointStore,
    Lease,
    Status,
    StepLog,
    TraceRoute,
)
from ..ports.documents import DocumentStore
from ..ports.llm import LanguageModel
from ..ports.wired import Ports
from ..schema import FAILURES
from .context import NodeContext
from .effects import EffectJournal, FaultHook, _no_fault
from .graph import Graph, Node
from .guards import apply_guards
from .members import Member
from .shadow import HeldDocuments, HeldJournal, held_pause
from .step import END, Pause, Step
from .waits import (
    Approval,
    approval_of_pause,
    approval_path,
    check_decision,
    jsonable,
    pause_record,
    publish_resume,
    resume_checked,
)

log = logging.getLogger("inboxflow.runtime")
T = TypeVar("T")

Outcome = Literal["ran", "duplicate", "failed", "rejected"]
MAX_RAW_FAILURE_BYTES = 16 * 1024
MAX_STATE_BYTES = 900 * 1024
"""A checkpoint is one Firestore document (1 MiB at most): state beyond this is refused
with a clear error instead of failing the commit. Large blobs belong beside the trace."""
HANDOFF_S = 30.0
"""How long a lease handed to the next step (``Runtime._handoff``) may wait for its delivery."""
MAX_HANDOFFS = 100_000
MAX_KEPT_STATES = 1024
"""At most this many validated states wait for their next step (``Runtime._validated``);
beyond, a step validates its state as usual."""


class StateTooLarge(PermanentError):
    """A trace's state would not fit in one checkpoint document."""


def _check_size(state: Mapping[str, Any], what: str) -> None:
    size = len(pydantic_core.to_json(state, inf_nan_mode="constants"))
    if size > MAX_STATE_BYTES:
        raise StateTooLarge(
            f"{what} is {size / 1024:.0f} KB; a checkpoint holds at most {MAX_STATE_BYTES // 1024} KB "
            "(store large bodies and attachments beside the trace, not in its state)"
        )


@dataclass
class RuntimeOptions:
    """Tunables of the runtime.

    Attributes:
        node_attempts: a node's own bounded retries on retryable errors.
        retry_base_s: first backoff between those attempts (doubles each time).
        retention_days: ``expire_at`` horizon for traces, steps and effects.
        only_node: ``graph.node`` this process serves (``INBOXFLOW_NODE``); others are refused.
    """

    node_attempts: int = 3
    retry_base_s: float = 0.2
    retention_days: float = 30
    only_node: str | None = None


@dataclass
class _NodeRun:
    """What running a node produced: its step (``None`` when it failed) and the states."""

    result: Step | None
    attempt: int
    before: dict[str, Any]
    state: dict[str, Any]
    error: str | None
    started_at: float
    latency_ms: float
    guards: list[dict[str, str]] = field(default_factory=list)
    model: BaseModel | None = None
    """``state`` validated (the state model it was dumped from), when the step succeeded."""


@dataclass
class _Move:
    """Where a step sends its trace (status, next node) and what goes with it."""

    status: Status
    next_node: str
    routed_to: str | None
    envelopes: list[Envelope] = field(default_factory=list)
    handoff: Lease | None = None
    pause: dict[str, Any] | None = None
    approval: Approval | None = None


class _PortOf(Member[T]):
    """A ``Runtime`` member that is the port of the same name (``runtime.ports.<name>``).

    Args:
        doc: what the port is (the member's docstring).
        settable: whether assigning the member replaces the port (a test's double).
    """

    def __init__(self, doc: str, settable: bool = False) -> None:
        super().__init__(doc)
        self.settable = settable

    def read(self, runtime: Runtime) -> T:
        port: T = getattr(runtime.ports, self.name)
        return port

    def write(self, runtime: Runtime, port: Any) -> None:
        if not self.settable:
            raise AttributeError(f"Runtime.{self.name} is the port; replace it in runtime.ports")
        setattr(runtime.ports, self.name, port)


@dataclass
class Runtime:
    """Runs graph nodes under the step protocol."""

    graphs: Mapping[str, Graph]
    ports: Ports
    """The world, built by the composition root (``inboxflow.services.build_ports``); each
    node sees the ports it declares (``ctx.ports``)."""
    options: RuntimeOptions = field(default_factory=RuntimeOptions)
    fault: FaultHook = _no_fault
    on_pause: Callable[[Approval], None] | None = None
    """Called after a pause commits (and again on a redelivery of that step, until it
    succeeds): notifies the reviewers and schedules the deadline (``ApprovalService.after_pause``)."""
    owner_prefix: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    shadow_llm: LanguageModel | Lazy[LanguageModel] | None = None
    """The model shadow traces ask (``shadow:`` of inboxflow.yaml; None: the live one)."""
    _handoffs: dict[tuple[str, int], str] = field(default_factory=dict, init=False, repr=False)
    """Lease owners handed over by commits, by ``(trace_id, step)`` (see ``_handoff``)."""
    _validated: dict[tuple[str, int], tuple[dict[str, Any], BaseModel]] = field(
        default_factory=dict, init=False, repr=False
    )
    """The state a handing-over commit wrote and its model, by the next ``(trace_id, step)``:
    that step's node gets the model when the checkpoint it leased holds that very state
    object (a store that kept what it wrote, ``SqliteCheckpointStore``), instead of the same
    state validated again."""

    def __post_init__(self) -> None:
        # The runtime consumes its bus: the in-process bus delivers to it; a deployed bus
        # delivers by push subscription to each node's function (infra/), a no-op here.
        self.ports.bus.subscribe(self.handle_message)

    store = _PortOf[DocumentCheckpointStore](
        "The database (both ports): for tools and tests that read traces and records alike."
    )
    checkpoints = _PortOf[CheckpointStore]("The checkpoint port: the step protocol.")
    documents = _PortOf[DocumentStore](
        "The documents port: the features' records (approvals, failures, effects)."
    )
    bus = _PortOf[MessageBus]("The message bus.")
    clock = _PortOf[Clock]("The time source.")
    llm = _PortOf[LanguageModel]("The language model (built now if it was not).", settable=True)

    # --- starting traces ---------------------------------------------------------

    def start(
        self,
        graph_name: str,
        state: BaseModel | Mapping[str, Any],
        trace_id: str | None = None,
        route: TraceRoute | None = None,
        shadow_of: str | None = None,
    ) -> str:
        """Create a trace at its entry node and publish its first envelope.

        Idempotent for a given ``trace_id``: a second call republishes the
        first envelope if the trace has not moved yet, and changes nothing.

        Args:
            graph_name: the graph to run.
            state: its first state.
            trace_id: the trace's id (default: a random one).
            route: how the trace was started (routing rule, profile, mailbox),
                recorded on the checkpoint and the step-0 log entry. With
                ``route.blocked`` set (loop protection), the trace is created
                ``done`` with that reason and no node ever runs.
            shadow_of: the live trace this one shadows: its effects are held and its
                pauses ask nobody (``engine/shadow.py``).
        """
        graph = self._graph(graph_name)
        trace_id = trace_id or secrets.token_hex(8)
        model = state if isinstance(state, BaseModel) else graph.state_model.model_validate(state)
        initial = model.model_dump(mode="json")
        _check_size(initial, "the initial state")
        now = self.clock.now()
        blocked = route is not None and route.blocked is not None
        with telemetry.span(f"start {graph.name}", root=True, trace_id=trace_id, graph=graph.name):
            traceparent = telemetry.traceparent()
        envelope = Envelope(
            trace_id=trace_id,
            graph=graph.name,
            node=graph.entry,
            step=1,
            sent_at=now,
            traceparent=traceparent,
        )
        checkpoint = Checkpoint(
            trace_id=trace_id,
            graph=graph.name,
            status="done" if blocked else "running",
            step=1,
            node=END if blocked else graph.entry,
            state=initial,
            next=[] if blocked else [envelope.model_dump(exclude_none=True)],
            route=route,
            traceparent=traceparent,
            shadow=shadow_of is not None,
            shadow_of=shadow_of,
            created_at=now,
            updated_at=now,
            expire_at=self._expire_at(now),
        )
        start = start_log(
            graph,
            initial,
            at=now,
            routed_to=END if blocked else graph.entry,
            route=route,
            expire_at=checkpoint.expire_at,
        )
        if not self.checkpoints.create_trace(checkpoint, start):
            existing = self.checkpoints.get_trace(trace_id)
            if existing is not None and existing.step == 1:
                self._publish(existing.next)
            return trace_id
        if blocked:
            log.info("trace blocked: %s", route.blocked if route else "", extra=_fields(checkpoint))
        elif shadow_of is not None:  # not an email: the emails-per-minute metric skips it
            log.info("shadow trace started", extra={"trace_id": trace_id, "graph": graph.name})
        else:
            # The dashboard's emails-per-minute metric counts this exact message (infra/monitoring.tf).
            log.info("trace started", extra={"trace_id": trace_id, "graph": graph.name})
        self._publish(checkpoint.next)
        return trace_id

    def resume(self, trace_id: str, decision: Mapping[str, Any]) -> Envelope:
        """Publish the envelope that resumes a waiting trace with ``decision`` (``waits.publish_resume``)."""
        return publish_resume(self.checkpoints, self.bus, self.clock, trace_id, decision)

    # --- handling deliveries -----------------------------------------------------

    def handle_message(self, message: Any) -> Outcome:
        """Handle one Pub/Sub message (the ``message`` of a push or CloudEvent).

        Returns the outcome for acknowledged messages; raises ``RetryableError``
        for those Pub/Sub must redeliver. A message of the in-process bus carries the
        envelope it was published from (``inprocess_bus.Published``): taken as is.
        """
        published = getattr(message, "envelope", None)
        try:
            envelope = (
                published if isinstance(published, Envelope) else decode_pubsub_message(message)
            )
        except BadEnvelope as exc:
            self._record_failure(str(exc), message=message)
            self.bus.dead_letter(
                message if isinstance(message, dict) else {"data": repr(message)[:1024]},
                str(exc),
                self.options.only_node,
            )
            log.warning(
                "not an envelope, acknowledged and dead-lettered: %s",
                exc,
                extra={"outcome": "failed", "node": self.options.only_node},
            )
            return "failed"
        return self.handle(envelope)

    def handle(self, envelope: Envelope) -> Outcome:
        """Handle one envelope under the step protocol, in its span and with its log fields."""
        with (
            logs.bound(
                trace_id=envelope.trace_id,
                graph=envelope.graph,
                node=envelope.node,
                step=envelope.step,
            ),
            telemetry.span(
                f"step {envelope.graph}.{envelope.node}",
                parent=envelope.traceparent,
                kind="CONSUMER",
                trace_id=envelope.trace_id,
                node=envelope.node,
                step=envelope.step,
            ),
        ):
            outcome = self._handle(envelope)
            if outcome != "ran":
                telemetry.annotate(outcome=outcome)
            return outcome

    def _handle(self, envelope: Envelope) -> Outcome:
        trace_id, k = envelope.trace_id, envelope.step
        handed = self._handoffs.pop((trace_id, k), None)
        owner = handed or self._new_owner()
        try:
            graph, node = self._resolve(envelope)
            checkpoint = self.checkpoints.take_lease(
                trace_id,
                k,
                owner,
                self.clock.now(),
                node.timeout_s + 30,
                admit=resume_checked(self._admission(envelope), envelope.resume, graph),
            )
        except StepMoved as moved:
            return self._republish_after_move(trace_id, moved)
        except PermanentError as exc:
            self._record_failure(str(exc), envelope=envelope)
            log.warning("envelope refused, acknowledged: %s", exc)
            return "rejected"
        except BaseException:
            self._hand_back(trace_id, k, handed)
            raise
        try:
            return self._execute(graph, node, envelope, checkpoint, owner)
        except StepMoved as moved:
            return self._republish_after_move(trace_id, moved)
        except Exception:
            self._release(trace_id, k, owner)
            raise
        except BaseException:  # a simulated crash: the redelivery here resumes the lease
            self._hand_back(trace_id, k, handed)
            raise

    def _hand_back(self, trace_id: str, step: int, owner: str | None) -> None:
        """A delivery that ran on a handed-over lease failed: its redelivery reuses the lease."""
        if owner is not None:
            self._handoffs[(trace_id, step)] = owner

    @staticmethod
    def _admission(envelope: Envelope) -> Callable[[Checkpoint | None], None]:
        """Rule 1: may this delivery run against this checkpoint? Raises if not."""

        def admit(checkpoint: Checkpoint | None) -> None:
            trace_id, k = envelope.trace_id, envelope.step
            if checkpoint is None:
                raise RejectedEnvelope(f"no trace {trace_id}")
            if checkpoint.graph != envelope.graph:
                raise RejectedEnvelope(
                    f"envelope names graph {envelope.graph!r} but trace {trace_id} runs {checkpoint.graph!r}"
                )
            if checkpoint.step > k:
                raise StepMoved(f"step {k} of trace {trace_id} is already committed", checkpoint)
            if checkpoint.terminal:
                raise RejectedEnvelope(f"trace {trace_id} is already {checkpoint.status}")
            if checkpoint.step < k:
                raise EarlyArrival(
                    f"envelope for step {k} arrived before step {checkpoint.step} of trace {trace_id} committed"
                )
            if checkpoint.node != envelope.node:
                raise RejectedEnvelope(
                    f"step {k} of trace {trace_id} belongs to node {checkpoint.node!r}, not {envelope.node!r}"
                )
            if checkpoint.status == "waiting" and envelope.resume is None:
                raise RejectedEnvelope(f"trace {trace_id} is waiting for a decision")
            if checkpoint.status != "waiting" and envelope.resume is not None:
                raise RejectedEnvelope(
                    f"trace {trace_id} is {checkpoint.status}: it takes no decision"
                )
            if envelope.resume is not None:
                check_decision(envelope.resume, checkpoint)

        return admit

    # --- one step ------------------------------------------------------------------

    def _execute(
        self, graph: Graph, node: Node, envelope: Envelope, checkpoint: Checkpoint, owner: str
    ) -> Outcome:
        """Rules 2-5 for one admitted delivery: run the node, route, commit, then publish."""
        now = self.clock.now()
        expire_at = self._expire_at(now)
        ctx = self._context(graph, node, envelope, expire_at, checkpoint)
        ran = self._run_node(graph, node, checkpoint.state, ctx, now)
        move = self._route(graph, node, envelope, ran, now, expire_at, checkpoint.shadow)
        self._commit(graph, node, envelope, checkpoint, owner, ctx, ran, move, expire_at)
        return "ran"

    def _context(
        self,
        graph: Graph,
        node: Node,
        envelope: Envelope,
        expire_at: float,
        checkpoint: Checkpoint | None = None,
    ) -> NodeContext:
        """What the node sees: its address, the ports it declares, the journal.

        A shadow trace's (``checkpoint.shadow``) node sees a held journal, a store whose
        writes are held and the shadow's model (``engine/shadow.py``); nothing else differs.
        """
        journal = EffectJournal(self.documents, self.clock, self.fault)
        store: DocumentStore = self.documents
        ports = self.ports
        if checkpoint is not None and checkpoint.shadow:
            journal = HeldJournal(self.documents, self.clock, self.fault)
            store = HeldDocuments(
                self.documents,
                journal,
                envelope.trace_id,
                envelope.step,
                expire_at,
                checkpoint.shadow_of,
            )
            if self.shadow_llm is not None:
                ports = ports.replace(llm=self.shadow_llm)
        return NodeContext(
            trace_id=envelope.trace_id,
            graph=graph.name,
            node=node.name,
            step=envelope.step,
            clock=self.clock,
            store=store,
            tools=graph.node_tools(node.name),
            journal=journal,
            resume=envelope.resume,
            ports=ports.only((*node.ports, *node.services), f"{graph.name}.{node.name}"),
            expire_at=expire_at,
            uses_llm=node.uses_llm,
            tool_calls=telemetry.CallSpans("tool"),
            llm_calls=telemetry.CallSpans("llm"),
        )

    def _run_node(
        self, graph: Graph, node: Node, before: dict[str, Any], ctx: NodeContext, started_at: float
    ) -> _NodeRun:
        """Run the node on the validated state (with its retries); a failure is kept, not raised.

        ``latency_ms`` is the node's own time: its function (with its retries) and its
        guards. The engine's work around it (validating the state, merging the update,
        the size check) is the runtime's, as are the lease and the commit.
        """
        error: str | None = None
        attempt = 0
        result: Step | None = None
        new_state: dict[str, Any] = before
        fired: list[dict[str, str]] = []
        started = ended = 0.0
        model: BaseModel | None = None
        try:
            state, settled = self._state_model(graph, ctx, before)
            started = time.perf_counter()
            try:
                result, attempt = self._run_with_retries(node, state, ctx)
                result, fired = apply_guards(node.guards, state, result, ctx)
            finally:
                ended = time.perf_counter()
            self._check_route(node, result.goto)
            model, new_state = self._apply(graph, before, result.update, settled)
            _check_size(new_state, f"the state after {node.name}")
        except (NodeFailed, StateTooLarge) as exc:
            error = str(exc)
        except ValidationError as exc:
            error = f"state does not match {graph.state_model.__name__}: {exc.error_count()} error(s): {_first_error(exc)}"
        except Exception as exc:
            error = f"unexpected {type(exc).__name__} in node {node.name}: {exc}"
            log.error(
                "node %s crashed on trace %s:\n%s", node.name, ctx.trace_id, traceback.format_exc()
            )
        latency_ms = round((ended - started) * 1000, 3)
        if error is not None:
            new_state, result, model = before, None, None
        for guarded in fired:
            telemetry.guard_fired(ctx.trace_id, node.name, guarded["guard"], guarded["reason"])
        return _NodeRun(
            result, max(attempt, 1), before, new_state, error, started_at, latency_ms, fired, model
        )

    def _state_model(
        self, graph: Graph, ctx: NodeContext, before: dict[str, Any]
    ) -> tuple[BaseModel, bool]:
        """``before`` validated, and whether ``before`` is settled: the model the previous
        step's commit kept for this step when ``before`` is the very state this runtime made
        as that model's JSON (``_apply``), else validated now (not settled: read from the store,
        where anything may have written it)."""
        kept = self._validated.pop((ctx.trace_id, ctx.step), None)
        if kept is not None and kept[0] is before:
            return kept[1], True
        return graph.state_model.model_validate(before), False

    def _route(
        self,
        graph: Graph,
        node: Node,
        envelope: Envelope,
        ran: _NodeRun,
        now: float,
        expire_at: float,
        shadow: bool = False,
    ) -> _Move:
        """Where the trace goes after the step: review, a pause, the end, or the next node.

        A shadow trace's pause ends it ``done`` with what it would have asked, and no
        approval: nobody is notified, no deadline is scheduled (``shadow.held_pause``).
        """
        trace_id, k = envelope.trace_id, envelope.step
        result = ran.result
        if result is None:
            return _Move("needs_review", node.name, None)
        if isinstance(result.goto, Pause) and shadow:
            held = held_pause(result.goto, now)
            return _Move("done", node.name, f"pause:{result.goto.kind}", pause=held)
        if isinstance(result.goto, Pause):
            approval = approval_of_pause(result.goto, graph, trace_id, k, now, expire_at)
            return _Move(
                "waiting",
                result.goto.resume_node,
                f"pause:{result.goto.kind}",
                pause=pause_record(result.goto, approval),
                approval=approval,
            )
        if result.goto == END:
            return _Move(result.status, node.name, END)
        next_envelope = Envelope(
            trace_id=trace_id,
            graph=graph.name,
            node=result.goto,
            step=k + 1,
            sent_at=self.clock.now(),
            traceparent=telemetry.traceparent(),
        )
        return _Move(
            "running",
            result.goto,
            result.goto,
            envelopes=[next_envelope],
            handoff=self._handoff(graph, result.goto, k + 1),
        )

    def _commit(
        self,
        graph: Graph,
        node: Node,
        envelope: Envelope,
        checkpoint: Checkpoint,
        owner: str,
        ctx: NodeContext,
        ran: _NodeRun,
        move: _Move,
        expire_at: float,
    ) -> None:
        """Rule 4: the checkpoint, the step log and a pause's approval in one commit; then
        rule 5: publish the next envelope and tell the approval service of a pause."""
        trace_id, k = envelope.trace_id, envelope.step
        delta, patch, removed = _delta(ran.before, ran.state)
        new_checkpoint = checkpoint.model_copy(
            update={
                "status": move.status,
                "step": k + 1,
                "node": move.next_node,
                "state": ran.state,
                "next": [e.model_dump(exclude_none=True) for e in move.envelopes],
                "lease": move.handoff,
                "pause": move.pause,
                "error": ran.error,
                "traceparent": telemetry.traceparent() or checkpoint.traceparent,
                "updated_at": self.clock.now(),
                "expire_at": expire_at,
            }
        )
        entry = StepLog(
            step_name=node.name,
            step_order=k,
            input_ref=step_path(trace_id, k - 1),
            output_delta=delta,
            output_patch=patch,
            removed=removed,
            latency_ms=ran.latency_ms,
            started_at=ran.started_at,
            attempt=ran.attempt,
            worker=owner,
            error=ran.error,
            routed_to=move.routed_to,
            tool_calls=ctx.tool_calls,
            llm_calls=ctx.llm_calls,
            guards=ran.guards,
            expire_at=expire_at,
        )
        self.fault(f"before_commit:{node.name}")
        approval = move.approval
        creates = (
            {approval_path(approval.approval_id): approval.model_dump()}
            if approval is not None
            else None
        )
        self.checkpoints.commit_step(new_checkpoint, owner, entry, creates)
        # A shadow's status changes are not the deployment's (no needs_review alert of
        # infra/monitoring.tf): their outcome reads ``shadow:{status}``.
        shown = "shadow:" if checkpoint.shadow else ""
        telemetry.step_committed(
            trace_id,
            node.name,
            k,
            (f"{shown}{checkpoint.status}", f"{shown}{move.status}"),
            ran.attempt,
            ran.latency_ms,
            ran.error,
        )
        if move.handoff is not None:
            self._handoffs[(trace_id, k + 1)] = move.handoff.owner
            if ran.model is not None and len(self._validated) < MAX_KEPT_STATES:
                self._validated[(trace_id, k + 1)] = (ran.state, ran.model)
        self.fault(f"after_commit:{node.name}")
        self.bus.publish(move.envelopes)
        if approval is not None and self.on_pause is not None:
            self.on_pause(approval)

    def _run_with_retries(self, node: Node, state: BaseModel, ctx: NodeContext) -> tuple[Step, int]:
        attempts = max(1, self.options.node_attempts)
        for attempt in range(1, attempts + 1):
            try:
                step = node.run(state, ctx)
            except RetryableError as exc:
                if attempt == attempts:
                    raise NodeFailed(f"retries exhausted after {attempts} attempts: {exc}") from exc
                delay = self.options.retry_base_s * 2 ** (attempt - 1)
                self.clock.sleep(delay * (0.5 + secrets.randbelow(1000) / 1000))
                continue
            if not isinstance(step, Step):
                raise NodeFailed(f"node {node.name} returned {type(step).__name__}, expected Step")
            return step, attempt
        raise AssertionError("unreachable")

    # --- helpers ---------------------------------------------------------------------

    def _new_owner(self) -> str:
        return f"{self.owner_prefix}:{uuid.uuid4().hex[:8]}"

    def _handoff(self, graph: Graph, node_name: str, step: int) -> Lease | None:
        """The lease a commit writes on the next step when this runtime will run it.

        With the in-process bus delivering to this runtime, the next step's
        delivery comes back here: its lease is written by this step's commit,
        for an owner the delivery then uses, and the store finds it already
        taken (``take_lease`` writes nothing when the stored lease covers the
        request). One write transaction per hop instead of two. The lease
        allows ``HANDOFF_S`` for the wait in the queue on top of the node's
        usual ``timeout_s + 30``; a delivery that waited longer takes it again.
        Elsewhere (Pub/Sub, another process) the next step is leased as usual.
        """
        if (
            self.options.only_node is not None
            or getattr(self.bus, "handler", None) != self.handle_message
            or len(self._handoffs) >= MAX_HANDOFFS
        ):
            return None
        ttl_s = graph.nodes[node_name].timeout_s + 30 + HANDOFF_S
        return Lease(step=step, owner=self._new_owner(), expires_at=self.clock.now() + ttl_s)

    def _resolve(self, envelope: Envelope) -> tuple[Graph, Node]:
        graph = self.graphs.get(envelope.graph)
        if graph is None:
            raise RejectedEnvelope(f"unknown graph {envelope.graph!r}")
        node = graph.nodes.get(envelope.node)
        if node is None:
            raise RejectedEnvelope(f"graph {envelope.graph!r} has no node {envelope.node!r}")
        wanted = node_id(envelope.graph, envelope.node)
        if self.options.only_node and self.options.only_node != wanted:
            raise RejectedEnvelope(f"this function runs {self.options.only_node}, not {wanted}")
        return graph, node

    def _graph(self, name: str) -> Graph:
        try:
            return self.graphs[name]
        except KeyError:
            raise RejectedEnvelope(f"unknown graph {name!r}") from None

    @staticmethod
    def _apply(
        graph: Graph, before: dict[str, Any], update: Mapping[str, Any], settled: bool = False
    ) -> tuple[BaseModel, dict[str, Any]]:
        """The state after ``update``: validated (the model) and as JSON-ready data.

        The whole state is validated every time. Its JSON is dumped whole too, except when
        ``before`` is settled (this runtime's own dump of the previous step's model: its
        unchanged fields are what dumping them again gives) and the model has nothing that
        makes one field's value depend on another's (``_fields_stand_alone``): then only
        the updated fields are dumped, over ``before``.
        """
        model = graph.state_model
        known, frozen_names = _fields_of(model)
        unknown = update.keys() - known
        if unknown:
            raise NodeFailed(f"update sets unknown state fields: {sorted(unknown)}")
        changes = {k: jsonable(v) for k, v in update.items()}
        frozen = [k for k in frozen_names & changes.keys() if changes[k] != before.get(k)]
        if frozen:
            raise NodeFailed(f"update changes frozen input fields: {sorted(frozen)}")
        validated = model.model_validate({**before, **changes})
        if settled and _fields_stand_alone(model):
            return validated, {**before, **validated.model_dump(mode="json", include=set(changes))}
        return validated, validated.model_dump(mode="json")

    @staticmethod
    def _check_route(node: Node, goto: str | Pause) -> None:
        target = goto.resume_node if isinstance(goto, Pause) else goto
        if isinstance(goto, Pause) and not node.pauses:
            raise NodeFailed(f"node {node.name} paused but is not declared with pauses=True")
        if target not in node.routes:
            raise NodeFailed(
                f"node {node.name} routed to {target!r}, which is not among its routes {node.routes}"
            )

    def _republish_after_move(self, trace_id: str, moved: StepMoved) -> Outcome:
        checkpoint = moved.checkpoint if isinstance(moved.checkpoint, Checkpoint) else None
        checkpoint = checkpoint or self.checkpoints.get_trace(trace_id)
        if checkpoint is not None:
            self._publish(checkpoint.next)
            self._repair_pause(checkpoint)
        return "duplicate"

    def _repair_pause(self, checkpoint: Checkpoint) -> None:
        """A redelivered pausing step: finish what its first run may not have (notify, schedule)."""
        pause = checkpoint.pause or {}
        if checkpoint.status != "waiting" or self.on_pause is None or not pause.get("approval_id"):
            return
        doc = self.documents.get(approval_path(str(pause["approval_id"])))
        if doc is not None:
            self.on_pause(Approval.model_validate(doc))

    def _publish(self, envelopes: Sequence[Mapping[str, Any]]) -> None:
        if envelopes:
            self.bus.publish([Envelope.model_validate(e) for e in envelopes])

    def _release(self, trace_id: str, step: int, owner: str) -> None:
        try:
            self.checkpoints.release_lease(trace_id, step, owner)
        except Exception:
            log.exception("could not release the lease of step %s of trace %s", step, trace_id)

    def _expire_at(self, now: float) -> float:
        return now + self.options.retention_days * 86400

    def _record_failure(
        self, reason: str, envelope: Envelope | None = None, message: Any = None
    ) -> None:
        now = self.clock.now()
        doc: dict[str, Any] = {
            "status": "failed",
            "reason": reason,
            "at": now,
            "expire_at": self._expire_at(now),
            "function": self.options.only_node,
        }
        if envelope is not None:
            doc.update(
                trace_id=envelope.trace_id,
                graph=envelope.graph,
                node=envelope.node,
                step=envelope.step,
            )
        if message is not None:
            raw = json.dumps(message, default=repr)[:MAX_RAW_FAILURE_BYTES]
            doc["message"] = raw
        self.documents.set(FAILURES.path(f"{int(now * 1000):013d}-{uuid.uuid4().hex[:8]}"), doc)


def _fields(checkpoint: Checkpoint) -> dict[str, Any]:
    """Log fields of a trace's status line."""
    return {
        "trace_id": checkpoint.trace_id,
        "graph": checkpoint.graph,
        "outcome": checkpoint.status,
    }


def _delta(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[str]]:
    """What a step changed: replaced fields, object fields patched in part (``set``/``unset``),
    list fields that only grew (``append``: an agent's conversation stores each turn once,
    so a trace's stored bytes grow linearly with its turns), removed fields."""
    delta: dict[str, Any] = {}
    patch: dict[str, dict[str, Any]] = {}
    for key, value in after.items():
        old = before.get(key, _MISSING)
        if old == value:
            continue
        if _grew(old, value):
            patch[key] = {"append": value[len(old) :]}
            continue
        if isinstance(old, dict) and isinstance(value, dict):
            changed = {k: v for k, v in value.items() if k not in old or old[k] != v}
            unset = [k for k in old if k not in value]
            if len(changed) + len(unset) < len(value):
                patch[key] = {"set": changed, "unset": unset} if unset else {"set": changed}
                continue
        delta[key] = value
    removed = [k for k in before if k not in after]
    return delta, patch, removed


_MISSING = object()


def _grew(old: Any, value: Any) -> bool:
    """``value`` is the list ``old`` with items added at its end."""
    if not (isinstance(old, list) and isinstance(value, list)):
        return False
    return 0 < len(old) < len(value) and value[: len(old)] == old


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"


def start_log(
    graph: Graph,
    state: Mapping[str, Any],
    *,
    at: float,
    routed_to: str,
    route: TraceRoute | None,
    expire_at: float | None,
) -> StepLog:
    """Step 0 of a new trace (``__start__``), whose first state is ``state``.

    The state's frozen fields (``frozen_fields``) stay in the checkpoint only;
    the others are the entry's output, so folding the log rebuilds the state.
    ``Runtime.start`` and a fork (``dev/ops/repair.py``) write it alike.
    """
    inputs = sorted(frozen_fields(graph.state_model) & state.keys())
    return StepLog(
        step_name="__start__",
        step_order=0,
        output_delta={k: v for k, v in state.items() if k not in inputs},
        inputs_in_checkpoint=inputs,
        started_at=at,
        routed_to=routed_to,
        route=route,
        expire_at=expire_at,
    )


def frozen_fields(model: type[BaseModel]) -> set[str]:
    """State fields declared ``Field(frozen=True)``: inputs no step may change."""
    return {name for name, info in model.model_fields.items() if info.frozen}


_CROSS_FIELD = (
    "validators",
    "root_validators",
    "field_validators",
    "model_validators",
    "field_serializers",
    "model_serializers",
    "computed_fields",
)
"""pydantic's decorators through which one field's value or JSON can depend on another's."""


@functools.cache
def _fields_stand_alone(model: type[BaseModel]) -> bool:
    """Whether each field of ``model`` validates and dumps on its own: no model-level
    validator or serialiser, no field validator (it may read the other fields), no
    computed field, no extra fields. Read once per model."""
    decorators = model.__pydantic_decorators__
    return model.model_config.get("extra") != "allow" and not any(
        getattr(decorators, name, None) for name in _CROSS_FIELD
    )


@functools.cache
def _fields_of(model: type[BaseModel]) -> tuple[frozenset[str], frozenset[str]]:
    """A state model's field names and its frozen ones (``frozen_fields``), read once per model."""
    return frozenset(model.model_fields), frozenset(frozen_fields(model))


def fold(
    logs: Sequence[StepLog],
    upto: int | None = None,
    checkpoint_state: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Rebuild the full state after step ``upto`` (default: the last) by folding deltas.

    Frozen inputs are stored once, in the checkpoint: pass its state to get them back.
    """
    state: dict[str, Any] = {}
    if logs and logs[0].inputs_in_checkpoint:
        if checkpoint_state is None:
            raise ValueError("this trace keeps its inputs in the checkpoint: pass checkpoint_state")
        state.update({k: checkpoint_state[k] for k in logs[0].inputs_in_checkpoint})
    for entry in logs:
        if upto is not None and entry.step_order > upto:
            break
        state.update(entry.output_delta)
        for key, change in entry.output_patch.items():
            if "append" in change:
                state[key] = [*(state.get(key) or []), *change["append"]]
                continue
            merged = {**(state.get(key) or {}), **change.get("set", {})}
            for sub in change.get("unset", ()):
                merged.pop(sub, None)
            state[key] = merged
        for key in entry.removed:
            state.pop(key, None)
    return state


__all__ = [
    "LeaseHeld",
    "Outcome",
    "Runtime",
    "RuntimeOptions",
    "fold",
    "frozen_fields",
]

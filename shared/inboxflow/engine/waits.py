"""The pause and resume protocol: one file (docs/architecture.md §6).

A node ends a step with ``Pause(kind=...)`` (``graph.py``); what the pause asks
is declared by its kind (``pause_kinds.py``). Everything else about a wait is
here, in the order it happens:

1. **The approval record.** ``approvals/{approval_id}`` (``Approval``) is
   committed by the runtime in the same commit as the step that paused
   (``approval_of_pause``, ``pause_record``), so its shape belongs to the step
   protocol, below the approval service (``inboxflow.approvals``) that
   notifies, decides and times it out.
2. **Checking a decision.** A resume must answer the pause its trace waits on
   (``check_resume``, ``resume_checked``) and carry the hash of what was
   approved (``check_decision``, ``payload_hash``).
3. **Resuming.** A decided approval's resume is rebuilt from the record every
   time it is published (``resume_of``), and published only while the trace still
   waits on that approval (``publish_resume``): the trace itself says whether the
   resume still has to go out, so nothing notes that it went.
4. **The customer wait.** A ``customer_reply`` pause is answered by the
   customer of the trace (``customer_of``) with their reply
   (``customer_reply_resume``), which takes the approval first-decision-wins
   (``answer_customer_wait``, ``answered_by``, ``answered_first``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, computed_field

from .. import telemetry
from ..deferred import DeferredModel
from ..envelope import Envelope
from ..errors import RejectedEnvelope
from ..field_defaults import empty_dict, empty_list
from ..mail.addresses import address_key_or_none
from ..ports.documents import DocumentStore, Transaction
from ..schema import APPROVALS
from .pause_kinds import PauseKind, kind_of

if TYPE_CHECKING:
    from ..clock import Clock
    from ..mail import Email
    from ..ports.bus import MessageBus
    from ..ports.checkpoint import Checkpoint, CheckpointStore
    from .graph import Graph
    from .step import Pause

ApprovalStatus = Literal["pending", "decided", "timed_out"]


def approval_id_for(trace_id: str, step: int) -> str:
    """The approval of the pause committed at ``step`` (also the deadline task's name)."""
    return f"{trace_id}-{step}"


def approval_path(approval_id: str) -> str:
    """Document path of an approval."""
    return APPROVALS.path(approval_id)


class Approval(DeferredModel):
    """One pending or decided human decision (built on first use: a node's start imports it).

    ``payload`` is what was put up for approval and ``payload_hash`` binds
    the decision to it; ``applied_payload`` is what the reviewer approved
    (their edit, or the payload itself) and ``applied_payload_hash`` is what
    the resumed node must execute.
    """

    approval_id: str
    trace_id: str
    graph: str
    step: int
    """The step that paused; the resume envelope is for ``step + 1``."""
    resume_node: str
    kind: str
    payload: dict[str, Any]
    payload_hash: str
    reviewers: list[str]
    escalate_to: list[str] = Field(default_factory=empty_list)
    context: dict[str, Any] = Field(default_factory=empty_dict)
    status: ApprovalStatus = "pending"
    deadline: float
    window_s: float
    on_timeout: str = "needs_review"
    round: int = 0
    """0 for the first notification; +1 per escalation."""
    decision: str | None = None
    decided_by: str | None = None
    decided_at: float | None = None
    comment: str | None = None
    """The reviewer's comment (feedback, an instruction), for choices that take one."""
    edited: bool = False
    applied_payload: dict[str, Any] | None = None
    applied_payload_hash: str | None = None
    resumed_at: float | None = None
    """Unused since the trace itself tells whether a resume must still be published
    (``publish_resume``); kept so older records and a node closing its own wait validate."""
    timed_out_at: float | None = None
    created_at: float
    expire_at: float
    notify_errors: dict[str, str] = Field(default_factory=empty_dict)
    """Reviewers whose channel refused their notification for good, with what it said."""

    # Stored with the record (computed fields are dumped) for the reviewer's inbox to
    # query by (schema.APPROVALS's indexes); validating a stored record ignores them.
    @computed_field  # type: ignore[prop-decorator]
    @property
    def may_decide(self) -> list[str]:
        """Everyone who may decide it: the reviewers, then those it escalates to."""
        return list(dict.fromkeys([*self.reviewers, *self.escalate_to]))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mailbox(self) -> str:
        """The mailbox the email came to, when the pause's context names it."""
        return str(self.context.get("mailbox") or "")

    @property
    def resume_step(self) -> int:
        """The step number of the envelope that resumes the trace."""
        return self.step + 1

    def decided(self, decision: str | None, by: str | None, at: float, **more: Any) -> Approval:
        """This approval decided: ``decision`` by ``by`` at ``at`` (and ``more`` fields set)."""
        update = {"status": "decided", "decision": decision, "decided_by": by, "decided_at": at}
        return self.model_copy(update={**update, **more})


TIMEOUT_REVIEWER = "deadline"
"""Who ``decided_by`` names when the deadline decided."""


def read_approval(store: DocumentStore, approval_id: str) -> Approval | None:
    """An approval by id, or None (also for an id that is no document name)."""
    if not approval_id or "/" in approval_id:
        return None
    doc = store.get(approval_path(approval_id))
    return None if doc is None else Approval.model_validate(doc)


# --- committing a pause --------------------------------------------------------------------------


def approval_of_pause(
    pause: Pause, graph: Graph, trace_id: str, step: int, now: float, expire_at: float
) -> Approval:
    # What comes from mail is cleaned as an edit of it would have to be (every graph, every
    # kind): approving it unchanged passes the kind's edit rules, and the hash binds the
    # cleaned payload. Nodes that act on their own copy when no edit comes back clean it
    # the same way (``PauseKind.clean_payload``, idempotent).
    payload = kind_of(graph.pause_kinds, pause.kind).clean_payload(jsonable(pause.payload))
    return Approval(
        approval_id=approval_id_for(trace_id, step),
        trace_id=trace_id,
        graph=graph.name,
        step=step,
        resume_node=pause.resume_node,
        kind=pause.kind,
        payload=payload,
        payload_hash=payload_hash(payload),
        reviewers=list(dict.fromkeys(pause.reviewers)),
        escalate_to=list(pause.escalate_to),
        context=jsonable(pause.context),
        deadline=now + pause.deadline_s,
        window_s=pause.deadline_s,
        on_timeout=pause.on_timeout,
        created_at=now,
        expire_at=max(expire_at, now + pause.deadline_s + 7 * 86400),
    )


def pause_record(pause: Pause, approval: Approval) -> dict[str, Any]:
    return {
        "approval_id": approval.approval_id,
        "kind": approval.kind,
        "payload": approval.payload,
        "payload_hash": approval.payload_hash,
        "reviewers": approval.reviewers,
        "deadline": approval.deadline,
        "on_timeout": approval.on_timeout,
        "paused_at": approval.created_at,
    }


def payload_hash(payload: Any) -> str:
    """SHA-256 of the canonical JSON of a payload: what an approval binds to."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


# --- checking a decision -------------------------------------------------------------------------


class ResumeRefused(RejectedEnvelope):
    """A resume that does not answer the pause its trace waits on.

    Permanent: the runtime acknowledges the envelope, records the refusal in
    ``failures`` and leaves the trace as it was (still waiting).
    """


def check_resume(
    decision: Mapping[str, Any],
    pause: Mapping[str, Any] | None,
    pause_kinds: Mapping[str, PauseKind],
    trace_id: str,
) -> None:
    """Refuse a resume that does not match the pause ``trace_id`` waits on.

    A resume answers one pause: its ``decision`` must be one of the choices of
    the pause's declared kind; when it names the pause's ``kind`` or its
    ``approval_id`` (every resume we publish does), they must be the pause's.

    Args:
        decision: the resume (``decision``, ``reviewer``, ``kind``, ``approval_id``, ...).
        pause: the checkpoint's pause record (None: the trace is not paused).
        pause_kinds: the trace's graph's declared kinds, by name.
        trace_id: the trace, for the message.

    Raises:
        ResumeRefused: saying what the resume was and why it does not fit.
    """
    value = decision.get("decision")
    who = decision.get("reviewer") or decision.get("decided_by")
    what = f"resume {value!r}" + (f" by {who}" if who else "") + f" of trace {trace_id}"
    if not pause:
        raise ResumeRefused(f"{what} refused: the trace is not paused")
    kind_name = str(pause.get("kind"))
    waiting_on = f"it waits on {kind_name} pause {pause.get('approval_id')}"
    wanted_kind = decision.get("kind")
    if wanted_kind is not None and wanted_kind != kind_name:
        raise ResumeRefused(f"{what} refused: it answers a {wanted_kind} pause, but {waiting_on}")
    approval_id = decision.get("approval_id")
    if approval_id is not None and approval_id != pause.get("approval_id"):
        raise ResumeRefused(f"{what} refused: it answers pause {approval_id}, but {waiting_on}")
    kind = kind_of(pause_kinds, kind_name)
    if not isinstance(value, str) or value not in kind.values:
        raise ResumeRefused(f"{what} refused: {kind_name} pauses take {' or '.join(kind.values)}")


def check_decision(decision: Mapping[str, Any], checkpoint: Checkpoint) -> None:
    """A decision from an approval must be for this pause and carry what was approved."""
    approval_id = decision.get("approval_id")
    if approval_id is None:
        return
    pause = checkpoint.pause or {}
    if approval_id != pause.get("approval_id"):
        raise RejectedEnvelope(
            f"decision for approval {approval_id!r}, but trace {checkpoint.trace_id} waits on "
            f"{pause.get('approval_id')!r}"
        )
    approved = decision.get("payload")
    expected = pause.get("payload_hash") if approved is None else payload_hash(approved)
    if decision.get("payload_hash") != expected:
        raise RejectedEnvelope(
            f"decision for approval {approval_id} does not carry the hash of what was approved"
        )


def resume_checked(
    admit: Callable[[Checkpoint | None], None], resume: Mapping[str, Any] | None, graph: Graph
) -> Callable[[Checkpoint | None], None]:
    """``admit``, then: a resume must answer the pause the trace waits on (``check_resume``)."""
    if resume is None:
        return admit

    def admit_resume(checkpoint: Checkpoint | None) -> None:
        admit(checkpoint)
        assert checkpoint is not None  # admit refuses a missing trace
        check_resume(resume, checkpoint.pause, graph.pause_kinds, checkpoint.trace_id)

    return admit_resume


# --- resuming ------------------------------------------------------------------------------------


def resume_of(approval: Approval) -> dict[str, Any]:
    """The resume a decided approval publishes: the decision, who took it, what to execute.

    Every resume of a recorded decision is built here from the record (the first
    publish and every republish), so a republished resume is the same resume.
    """
    return {
        "decision": approval.decision,
        "reviewer": approval.decided_by,
        "comment": approval.comment,
        "kind": approval.kind,
        "approval_id": approval.approval_id,
        "payload": approval.applied_payload,
        "payload_hash": approval.applied_payload_hash
        if approval.applied_payload is not None
        else approval.payload_hash,
    }


def publish_resume(
    checkpoints: CheckpointStore,
    bus: MessageBus,
    clock: Clock,
    trace_id: str,
    decision: Mapping[str, Any],
) -> Envelope:
    """Publish the envelope that resumes waiting trace ``trace_id`` with ``decision``.

    What the approval service calls for a reviewer's decision or a deadline, and
    ingest (through ``Runtime.resume``) for a customer's answer: the envelope goes to
    the node the trace waits at, and the runtime checks it there (``resume_checked``,
    ``check_decision``) before the node runs.

    A decision naming its approval (``resume_of``) is published only while the trace
    waits on that very approval: once the trace has moved past the pause (its resume
    ran), republishing it would be refused at delivery anyway. This read of the
    checkpoint is how any later touch of a decided approval tells whether its resume
    may not have gone out (a crash between the decision and the publish): no record
    notes the publish. While the resume is on its way, a touch publishes it again and
    the runtime drops the second delivery as a duplicate (§5, rule 1).

    Raises:
        RejectedEnvelope: the trace is not waiting, or not on the approval ``decision`` names.
    """
    checkpoint = checkpoints.get_trace(trace_id)
    if checkpoint is None or checkpoint.status != "waiting":
        raise RejectedEnvelope(f"trace {trace_id} is not waiting")
    waits_on = (checkpoint.pause or {}).get("approval_id")
    answers = decision.get("approval_id")
    if answers is not None and waits_on != answers:
        raise RejectedEnvelope(
            f"trace {trace_id} no longer waits on approval {answers} (it waits on {waits_on})"
        )
    with telemetry.span(
        f"resume {checkpoint.graph}.{checkpoint.node}",
        parent=checkpoint.traceparent,
        trace_id=trace_id,
        node=checkpoint.node,
        step=checkpoint.step,
        decided_by=decision.get("decided_by"),
    ):
        envelope = Envelope(
            trace_id=trace_id,
            graph=checkpoint.graph,
            node=checkpoint.node,
            step=checkpoint.step,
            sent_at=clock.now(),
            resume=dict(decision),
            traceparent=telemetry.traceparent(),
        )
    bus.publish([envelope])
    return envelope


# --- the customer wait ---------------------------------------------------------------------------


CUSTOMER_REPLY = "customer_reply"


def customer_of(state: Any) -> str | None:
    """The customer of a trace: the sender of the email that started it (``state["email"]``)."""
    email = state.get("email") if isinstance(state, dict) else None
    sender = email.get("sender") if isinstance(email, dict) else None
    address = sender.get("address") if isinstance(sender, dict) else None
    return address_key_or_none(str(address)) if address else None


def customer_reply_resume(
    email: Email, trace_id: str, step: int, queued: bool = False
) -> dict[str, Any]:
    """The resume a customer's reply sends to the ``customer_reply`` pause that ``step`` waits on."""
    payload: dict[str, Any] = {"email": email.model_dump(mode="json")}
    if queued:
        payload["queued"] = True
    return {
        "decision": "reply",
        "kind": CUSTOMER_REPLY,
        "approval_id": approval_id_for(trace_id, step - 1),
        "payload": payload,
        # A resume naming its approval carries the hash of its payload (the runtime checks it).
        "payload_hash": payload_hash(payload),
        "reviewer": email.sender.address,
    }


class AnsweredFirst(ResumeRefused):
    """A customer's answer to a wait that its deadline (or another answer) decided first.

    Attributes:
        approval: the wait's approval as decided (or timed out) before this answer.
    """

    def __init__(self, message: str, approval: Approval) -> None:
        super().__init__(message)
        self.approval = approval


def answer_customer_wait(store: DocumentStore, resume: Mapping[str, Any], now: float) -> Approval:
    """Decide a customer wait's approval with the customer's answer, unless decided first.

    The customer's side of "first decision wins" (docs/architecture.md §6): ingest calls
    this before it publishes a reply's resume, in one transaction on
    ``approvals/{approval_id}``, as the approval function does for a reviewer and the
    deadline handler for the timeout policy. The decision, who took it and the payload
    (with its hash) are recorded, so ``resume_of`` rebuilds exactly this resume: the
    deadline task that fires later only republishes it. Taking it again with the same
    answer (a redelivery) returns the record as it is.

    Args:
        store: where the approval lives.
        resume: the answer (``customer_reply_resume``): ``approval_id``, ``kind``,
            ``decision``, ``reviewer`` (the customer), ``payload`` and ``payload_hash``.
        now: the decision time.

    Returns:
        The approval, decided by this answer.

    Raises:
        AnsweredFirst: the wait was decided (by its deadline, another answer) or timed
            out before; nothing was written.
        ResumeRefused: there is no such approval, or it is not a pause of that kind.
    """
    approval_id = str(resume.get("approval_id") or "")
    who = resume.get("reviewer")
    what = f"resume {resume.get('decision')!r} by {who} of pause {approval_id}"

    def take(tx: Transaction) -> Approval:
        doc = tx.get(approval_path(approval_id)) if approval_id and "/" not in approval_id else None
        if doc is None:
            raise ResumeRefused(f"{what} refused: no such approval")
        current = Approval.model_validate(doc)
        if current.kind != resume.get("kind"):
            raise ResumeRefused(f"{what} refused: it is a {current.kind} pause")
        if answered_by(current, resume):
            return current
        if current.status != "pending":
            raise AnsweredFirst(f"{what} refused: {answered_first(current)}", current)
        decided = current.decided(
            resume.get("decision"),
            who,
            now,
            applied_payload=dict(resume.get("payload") or {}),
            applied_payload_hash=resume.get("payload_hash"),
        )
        tx.set(approval_path(approval_id), decided.model_dump())
        return decided

    return store.run_transaction(take)


def answered_by(approval: Approval, resume: Mapping[str, Any]) -> bool:
    """Whether ``approval`` was decided by exactly this answer (same decision and payload)."""
    return (
        approval.status == "decided"
        and approval.decision == resume.get("decision")
        and approval.decided_by == resume.get("reviewer")
        and approval.applied_payload_hash is not None
        and approval.applied_payload_hash == resume.get("payload_hash")
    )


def answered_first(approval: Approval) -> str:
    """What answered a wait before: "the wait was answered first: no_reply by deadline at T"."""
    if approval.status == "timed_out":
        return f"the wait timed out first{_at(approval.timed_out_at)}"
    who = approval.decided_by or TIMEOUT_REVIEWER
    return f"the wait was answered first: {approval.decision} by {who}{_at(approval.decided_at)}"


def _at(when: float | None) -> str:
    return "" if when is None else f" at {when:.0f}"

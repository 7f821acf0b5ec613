"""Decisions: a reviewer's (by link, form, API key or reply), a customer's answer to a wait.

Every decision is one transaction on ``approvals/{approval_id}``: the first to
decide the record wins and anything later is refused (``AlreadyDecided``) or,
for a customer's answer, kept as a later reply. The resume is published after
the commit, and any later touch of a decided approval whose resume was not
published (a timeout task, a repeated POST) publishes it again; the runtime
drops duplicate resumes. A customer's reply to a wait takes its approval the
same way before ingest publishes it (``answer_customer_wait``).
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from ..clock import Clock
from ..engine.pause_kinds import MAX_COMMENT_CHARS, EditRejected, PauseKind, ResumeRefused, kind_of
from ..engine.runtime import payload_hash
from ..errors import RejectedEnvelope
from ..ports.documents import DocumentStore, Transaction
from ..schema import APPROVAL_TOKENS
from .errors import AlreadyDecided, ApprovalError, invalid_link
from .records import TIMEOUT_REVIEWER, Approval, approval_path, read_approval
from .settings import ApprovalConfig
from .tokens import Tokens

log = logging.getLogger(__name__)

KindLookup = Callable[[str, str], PauseKind]
"""``(graph, kind) -> PauseKind``: a pause's declaration."""


def registered_kind(graph: str, kind: str) -> PauseKind:
    """The pause kind ``kind`` as graph ``graph`` of the registry declares it."""
    from ..graphs import graph_registry

    declared = graph_registry().get(graph)
    return kind_of(declared.pause_kinds if declared is not None else {}, kind)


class Decisions:
    """Record decisions (first decision wins) and publish the resume they make.

    Args:
        store: where approvals and token records live.
        tokens: verifies the reviewer's link or form token.
        resume: publishes the envelope that resumes a trace (``Runtime.resume``).
        clock: time source.
        config: limits (the largest edit).
        kinds: finds a pause's declared kind.
    """

    def __init__(
        self,
        store: DocumentStore,
        tokens: Tokens,
        resume: Callable[[str, Mapping[str, Any]], Any],
        clock: Clock,
        config: ApprovalConfig,
        kinds: KindLookup = registered_kind,
    ) -> None:
        self.store = store
        self.tokens = tokens
        self.resume = resume
        self.clock = clock
        self.config = config
        self.kinds = kinds

    def kind(self, approval: Approval) -> PauseKind:
        """The approval's declared kind, labels and outcomes filled from its context."""
        return self.kinds(approval.graph, approval.kind).for_pause(approval.context)

    def decide(
        self,
        approval_id: str,
        token: str | None,
        decision: str,
        edit: Mapping[str, Any] | None = None,
        claimed_reviewer: str | None = None,
        comment: str | None = None,
        *,
        form: bool = False,
    ) -> Approval:
        """Record a reviewer's decision (first decision wins) and resume the trace.

        Args:
            approval_id: the approval.
            token: the reviewer's token from the link (with ``form``: the page's form token).
            decision: one of the pause kind's choices.
            edit: edited payload fields, checked by the kind's field rules.
            claimed_reviewer: a reviewer named by the client (JSON API); must match the token's.
            comment: the reviewer's comment, for choices that take one.
            form: ``token`` is a review page's form token.

        Raises:
            ApprovalError: bad token (400/403/410), bad decision or edit (400), oversized
                edit (413).
            AlreadyDecided: someone decided first (409).
        """
        checked = (
            self.tokens.check_form(approval_id, token)
            if form
            else self.tokens.check(approval_id, token)
        )
        if claimed_reviewer is not None and claimed_reviewer != checked.token.reviewer:
            raise ApprovalError(403, "Wrong reviewer", "this link belongs to another reviewer")
        return self._decide(
            checked.approval, checked.token.reviewer, checked.token_id, decision, edit, comment
        )

    def decide_as(
        self,
        approval_id: str,
        reviewer: str,
        decision: str,
        edit: Mapping[str, Any] | None = None,
        comment: str | None = None,
    ) -> Approval:
        """Record a decision for a named reviewer (the API-key path); mints no token.

        Raises:
            ApprovalError: 404 no such approval, 403 not a reviewer, 400/413 as ``decide``.
            AlreadyDecided: decided before (409).
        """
        approval = read_approval(self.store, approval_id)
        if approval is None:
            raise ApprovalError(404, "Not found", "no such approval")
        if approval.status != "pending":
            raise AlreadyDecided(approval)
        if reviewer not in approval.reviewers and reviewer not in approval.escalate_to:
            raise ApprovalError(403, "Not a reviewer", "that reviewer does not review this")
        return self._decide(approval, reviewer, None, decision, edit, comment)

    def _decide(
        self,
        approval: Approval,
        reviewer: str,
        token_id: str | None,
        decision: str,
        edit: Mapping[str, Any] | None,
        comment: str | None,
    ) -> Approval:
        kind = self.kind(approval)
        choice = kind.choice(decision)
        if choice is None:
            raise ApprovalError(
                400, "Unknown decision", f"decision must be one of {', '.join(kind.values)}"
            )
        applied = self._applied_payload(approval, kind, choice.applies_edit, edit)
        applied_hash = payload_hash(applied) if applied is not None else None
        note = _comment(choice.comment, choice.comment_label, comment)
        now = self.clock.now()
        approval_id = approval.approval_id
        tpath = APPROVAL_TOKENS.path(token_id) if token_id else None

        def record(tx: Transaction) -> Approval:
            doc = tx.get(approval_path(approval_id))
            tdoc = tx.get(tpath) if tpath else {}
            if doc is None or tdoc is None:
                raise invalid_link()
            current = Approval.model_validate(doc)
            if current.status != "pending" or tdoc.get("used_at") is not None:
                raise AlreadyDecided(current)
            decided = current.model_copy(
                update={
                    "status": "decided",
                    "decision": decision,
                    "decided_by": reviewer,
                    "decided_at": now,
                    "comment": note,
                    "edited": applied is not None and applied != current.payload,
                    "applied_payload": applied,
                    "applied_payload_hash": applied_hash,
                }
            )
            tx.set(approval_path(approval_id), decided.model_dump())
            if tpath:
                tx.set(tpath, {**tdoc, "used_at": now})
            return decided

        decided = self.store.run_transaction(record)
        log.info("approval %s: %s by %s", approval_id, decision, reviewer)
        return self.publish_resume(decided)

    def _applied_payload(
        self,
        approval: Approval,
        kind: PauseKind,
        applies_edit: bool,
        edit: Mapping[str, Any] | None,
    ) -> dict[str, Any] | None:
        """The payload the resumed node must execute (None when the decision carries none)."""
        if not applies_edit:
            return None
        payload = dict(approval.payload)
        if not edit:
            return payload
        if not isinstance(edit, Mapping):
            raise ApprovalError(400, "Bad edit", "the edit must be an object of field values")
        size = sum(len(value) for value in edit.values() if isinstance(value, str))
        if size > self.config.max_edit_chars:
            raise ApprovalError(
                413,
                "Edit too long",
                f"the edit is {size} characters; at most {self.config.max_edit_chars} are accepted",
            )
        try:
            checked = kind.validate_edit(edit)
        except EditRejected as exc:
            status, title = (413, "Edit too long") if exc.too_long else (400, "Edit refused")
            raise ApprovalError(status, title, str(exc)) from exc
        payload.update(checked)
        return payload

    def publish_resume(self, approval: Approval) -> Approval:
        """Publish the decided approval's resume (again, if it may not have been) and note it."""
        if approval.status != "decided" or approval.resumed_at is not None:
            return approval
        try:
            self.resume(approval.trace_id, resume_of(approval))
        except RejectedEnvelope as exc:
            # The trace moved on (a duplicate resume already ran it): nothing to publish.
            log.info("resume of %s not published: %s", approval.approval_id, exc)
        return note_resumed(self.store, approval, self.clock.now())


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


def note_resumed(store: DocumentStore, approval: Approval, now: float) -> Approval:
    """Record that the decided approval's resume was published (the first time counts)."""

    def note(tx: Transaction) -> Approval:
        doc = tx.get(approval_path(approval.approval_id)) or approval.model_dump()
        doc["resumed_at"] = doc.get("resumed_at") or now
        tx.set(approval_path(approval.approval_id), doc)
        return Approval.model_validate(doc)

    return store.run_transaction(note)


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
        decided = current.model_copy(
            update={
                "status": "decided",
                "decision": resume.get("decision"),
                "decided_by": who,
                "decided_at": now,
                "applied_payload": dict(resume.get("payload") or {}),
                "applied_payload_hash": resume.get("payload_hash"),
            }
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


def _comment(rule: str, label: str, comment: Any) -> str | None:
    """The decision's comment under its choice's rule (``none`` drops one sent anyway)."""
    if rule == "none" or comment is None:
        if rule == "required":
            raise ApprovalError(400, "Comment needed", f"{label}: this decision needs a comment")
        return None
    if not isinstance(comment, str):
        raise ApprovalError(400, "Bad comment", f"{label}: must be text")
    text = comment.replace("\r\n", "\n").strip()
    if len(text) > MAX_COMMENT_CHARS:
        raise ApprovalError(
            413, "Comment too long", f"{label}: at most {MAX_COMMENT_CHARS} characters"
        )
    if any(c not in "\t\n" and unicodedata.category(c) == "Cc" for c in text):
        raise ApprovalError(400, "Bad comment", f"{label}: control characters are not accepted")
    if rule == "required" and not text:
        raise ApprovalError(400, "Comment needed", f"{label}: this decision needs a comment")
    return text or None

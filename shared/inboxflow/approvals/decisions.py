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

from ..engine.pause_kinds import MAX_COMMENT_CHARS, EditRejected, KindLookup, PauseKind
from ..engine.waits import (
    Approval,
    approval_path,
    payload_hash,
    read_approval,
    resume_of,
)
from ..errors import RejectedEnvelope
from ..ports.documents import Transaction
from ..schema import APPROVAL_TOKENS
from .errors import AlreadyDecided, ApprovalError, invalid_link
from .grounds import Grounds, Part
from .tokens import Tokens

log = logging.getLogger(__name__)


class Decisions(Part):
    """Record decisions (first decision wins) and publish the resume they make.

    Args:
        grounds: the store (approvals and token records), the clock, the config (limits: the largest edit).
        tokens: verifies the reviewer's link or form token.
        resume: publishes the envelope that resumes a trace (``Runtime.resume``).
        kinds: finds a pause's declared kind (``kind_lookup`` of the runtime's graphs).
    """

    def __init__(
        self,
        grounds: Grounds,
        tokens: Tokens,
        resume: Callable[[str, Mapping[str, Any]], Any],
        kinds: KindLookup,
    ) -> None:
        super().__init__(grounds)
        self.tokens = tokens
        self.resume = resume
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
            decided = current.decided(
                decision,
                reviewer,
                now,
                comment=note,
                edited=applied is not None and applied != current.payload,
                applied_payload=applied,
                applied_payload_hash=applied_hash,
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
        """Publish the decided approval's resume while its trace still waits on it.

        Every touch of a decided approval calls this: a crash between the decision and
        the publish is repaired by the next one. Whether the resume must still go out is
        read from the trace (``waits.publish_resume`` publishes only while the trace waits
        on this approval), not noted on the record: one write less per decision. A touch
        while the resume is on its way publishes it again; the runtime drops the duplicate.
        """
        if approval.status != "decided":
            return approval
        try:
            self.resume(approval.trace_id, resume_of(approval))
        except RejectedEnvelope as exc:
            # The trace moved on (its resume ran): nothing to publish.
            log.info("resume of %s not published: %s", approval.approval_id, exc)
        return approval


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

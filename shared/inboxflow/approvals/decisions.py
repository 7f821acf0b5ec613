"""Decisions: a reviewer's (by link, form, API key or reply), a customer's answer to a wait.

Every decision is one conditional write of ``approvals/{approval_id}``: the
record is written only if it is still the version the decision's checks read
(``DocumentStore.update_if_unchanged``), so the first to decide it wins and
anything later is refused (``AlreadyDecided``) or, for a customer's answer,
kept as a later reply. The write reads nothing and, on Firestore, is no
transaction: it holds no lock while the others decide (the emulator's lock
manager aborted every one of eight contending transactions). The token's
record is marked used in the same write, not read again: only the write that
decides its approval marks it. An approval already decided when it was
checked is refused without a write. The resume is published after the
commit, and any later touch of a decided approval whose resume was not
published (a timeout task, a repeated POST) publishes it again; the runtime
drops duplicate resumes. Once the resume is published, the round's deadline
task is deleted (``on_published``): it would only have published it again. A
customer's reply to a wait takes its approval in a transaction before ingest
publishes it (``answer_customer_wait``).
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from ..engine.pause_kinds import MAX_COMMENT_CHARS, EditRejected, KindLookup, PauseKind
from ..engine.waits import Approval, approval_path, payload_hash, resume_of
from ..errors import Contention, RejectedEnvelope
from ..schema import APPROVAL_TOKENS
from .errors import AlreadyDecided, ApprovalError, invalid_link
from .grounds import Grounds, Part
from .tokens import Tokens, read_versioned

log = logging.getLogger(__name__)

MAX_DECIDE_ATTEMPTS = 5
"""Writes of one decision against an approval that keeps changing while pending."""


class Decisions(Part):
    """Record decisions (first decision wins) and publish the resume they make.

    Args:
        grounds: the store (approvals and token records), the clock, the config (limits: the largest edit).
        tokens: verifies the reviewer's link or form token.
        resume: publishes the envelope that resumes a trace (``Runtime.resume``).
        kinds: finds a pause's declared kind (``kind_lookup`` of the runtime's graphs).

    Attributes:
        on_published: called with a decision's approval once its resume is published
            (the service deletes the round's deadline task); its failure is logged, not raised.
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
        self.on_published: Callable[[Approval], object] | None = None

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
            (checked.approval, checked.version),
            checked.token.reviewer,
            (checked.token_id, checked.token.model_dump()),
            decision,
            edit,
            comment,
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
        found = read_versioned(self.store, approval_id)
        if found is None:
            raise ApprovalError(404, "Not found", "no such approval")
        approval = found[0]
        if approval.status != "pending":
            raise AlreadyDecided(approval)
        if reviewer not in approval.reviewers and reviewer not in approval.escalate_to:
            raise ApprovalError(403, "Not a reviewer", "that reviewer does not review this")
        return self._decide(found, reviewer, None, decision, edit, comment)

    def _decide(
        self,
        found: tuple[Approval, Any],
        reviewer: str,
        token: tuple[str, dict[str, Any]] | None,
        decision: str,
        edit: Mapping[str, Any] | None,
        comment: str | None,
    ) -> Approval:
        """Decide the approval as the caller read it (``found``: it and its version).

        The decided record is written only if the approval is still the version read
        (``update_if_unchanged``): first writer wins, and the decision reads nothing more.
        ``token``: the id and the stored record of the link's token, marked used in the same
        write; it is not read again, as only the write that decides its approval marks it
        (a pending approval's tokens are unused). An approval changed meanwhile is read
        again: decided, the decision is refused (409); still pending (an escalation), it is
        decided against the new version.
        """
        approval, version = found
        if approval.status != "pending":
            raise AlreadyDecided(approval)  # a read whose answer is known: no write
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
        used = {APPROVAL_TOKENS.path(token[0]): {**token[1], "used_at": now}} if token else None
        for _ in range(MAX_DECIDE_ATTEMPTS):
            decided = approval.decided(
                decision,
                reviewer,
                now,
                comment=note,
                edited=applied is not None and applied != approval.payload,
                applied_payload=applied,
                applied_payload_hash=applied_hash,
            )
            path = approval_path(approval_id)
            if self.store.update_if_unchanged(path, version, decided.model_dump(), used):
                break
            again = read_versioned(self.store, approval_id)
            if again is None:
                raise invalid_link()
            approval, version = again
            if approval.status != "pending":
                raise AlreadyDecided(approval)
        else:
            raise Contention(f"approval {approval_id} changed {MAX_DECIDE_ATTEMPTS} times")
        log.info("approval %s: %s by %s", approval_id, decision, reviewer)
        self.publish_resume(decided)
        self._published(decided)
        return decided

    def _published(self, decided: Approval) -> None:
        """Tell ``on_published`` the decision's resume is out; a failure there is harmless."""
        if self.on_published is None:
            return
        try:
            self.on_published(decided)
        except Exception:  # the deadline task stays and finds the approval decided
            log.warning(
                "approval %s: after-publish step failed", decided.approval_id, exc_info=True
            )

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

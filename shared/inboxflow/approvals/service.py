"""The approval protocol (ARCHITECTURE section 4): notify, check links, decide, time out.

``ApprovalService`` is what the pausing node (through ``Runtime.on_pause``),
the approval HTTP function and the CLI share. Every state change is one
transaction on the store; the resume is published after it commits, and
any later touch of a decided approval whose resume was not published
(a timeout task, a repeated POST) publishes it again - the runtime drops
duplicate resumes.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..clock import Clock, SystemClock
from ..context import EffectJournal
from ..errors import RejectedEnvelope
from ..ports.checkpoint import CheckpointStore, Transaction
from ..ports.tasks import ScheduledTask, TaskQueue
from ..runtime import payload_hash
from .notify import Notifier
from .records import (
    APPROVALS,
    Approval,
    TokenRecord,
    approval_path,
    new_token,
    token_path,
    token_record,
)

log = logging.getLogger(__name__)

MAX_SCHEDULE_AHEAD_S = 30 * 86400
"""Cloud Tasks schedules at most 30 days ahead; a longer wait re-schedules itself."""

DEFAULT_CHOICES: dict[str, tuple[str, ...]] = {
    "approve_draft": ("approve", "reject"),
    "review_action": ("approve", "reject"),
    "triage_decision": ("respond", "notify", "ignore"),
}
EDITABLE_KINDS = frozenset({"approve_draft", "review_action"})
EDITABLE_FIELDS = ("draft", "to", "subject")
TIMEOUT_REVIEWER = "deadline"


class ApprovalError(Exception):
    """A request the approval function refuses; ``status`` is its HTTP status code."""

    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message


class AlreadyDecided(ApprovalError):
    """The approval was decided (or timed out) before this request."""

    def __init__(self, approval: Approval) -> None:
        who = approval.decided_by or TIMEOUT_REVIEWER
        super().__init__(409, "Already decided", f"already decided: {approval.decision} by {who}")
        self.approval = approval


@dataclass(frozen=True)
class ApprovalConfig:
    """Where links point and what is accepted.

    Attributes:
        base_url: public URL of the approval function (links and the timeout endpoint).
        audience: OIDC audience of the deadline tasks (default ``base_url``).
        max_edit_chars: the largest edited draft accepted.
        api_key: bearer key of the pending-approvals list for chat integrations (None: disabled).
    """

    base_url: str = "http://127.0.0.1:8088"
    audience: str | None = None
    max_edit_chars: int = 20_000
    api_key: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ApprovalConfig:
        """``INBOXFLOW_APPROVAL_URL``, ``INBOXFLOW_TASKS_AUDIENCE``, ``INBOXFLOW_MAX_EDIT_CHARS``, ``INBOXFLOW_API_KEY``."""
        env = os.environ if environ is None else environ
        return cls(
            base_url=env.get("INBOXFLOW_APPROVAL_URL", cls.base_url).rstrip("/"),
            audience=env.get("INBOXFLOW_TASKS_AUDIENCE") or None,
            max_edit_chars=int(env.get("INBOXFLOW_MAX_EDIT_CHARS", cls.max_edit_chars)),
            api_key=env.get("INBOXFLOW_API_KEY") or None,
        )

    def link(self, approval_id: str, token: str) -> str:
        """The review link sent to a reviewer."""
        return f"{self.base_url}/a/{approval_id}?t={token}"

    @property
    def timeout_url(self) -> str:
        """The endpoint the deadline task calls."""
        return f"{self.base_url}/timeout"


def choices_for(kind: str) -> tuple[str, ...]:
    """The decisions a pause of ``kind`` accepts."""
    return DEFAULT_CHOICES.get(kind, ("approve", "reject"))


@dataclass
class Checked:
    """An approval and the token record that opened it."""

    approval: Approval
    token: TokenRecord


class ApprovalService:
    """Notify reviewers, verify links, record decisions, apply deadlines.

    Args:
        store: where approvals and token records live.
        tasks: the queue that holds deadlines.
        notifier: sends reviewer emails.
        resume: publishes the envelope that resumes a trace (``Runtime.resume``).
        clock: time source.
        config: links and limits.
    """

    def __init__(
        self,
        store: CheckpointStore,
        tasks: TaskQueue,
        notifier: Notifier,
        resume: Callable[[str, Mapping[str, Any]], Any],
        clock: Clock | None = None,
        config: ApprovalConfig | None = None,
    ) -> None:
        self.store = store
        self.tasks = tasks
        self.notifier = notifier
        self.resume = resume
        self.clock = clock or SystemClock()
        self.config = config or ApprovalConfig()
        self.journal = EffectJournal(store, self.clock)

    # --- after a pause commits ------------------------------------------------------

    def after_pause(self, approval: Approval) -> None:
        """Notify the reviewers of the current round and schedule its deadline, once each.

        Safe to call again (a redelivery of the pausing step): each email and
        the task are effects, recorded in the journal and reconciled by key.
        """
        current = self.get(approval.approval_id) or approval
        if current.status != "pending":
            return
        reviewers = current.reviewers if current.round == 0 else current.escalate_to
        for reviewer in reviewers:
            self.journal.run(
                current.trace_id,
                current.step,
                f"notify-{current.round}-{reviewer}",
                functools.partial(self._notify, current, reviewer),
                functools.partial(self._sent, current),
                expire_at=current.expire_at,
            )
        self.journal.run(
            current.trace_id,
            current.step,
            f"deadline-{current.round}",
            lambda key: self._schedule_deadline(current, current.round, 0),
            None,
            expire_at=current.expire_at,
        )

    def _notify(self, approval: Approval, reviewer: str, key: str) -> dict[str, Any]:
        from .pages import render_notification

        link = self.issue_link(approval, reviewer)
        subject, text, html = render_notification(self.view(approval, reviewer), link=link)
        sender = approval.context.get("mailbox") or None
        receipt = self.notifier.send(reviewer, subject, text, html, key, sender)
        return {"id": receipt.get("id"), "to": reviewer}

    def _sent(self, approval: Approval, key: str) -> dict[str, Any] | None:
        return self.notifier.find(key, approval.context.get("mailbox") or None)

    def _schedule_deadline(self, approval: Approval, round_: int, hop: int) -> dict[str, Any]:
        run_at = min(approval.deadline, self.clock.now() + MAX_SCHEDULE_AHEAD_S)
        name = f"{approval.approval_id}-d{round_}" + (f"-h{hop}" if hop else "")
        created = self.tasks.schedule(
            ScheduledTask(
                name=name,
                url=self.config.timeout_url,
                payload={"approval_id": approval.approval_id, "round": round_, "hop": hop},
                run_at=run_at,
                audience=self.config.audience or self.config.base_url,
            )
        )
        return {"task": name, "run_at": run_at, "created": created}

    def issue_link(self, approval: Approval, reviewer: str) -> str:
        """Mint a token for ``reviewer`` (only its hash is stored) and return the review link."""
        if reviewer not in approval.reviewers and reviewer not in approval.escalate_to:
            raise ApprovalError(403, "Not a reviewer", f"{reviewer} does not review this")
        token = new_token()
        record = token_record(approval, reviewer, self.clock.now())
        if not self.store.create(token_path(token), record.model_dump()):
            raise RuntimeError("token collision")  # 256 random bits: never in practice
        return self.config.link(approval.approval_id, token)

    # --- reading ----------------------------------------------------------------------

    def get(self, approval_id: str) -> Approval | None:
        """An approval by id, or None."""
        if not approval_id or "/" in approval_id:
            return None
        doc = self.store.get(approval_path(approval_id))
        return None if doc is None else Approval.model_validate(doc)

    def pending(self, reviewer: str | None = None) -> list[Approval]:
        """Pending approvals (for ``reviewer`` when given), soonest deadline first."""
        where: list[Any] = [("status", "==", "pending")]
        if reviewer:
            where.append(("reviewers", "array_contains", reviewer))
        rows = self.store.list(APPROVALS, where=where, order_by="deadline")
        return [Approval.model_validate(doc) for _, doc in rows]

    def check(self, approval_id: str, token: str | None) -> Checked:
        """Verify a link's token for an approval; changes nothing (GET uses it).

        Raises:
            ApprovalError: 400 no token, 403 unknown / forged / another approval's or
                reviewer's token, 410 expired. A decided approval is returned (the
                page shows the decision); ``decide`` refuses it.
        """
        if not token:
            raise ApprovalError(400, "Link incomplete", "this link has no token")
        if len(token) > 128:
            raise ApprovalError(403, "Link not valid", "this link is not valid")
        approval = self.get(approval_id)
        doc = self.store.get(token_path(token))
        if approval is None or doc is None:
            raise ApprovalError(403, "Link not valid", "this link is not valid")
        record = TokenRecord.model_validate(doc)
        if record.approval_id != approval.approval_id:
            raise ApprovalError(403, "Link not valid", "this link is not valid for this approval")
        if (
            record.reviewer not in approval.reviewers
            and record.reviewer not in approval.escalate_to
        ):
            raise ApprovalError(
                403, "Link not valid", "this link's reviewer no longer reviews this"
            )
        if approval.status == "pending" and self.clock.now() >= record.expires_at:
            raise ApprovalError(410, "Link expired", "this link has expired")
        return Checked(approval, record)

    # --- deciding ---------------------------------------------------------------------

    def decide(
        self,
        approval_id: str,
        token: str | None,
        decision: str,
        edit: Mapping[str, Any] | None = None,
        claimed_reviewer: str | None = None,
    ) -> Approval:
        """Record a reviewer's decision (first decision wins) and resume the trace.

        Args:
            approval_id: the approval.
            token: the reviewer's token from the link.
            decision: one of ``choices_for(kind)``.
            edit: edited fields of the payload (``draft``, ``to``, ``subject``), if any.
            claimed_reviewer: a reviewer named by the client (JSON API); must match the token's.

        Raises:
            ApprovalError: bad token (400/403/410), bad decision (400), oversized edit (413).
            AlreadyDecided: someone decided first (409).
        """
        checked = self.check(approval_id, token)
        approval = checked.approval
        if claimed_reviewer is not None and claimed_reviewer != checked.token.reviewer:
            raise ApprovalError(403, "Wrong reviewer", "this link belongs to another reviewer")
        if decision not in choices_for(approval.kind):
            raise ApprovalError(
                400,
                "Unknown decision",
                f"decision must be one of {', '.join(choices_for(approval.kind))}",
            )
        applied = self._applied_payload(approval, decision, edit)
        applied_hash = payload_hash(applied) if applied is not None else None
        now = self.clock.now()
        reviewer = checked.token.reviewer
        tpath = token_path(token or "")

        def record(tx: Transaction) -> Approval:
            doc = tx.get(approval_path(approval_id))
            tdoc = tx.get(tpath)
            if doc is None or tdoc is None:
                raise ApprovalError(403, "Link not valid", "this link is not valid")
            current = Approval.model_validate(doc)
            if current.status != "pending":
                raise AlreadyDecided(current)
            if tdoc.get("used_at") is not None:
                raise AlreadyDecided(current)
            decided = current.model_copy(
                update={
                    "status": "decided",
                    "decision": decision,
                    "decided_by": reviewer,
                    "decided_at": now,
                    "edited": applied is not None and applied != current.payload,
                    "applied_payload": applied,
                    "applied_payload_hash": applied_hash,
                }
            )
            tx.set(approval_path(approval_id), decided.model_dump())
            tx.set(tpath, {**tdoc, "used_at": now})
            return decided

        decided = self.store.run_transaction(record)
        log.info("approval %s: %s by %s", approval_id, decision, reviewer)
        return self.publish_resume(decided)

    def _applied_payload(
        self, approval: Approval, decision: str, edit: Mapping[str, Any] | None
    ) -> dict[str, Any] | None:
        """The payload the resumed node must execute (None when the decision carries none)."""
        if decision not in ("approve", "respond"):
            return None
        payload = dict(approval.payload)
        if not edit or approval.kind not in EDITABLE_KINDS:
            return payload
        size = sum(len(str(value)) for value in edit.values())
        if size > self.config.max_edit_chars:
            raise ApprovalError(
                413,
                "Edit too long",
                f"the edit is {size} characters; at most {self.config.max_edit_chars} are accepted",
            )
        for name in EDITABLE_FIELDS:
            value = edit.get(name)
            if value is None or name not in payload:
                continue
            text = str(value).replace("\r\n", "\n")
            if name == "to" and ("@" not in text or any(c in text for c in "\r\n,;<>")):
                raise ApprovalError(400, "Bad recipient", "the recipient must be one email address")
            if name == "subject" and ("\n" in text or "\r" in text):
                raise ApprovalError(400, "Bad subject", "the subject must be one line")
            if name == "draft" and not text.strip():
                raise ApprovalError(400, "Empty draft", "the draft cannot be empty")
            payload[name] = text.strip() if name != "draft" else text
        return payload

    def publish_resume(self, approval: Approval) -> Approval:
        """Publish the decided approval's resume (again, if it may not have been) and note it."""
        if approval.status != "decided" or approval.resumed_at is not None:
            return approval
        decision: dict[str, Any] = {
            "decision": approval.decision,
            "reviewer": approval.decided_by,
            "approval_id": approval.approval_id,
            "payload": approval.applied_payload,
            "payload_hash": approval.applied_payload_hash
            if approval.applied_payload is not None
            else approval.payload_hash,
        }
        try:
            self.resume(approval.trace_id, decision)
        except RejectedEnvelope as exc:
            # The trace moved on (a duplicate resume already ran it): nothing to publish.
            log.info("resume of %s not published: %s", approval.approval_id, exc)
        now = self.clock.now()

        def note(tx: Transaction) -> Approval:
            doc = tx.get(approval_path(approval.approval_id)) or approval.model_dump()
            doc["resumed_at"] = doc.get("resumed_at") or now
            tx.set(approval_path(approval.approval_id), doc)
            return Approval.model_validate(doc)

        return self.store.run_transaction(note)

    # --- deadlines --------------------------------------------------------------------

    def on_timeout(self, approval_id: str, hop: int = 0) -> dict[str, Any]:
        """The deadline task fired: apply the timeout policy if the approval is still pending.

        Does nothing to a decided approval (except publishing a resume that may
        have been lost), so deleting the task on an early decision is only an
        optimisation. A task that fires before the deadline (the 30-day hop of
        a long wait) re-schedules itself.
        """
        approval = self.get(approval_id)
        if approval is None:
            return {"action": "none", "reason": "no such approval"}
        if approval.status == "decided":
            self.publish_resume(approval)
            return {"action": "none", "reason": f"already {approval.decision}"}
        if approval.status != "pending":
            return {"action": "none", "reason": f"already {approval.status}"}
        now = self.clock.now()
        if now < approval.deadline:
            scheduled = self._schedule_deadline(approval, approval.round, hop + 1)
            return {"action": "rescheduled", **scheduled}
        policy = approval.on_timeout
        if policy == "escalate" and approval.round == 0 and approval.escalate_to:
            return self._escalate(approval, now)
        if policy == "reject":
            return self._reject_on_timeout(approval, now)
        return self._needs_review(approval, now)

    def _escalate(self, approval: Approval, now: float) -> dict[str, Any]:
        def bump(tx: Transaction) -> Approval | None:
            current = Approval.model_validate(tx.get(approval_path(approval.approval_id)))
            if current.status != "pending" or current.round != approval.round:
                return None
            escalated = current.model_copy(
                update={
                    "round": current.round + 1,
                    "deadline": now + current.window_s,
                    "expire_at": max(current.expire_at, now + current.window_s + 7 * 86400),
                }
            )
            tx.set(approval_path(current.approval_id), escalated.model_dump())
            return escalated

        escalated = self.store.run_transaction(bump)
        if escalated is None:
            return {"action": "none", "reason": "changed meanwhile"}
        self.after_pause(escalated)
        return {"action": "escalated", "to": escalated.escalate_to, "deadline": escalated.deadline}

    def _reject_on_timeout(self, approval: Approval, now: float) -> dict[str, Any]:
        def reject(tx: Transaction) -> Approval | None:
            current = Approval.model_validate(tx.get(approval_path(approval.approval_id)))
            if current.status != "pending":
                return None
            decided = current.model_copy(
                update={
                    "status": "decided",
                    "decision": "reject",
                    "decided_by": TIMEOUT_REVIEWER,
                    "decided_at": now,
                    "timed_out_at": now,
                }
            )
            tx.set(approval_path(current.approval_id), decided.model_dump())
            return decided

        decided = self.store.run_transaction(reject)
        if decided is None:
            return {"action": "none", "reason": "decided meanwhile"}
        self.publish_resume(decided)
        return {"action": "rejected"}

    def _needs_review(self, approval: Approval, now: float) -> dict[str, Any]:
        from ..naming import trace_path

        def give_up(tx: Transaction) -> bool:
            current = Approval.model_validate(tx.get(approval_path(approval.approval_id)))
            trace = tx.get(trace_path(current.trace_id))
            if current.status != "pending":
                return False
            tx.set(
                approval_path(current.approval_id),
                {**current.model_dump(), "status": "timed_out", "timed_out_at": now},
            )
            if (
                trace is not None
                and trace.get("status") == "waiting"
                and trace.get("step") == current.resume_step
            ):
                hours = current.window_s / 3600
                tx.set(
                    trace_path(current.trace_id),
                    {
                        **trace,
                        "status": "needs_review",
                        "error": f"approval {current.approval_id} got no decision within "
                        f"{hours:g} h (timeout policy {current.on_timeout})",
                        "updated_at": now,
                    },
                )
            return True

        changed = self.store.run_transaction(give_up)
        return {"action": "needs_review" if changed else "none"}

    # --- views ------------------------------------------------------------------------

    def view(self, approval: Approval, reviewer: str) -> Any:
        """The page model of an approval as ``reviewer`` sees it."""
        from datetime import UTC, datetime

        from .pages import ApprovalView
        from .pages import choices_for as page_choices

        def when(ts: float | None) -> str | None:
            if ts is None:
                return None
            return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")

        context = approval.context
        return ApprovalView(
            approval_id=approval.approval_id,
            kind=approval.kind,
            status=approval.status,
            reviewer=reviewer,
            sender=str(context.get("sender", "")),
            subject=str(context.get("subject", "")),
            received_at=str(context.get("received_at", "")),
            email_text=str(context.get("email_text", "")),
            category=context.get("category"),
            confidence=context.get("confidence"),
            reasons=[str(r) for r in context.get("reasons", [])],
            payload=dict(approval.applied_payload or approval.payload),
            choices=page_choices(approval.kind),
            editable=approval.kind in EDITABLE_KINDS,
            deadline=when(approval.deadline) or "",
            decided_by=approval.decided_by,
            decision=approval.decision if approval.status == "decided" else approval.status,
            decided_at=when(approval.decided_at or approval.timed_out_at),
            trace_id=approval.trace_id,
        )

"""The approval protocol (ARCHITECTURE section 4): notify, check links, decide, time out.

``ApprovalService`` is what the pausing node (through ``Runtime.on_pause``),
the approval HTTP function and the CLI share. Every state change is one
transaction on the store; the resume is published after it commits, and
any later touch of a decided approval whose resume was not published
(a timeout task, a repeated POST) publishes it again - the runtime drops
duplicate resumes. A customer's reply to a wait takes its approval the same
way before ingest publishes it (``answer_customer_wait``): of a reply and the
wait's deadline, the first to decide the record wins, and the other only
republishes the winner's resume (the deadline) or is kept as a later reply
(ingest).
"""

from __future__ import annotations

import functools
import logging
import math
import os
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..clock import Clock, SystemClock
from ..context import EffectJournal
from ..errors import RejectedEnvelope, RetryableError
from ..lazy import Lazy
from ..mail_stamps import stamp_for
from ..pauses import MAX_COMMENT_CHARS, EditRejected, PauseKind, ResumeRefused, kind_of
from ..ports.checkpoint import CheckpointStore, Transaction
from ..ports.notifier import NotificationRefused, Notifier
from ..ports.tasks import ScheduledTask, TaskQueue
from ..runtime import payload_hash
from .records import (
    APPROVALS,
    FORM_TOKEN_TTL_S,
    TOKENS,
    Approval,
    TokenRecord,
    approval_path,
    form_mac_ok,
    form_token,
    new_token,
    parse_form_token,
    token_hash,
    token_path,
    token_record,
)

log = logging.getLogger(__name__)

MAX_SCHEDULE_AHEAD_S = 30 * 86400
"""Cloud Tasks schedules at most 30 days ahead; a longer wait re-schedules itself."""

TIMEOUT_REVIEWER = "deadline"
MAX_TOKEN_CHARS = 128
INVALID_LINK = "this link is not valid"
"""The one message for every token that does not open this approval (no oracle)."""

KindLookup = Callable[[str, str], PauseKind]
"""``(graph, kind) -> PauseKind``: a pause's declaration."""


def registered_kind(graph: str, kind: str) -> PauseKind:
    """The pause kind ``kind`` as graph ``graph`` of the registry declares it."""
    from ..graphs import graph_registry

    declared = graph_registry().get(graph)
    return kind_of(declared.pause_kinds if declared is not None else {}, kind)


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
        notify_from: the address reviewer emails are sent from (None: the mailbox
            under review). Its Sent folder keeps every link sent.
    """

    base_url: str = "http://127.0.0.1:8088"
    audience: str | None = None
    max_edit_chars: int = 20_000
    api_key: str | None = None
    notify_from: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ApprovalConfig:
        """``INBOXFLOW_APPROVAL_URL``, ``INBOXFLOW_TASKS_AUDIENCE``, ``INBOXFLOW_MAX_EDIT_CHARS``,
        ``INBOXFLOW_API_KEY``, ``INBOXFLOW_NOTIFY_FROM``."""
        env = os.environ if environ is None else environ
        return cls(
            base_url=env.get("INBOXFLOW_APPROVAL_URL", cls.base_url).rstrip("/"),
            audience=env.get("INBOXFLOW_TASKS_AUDIENCE") or None,
            max_edit_chars=int(env.get("INBOXFLOW_MAX_EDIT_CHARS", cls.max_edit_chars)),
            api_key=env.get("INBOXFLOW_API_KEY") or None,
            notify_from=env.get("INBOXFLOW_NOTIFY_FROM") or None,
        )

    def link(self, approval_id: str, token: str) -> str:
        """The review link sent to a reviewer."""
        return f"{self.base_url}/a/{approval_id}?t={token}"

    @property
    def timeout_url(self) -> str:
        """The endpoint the deadline task calls."""
        return f"{self.base_url}/timeout"


@dataclass
class Checked:
    """An approval and the token record that opened it (``token_id``: the record's id)."""

    approval: Approval
    token: TokenRecord
    token_id: str


class ApprovalService:
    """Notify reviewers, verify links, record decisions, apply deadlines.

    Args:
        store: where approvals and token records live.
        tasks: the queue that holds deadlines (a ``Lazy`` one is built on first use).
        notifier: sends reviewer emails (a ``Lazy`` one is built on first send).
        resume: publishes the envelope that resumes a trace (``Runtime.resume``).
        clock: time source.
        config: links and limits.
        kinds: finds a pause's declared kind (default: the graph registry).
    """

    def __init__(
        self,
        store: CheckpointStore,
        tasks: TaskQueue | Lazy[TaskQueue],
        notifier: Notifier | Lazy[Notifier],
        resume: Callable[[str, Mapping[str, Any]], Any],
        clock: Clock | None = None,
        config: ApprovalConfig | None = None,
        kinds: KindLookup = registered_kind,
    ) -> None:
        self.store = store
        self._tasks = tasks if isinstance(tasks, Lazy) else Lazy(lambda: tasks)
        self._notifier = notifier if isinstance(notifier, Lazy) else Lazy(lambda: notifier)
        self.resume = resume
        self.clock = clock or SystemClock()
        self.config = config or ApprovalConfig()
        self.kinds = kinds
        self.journal = EffectJournal(store, self.clock)

    @property
    def tasks(self) -> TaskQueue:
        """The queue that holds deadlines."""
        return self._tasks.get()

    @property
    def notifier(self) -> Notifier:
        """What reviewers are notified through."""
        return self._notifier.get()

    @notifier.setter
    def notifier(self, notifier: Notifier) -> None:
        self._notifier = Lazy(lambda: notifier)

    def kind(self, approval: Approval) -> PauseKind:
        """The approval's declared kind, labels and outcomes filled from its context."""
        return self.kinds(approval.graph, approval.kind).for_pause(approval.context)

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
        refused: dict[str, str] = {}
        unavailable: RetryableError | None = None
        for reviewer in reviewers:
            # One reviewer's channel failing never keeps the others from hearing of it.
            try:
                sent = self.journal.run(
                    current.trace_id,
                    current.step,
                    f"notify-{current.round}-{reviewer}",
                    functools.partial(self._notify, current, reviewer),
                    functools.partial(self._sent, current),
                    expire_at=current.expire_at,
                )
            except RetryableError as exc:
                log.warning("approval %s: notifying %s: %s", current.approval_id, reviewer, exc)
                unavailable = unavailable or exc
                continue
            if sent.get("error"):
                refused[reviewer] = str(sent["error"])
            elif sent.get("thread_id") and sent.get("mailbox"):
                from .replies import record_review_thread

                record_review_thread(
                    self.store,
                    current,
                    reviewer,
                    str(sent["mailbox"]),
                    str(sent["thread_id"]),
                    self.clock.now(),
                )
        if refused:
            self._record_refusals(current.approval_id, refused)
        self.journal.run(
            current.trace_id,
            current.step,
            f"deadline-{current.round}",
            lambda key: self._schedule_deadline(current, current.round, 0),
            None,
            expire_at=current.expire_at,
        )
        if unavailable is not None:
            raise unavailable  # redelivered: the reviewers already notified are skipped

    def _notify(self, approval: Approval, reviewer: str, key: str) -> dict[str, Any]:
        from .pages import render_notification
        from .replies import record_review_mail

        link = self.issue_link(approval, reviewer)
        subject, text, html = render_notification(self.view(approval, reviewer), link=link)
        # Before sending, so that a reply (``approvals/replies.py``) always finds it: the
        # stamp is the random one the message's Message-ID will carry (``mail_stamps.py``).
        stamp = stamp_for(self.store, key, self.clock.now())
        record_review_mail(self.store, approval, reviewer, stamp, self.clock.now())
        try:
            receipt = self.notifier.send(
                reviewer, subject, text, html, key, self._sender(approval), link
            )
        except NotificationRefused as exc:
            # Journaled as done: a refusal is final, a redelivery does not try again.
            log.warning("approval %s: %s refused: %s", approval.approval_id, reviewer, exc)
            return {"to": reviewer, "channel": exc.channel, "error": str(exc)}
        return {
            "id": receipt.get("id"),
            "to": reviewer,
            "channel": receipt.get("channel"),
            "thread_id": receipt.get("thread_id"),
            "mailbox": receipt.get("mailbox"),
        }

    def tell_reviewer(
        self,
        approval: Approval,
        reviewer: str,
        effect: str,
        render: Callable[[str], tuple[str, str, str]],
    ) -> dict[str, Any]:
        """Send ``reviewer`` one more email about ``approval``, once per ``effect`` name.

        Journaled like the notification (a redelivery sends nothing twice); it carries
        a fresh review link, and a reply to it leads back to the approval as a reply
        to the review email does.

        Args:
            approval: the approval.
            reviewer: who gets it (as the approval lists them).
            effect: the effect's name, unique within the approval's step.
            render: ``link -> (subject, text, html)``.

        Returns:
            What the journal recorded (``error`` when the channel refused it).
        """

        def send(key: str) -> dict[str, Any]:
            from .replies import record_review_mail

            subject, text, html = render(self.issue_link(approval, reviewer))
            stamp = stamp_for(self.store, key, self.clock.now())
            record_review_mail(self.store, approval, reviewer, stamp, self.clock.now())
            try:
                receipt = self.notifier.send(
                    reviewer, subject, text, html, key, self._sender(approval), None
                )
            except NotificationRefused as exc:
                log.warning("approval %s: %s refused: %s", approval.approval_id, reviewer, exc)
                return {"to": reviewer, "channel": exc.channel, "error": str(exc)}
            return {"id": receipt.get("id"), "to": reviewer, "channel": receipt.get("channel")}

        return self.journal.run(
            approval.trace_id,
            approval.step,
            effect,
            send,
            functools.partial(self._sent, approval),
            expire_at=approval.expire_at,
        )

    def _record_refusals(self, approval_id: str, refused: Mapping[str, str]) -> None:
        def record(tx: Transaction) -> None:
            doc = tx.get(approval_path(approval_id))
            if doc is None:
                return
            errors = {**(doc.get("notify_errors") or {}), **refused}
            if errors != doc.get("notify_errors"):
                tx.set(approval_path(approval_id), {**doc, "notify_errors": errors})

        self.store.run_transaction(record)

    def _sender(self, approval: Approval) -> str | None:
        return self.config.notify_from or approval.context.get("mailbox") or None

    def _sent(self, approval: Approval, key: str) -> dict[str, Any] | None:
        return self.notifier.find(key, self._sender(approval))

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
            ApprovalError: 400 no token; 403 with one message for every token that
                does not open this approval (unknown, forged, another approval's, a
                reviewer no longer reviewing); 410 expired. A decided approval is
                returned (the page shows the decision); ``decide`` refuses it.
        """
        if not token:
            raise ApprovalError(400, "Link incomplete", "this link has no token")
        if len(token) > MAX_TOKEN_CHARS:
            raise _invalid()
        return self._checked(approval_id, token_hash(token))

    def _checked(self, approval_id: str, token_id: str) -> Checked:
        approval = self.get(approval_id)
        doc = self.store.get(f"{TOKENS}/{token_id}")
        if approval is None or doc is None:
            raise _invalid()
        record = TokenRecord.model_validate(doc)
        if record.approval_id != approval.approval_id or (
            record.reviewer not in approval.reviewers
            and record.reviewer not in approval.escalate_to
        ):
            raise _invalid()
        if approval.status == "pending" and self.clock.now() >= record.expires_at:
            raise ApprovalError(410, "Link expired", "this link has expired")
        return Checked(approval, record, token_id)

    def form_token(self, checked: Checked) -> str:
        """A short-lived token for the review page's form (writes nothing).

        It expires ``FORM_TOKEN_TTL_S`` after the page was opened (never after
        the link itself), so a saved or cached page is no lasting key.
        """
        if not checked.token.form_key:
            raise ApprovalError(410, "Link expired", "this link is too old: ask for a new one")
        expires = int(min(self.clock.now() + FORM_TOKEN_TTL_S, checked.token.expires_at))
        return form_token(
            checked.approval.approval_id, checked.token_id, checked.token.form_key, expires
        )

    def check_form(self, approval_id: str, value: str | None) -> Checked:
        """Verify a review page's form token (see ``form_token``).

        Raises:
            ApprovalError: 400 none; 403 forged or another approval's (the same
                message as a bad link); 410 expired (open the link again).
        """
        if not value:
            raise ApprovalError(
                400, "Form incomplete", "the form has no token: open the link again"
            )
        parsed = parse_form_token(value) if len(value) <= 4 * MAX_TOKEN_CHARS else None
        if parsed is None:
            raise _invalid()
        token_id, expires, mac = parsed
        doc = self.store.get(f"{TOKENS}/{token_id}")
        form_key = (doc or {}).get("form_key")
        if not form_key or not form_mac_ok(approval_id, token_id, form_key, expires, mac):
            raise _invalid()
        checked = self._checked(approval_id, token_id)
        if checked.approval.status == "pending" and self.clock.now() >= expires:
            raise ApprovalError(
                410,
                "Page expired",
                "this page was open too long: open the link in the email again",
            )
        return checked

    # --- deciding ---------------------------------------------------------------------

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
        checked = self.check_form(approval_id, token) if form else self.check(approval_id, token)
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
        approval = self.get(approval_id)
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
        tpath = f"{TOKENS}/{token_id}" if token_id else None

        def record(tx: Transaction) -> Approval:
            doc = tx.get(approval_path(approval_id))
            tdoc = tx.get(tpath) if tpath else {}
            if doc is None or tdoc is None:
                raise _invalid()
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

    # --- deadlines --------------------------------------------------------------------

    def on_timeout(self, approval_id: str, hop: int = 0) -> dict[str, Any]:
        """The deadline task fired: apply the timeout policy if the approval is still pending.

        Does nothing to a decided approval (except publishing a resume that may
        have been lost), so deleting the task on an early decision is only an
        optimisation. A task that fires before the deadline (the 30-day hop of
        a long wait) re-schedules itself as hop ``hop + 1``.

        Raises:
            ApprovalError: 400 when ``hop`` is not one this approval's window can
                reach (nothing is scheduled).
        """
        if isinstance(hop, bool) or not isinstance(hop, int) or hop < 0:
            raise ApprovalError(400, "Bad request", "hop must be a whole number >= 0")
        approval = self.get(approval_id)
        if approval is None:
            return {"action": "none", "reason": "no such approval"}
        if approval.status == "decided":
            self.publish_resume(approval)
            return {"action": "none", "reason": f"already {approval.decision}"}
        if approval.status != "pending":
            return {"action": "none", "reason": f"already {approval.status}"}
        now = self.clock.now()
        if hop > math.ceil(approval.window_s / MAX_SCHEDULE_AHEAD_S):
            raise ApprovalError(400, "Bad request", f"no hop {hop} in this approval's window")
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
        # The kind's choice that stops the trace (its "danger" one). A kind without one has
        # nothing the deadline may decide for the reviewer: the trace needs review instead.
        stop = next((c.value for c in self.kind(approval).choices if c.style == "danger"), None)
        if stop is None:
            return self._needs_review(approval, now)

        def reject(tx: Transaction) -> Approval | None:
            current = Approval.model_validate(tx.get(approval_path(approval.approval_id)))
            if current.status != "pending":
                return None
            decided = current.model_copy(
                update={
                    "status": "decided",
                    "decision": stop,
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

        trace_changed: list[bool] = []

        def give_up(tx: Transaction) -> bool:
            trace_changed.clear()  # a retried transaction starts over
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
                trace_changed.append(True)
            return True

        changed = self.store.run_transaction(give_up)
        if trace_changed:
            log.warning(
                "approval %s timed out, trace needs review",
                approval.approval_id,
                extra={"trace_id": approval.trace_id, "outcome": "needs_review"},
            )
        return {"action": "needs_review" if changed else "none"}

    # --- views ------------------------------------------------------------------------

    def view(self, approval: Approval, reviewer: str) -> Any:
        """The page model of an approval as ``reviewer`` sees it."""
        from .pages import view_of

        return view_of(approval, self.kind(approval), reviewer)


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


def note_resumed(store: CheckpointStore, approval: Approval, now: float) -> Approval:
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


def answer_customer_wait(store: CheckpointStore, resume: Mapping[str, Any], now: float) -> Approval:
    """Decide a customer wait's approval with the customer's answer, unless decided first.

    The customer's side of "first decision wins" (ARCHITECTURE section 4): ingest calls
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


def _invalid() -> ApprovalError:
    return ApprovalError(403, "Link not valid", INVALID_LINK)


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

"""Dispatch: start, resume or queue a trace for a claimed message (docs/architecture.md §7).

A claimed, parsed message: our own mail is skipped and loop-guarded mail
recorded with the reason; mail in a thread whose sender is not a party of it
(``threads.py``) starts a trace of its own, never the thread's; then a reply to a review email decides the approval
it answers (``approvals/replies.py``: only for an authenticated reviewer; a
refused reply is recorded in ``failures``); a reply in the thread of a trace that
waits for or queues customer replies is taken only from the customer's own
address, authenticated (``mail/authentication.py``): anything else is recorded
in ``failures`` against the trace, claimed ``refused``, and never read; it
resumes the thread's trace if that waits for a customer reply (the resume names
that pause, and takes the pause's approval in a transaction before it is
published: first decision wins, so of a reply and the wait's deadline only one
resume is published per step; when the wait was answered or ended first, that is
recorded in ``failures`` and the reply is handled as one arriving now, if the
trace's graph reads queued replies; the claim notes the resume before publishing
it, so a redelivery after a run that died once it was published finishes the
claim ``resumed`` instead); it is queued on the thread's trace if its graph
queues thread replies and it is busy (``inboxflow/reply_queue.py``); else a trace starts
whose id derives from the message. The claim records each decision and its
completion, so a run that dies half-way is finished by the next delivery.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..approvals.service import approval_service
from ..config import InboxflowConfig
from ..engine.runtime import Runtime
from ..engine.waits import (
    Approval,
    ResumeRefused,
    answer_customer_wait,
    answered_by,
    approval_path,
    check_resume,
    customer_of,
    customer_reply_resume,
    resume_of,
)
from ..errors import PermanentError, RejectedEnvelope
from ..mail import Email
from ..mail.authentication import check_sender
from ..mail.loop_guard import auto_reply_block, is_own_message
from ..ports.checkpoint import Checkpoint
from ..ports.gmail_reader import RawMessage
from ..reply_queue import ReplyQueue
from ..routing import RouteDecision, route
from ..start import start_email_trace
from ..threads import ThreadResolver, thread_parties
from .claims import Claims, ClaimState
from .failures import FailureLog
from .mailboxes import Mailbox
from .report import IngestReport

log = logging.getLogger("inboxflow.ingest")


@dataclass(frozen=True)
class Taken:
    """A claimed, parsed message being dispatched, and what its claim records of it.

    Args:
        mailbox: the mailbox it arrived in.
        raw: Gmail's copy of it (ids, thread, arrival time).
        email: the parsed message.
        trace_id: the id of the trace it starts, if it starts one (derived from the message).
        report: the run's report, counting what became of it.
        facts: what every finish of its claim records (sender, subject).
        address: the mailbox's address.
        gmail_id: Gmail's id of the message.
        thread_id: Gmail's id of its thread.
    """

    mailbox: Mailbox
    raw: RawMessage
    email: Email
    trace_id: str
    report: IngestReport
    facts: dict[str, Any]
    address: str
    gmail_id: str
    thread_id: str

    @classmethod
    def of(
        cls, mailbox: Mailbox, raw: RawMessage, email: Email, trace_id: str, report: IngestReport
    ) -> Taken:
        """The message as ``Dispatcher.take`` is given it, with what derives from it."""
        facts = {"sender": email.sender.address, "subject": email.subject[:200]}
        ids = (mailbox.address, raw.gmail_id, raw.thread_id)
        return cls(mailbox, raw, email, trace_id, report, facts, *ids)


@dataclass(eq=False)
class Dispatcher:
    """Carries out a claimed message: starts, resumes or queues its trace, or refuses it.

    Args:
        runtime: starts and resumes traces.
        claims: the per-message claims (each decision and its completion).
        threads: which trace a Gmail thread belongs to, and which waits for a reply.
        replies: the queued replies of busy traces.
        failures: where refused and unreadable messages are recorded.
        config: the routing rules.
        authserv_id: the receiving server whose verdict authenticates a sender.
        router: decides the route of a message that starts a trace, in place of the rules.
    """

    runtime: Runtime
    claims: Claims
    threads: ThreadResolver
    replies: ReplyQueue
    failures: FailureLog
    config: InboxflowConfig
    authserv_id: str | None
    router: Callable[[Email, Mailbox], RouteDecision] | None = None

    def __post_init__(self) -> None:
        self.store = self.runtime.documents
        self.checkpoints = self.runtime.checkpoints
        self.clock = self.runtime.clock

    def take(
        self, mailbox: Mailbox, raw: RawMessage, email: Email, trace_id: str, report: IngestReport
    ) -> None:
        """A claimed, parsed message: skip our own, block what loop protection forbids, else act."""
        taken = Taken.of(mailbox, raw, email, trace_id, report)
        if is_own_message(email):
            self._finish(taken, "own")
            return
        blocked = auto_reply_block(email)
        if blocked:
            log.info("not answering %s in %s: %s", taken.gmail_id, taken.address, blocked)
            self._finish(taken, "blocked", reason=blocked)
            return
        self._start_or_resume(taken)

    def _start_or_resume(self, taken: Taken) -> None:
        address, gmail_id, thread_id = taken.address, taken.gmail_id, taken.thread_id
        email = taken.email
        if self._review_reply(taken):
            return
        # Only a party of the thread joins it (``threads.py``); anyone else starts their own.
        outside = self.threads.outsider(address, thread_id, email.sender.address)
        joins = "" if outside else thread_id
        waiting = self.threads.waiting_for_reply(address, joins)
        busy = None if waiting else self.replies.busy_trace(address, joins)
        decision: dict[str, Any] = (
            {"action": "resume", "resume_trace_id": waiting.trace_id, "resume_step": waiting.step}
            if waiting
            else {"action": "queue", "queue_trace_id": busy}
            if busy
            else {"action": "start", "outside_thread": outside}
        )
        claim = self.claims.decide(
            address, gmail_id, {**decision, "thread_id": thread_id}, self.clock.now()
        )
        taken_by = claim.get("resume_trace_id") or claim.get("queue_trace_id")
        if claim["action"] in ("resume", "queue") and self._not_the_customer(taken, str(taken_by)):
            return
        if claim["action"] == "queue":
            self._queue_reply(taken, str(claim["queue_trace_id"]))
            return
        if claim["action"] == "resume":
            self._resume_with_reply(taken, claim)
            return
        mailbox, trace_id = taken.mailbox, taken.trace_id
        routed = (
            self.router(email, mailbox)
            if self.router is not None
            else route(email, self.config, address, default=mailbox.graph)
        )
        outside = claim.get("outside_thread")
        try:
            start_email_trace(
                self.runtime, email, routed, trace_id=trace_id, outside_thread=outside
            )
        except PermanentError as exc:
            reason = f"message {gmail_id} of {address} cannot start a trace: {exc}"
            self.failures.record(reason, mailbox=address)
            self._finish(taken, "unreadable", reason=str(exc))
            return
        if outside:
            log.info("message %s of %s starts its own trace: %s", gmail_id, address, outside)
        else:
            parties = thread_parties(email.model_dump(mode="json"))
            self.threads.record(address, thread_id, trace_id, self.clock.now(), parties)
        self._finish(taken, "started")
        taken.report.started.append(trace_id)

    def _not_the_customer(self, taken: Taken, trace_id: str) -> bool:
        """Refuse (record, never read) a reply in a trace's thread that is not the customer's own.

        The customer is the sender of the email that started the trace ``trace_id``; the
        reply must come from that address, authenticated (``mail/authentication.py``).
        Anyone else writing in the thread (a stranger, a forged reply reusing the thread's
        first Message-ID, a spoofed customer) resumes nothing, is queued nowhere, and is
        recorded in ``failures`` against the trace (``inboxflow trace`` shows it).

        Returns:
            True when the reply was refused (the claim is finished).
        """
        address, gmail_id = taken.address, taken.gmail_id
        checkpoint = self.checkpoints.get_trace(trace_id)
        customer = customer_of(checkpoint.state) if checkpoint is not None else None
        checked = check_sender(taken.email, self.authserv_id)
        if customer is not None and checked.is_sender(customer):
            return False
        if checked.address is None:
            why = f"claims to be from {checked.claimed} but is not authenticated: {checked.reason}"
        elif customer is None:
            why = "the trace names no customer to take replies from"
        else:
            why = f"comes from {checked.address}, not from the customer {customer}"
        reason = (
            f"message {gmail_id} of {address} in the thread of trace {trace_id} was not taken: "
            f"it {why}; it changes nothing"
        )
        self.failures.record(reason, mailbox=address, trace_id=trace_id, gmail_id=gmail_id)
        log.warning("customer reply refused: %s", reason)
        self._finish(taken, "refused", trace_id=trace_id, reason=f"it {why}")
        return True

    def _resume_with_reply(self, taken: Taken, claim: dict[str, Any]) -> None:
        """Resume the customer wait the claim names with the reply; if that wait is over, keep the reply.

        The reply decides the wait's approval before its resume is published
        (``_answer_wait``): the first of the reply, the wait's deadline and any other
        reply to decide it is the only resume of that step. A wait can also end, or be
        answered, between the claim's decision and now (its deadline fired, or another
        reply or resume ran it). Then this resume is refused and recorded (``failures``
        and the claim's ``reason``, saying what answered first), and the reply is
        handled as one arriving now when
        the trace's graph reads queued replies (each one once): queued, resuming the
        customer wait the trace is in now, if any. Otherwise (a finished trace) the
        claim ends ``refused``.

        The claim notes the resume (``resume_sent``: the pause it answers, the hash of
        its payload) before it is published. A run that died after publishing it leaves
        the claim unfinished, and its redelivery finds the wait over because this very
        resume ran it (``_resumed_before``): the claim ends ``resumed``, with no failure
        recorded and nothing queued, as the run that died would have left it.
        """
        trace_id, step = str(claim["resume_trace_id"]), int(claim["resume_step"])
        address, gmail_id = taken.address, taken.gmail_id
        resume = customer_reply_resume(taken.email, trace_id, step)
        checkpoint = self.checkpoints.get_trace(trace_id)
        try:
            if checkpoint is None:
                raise ResumeRefused(f"reply for trace {trace_id} refused: no such trace")
            graph = self.runtime.graphs.get(checkpoint.graph)
            pause = checkpoint.pause if checkpoint.status == "waiting" else None
            try:
                check_resume(resume, pause, graph.pause_kinds if graph else {}, trace_id)
            except ResumeRefused:
                if self._resumed_before(claim, resume, checkpoint, step):
                    log.info("reply %s in %s resumed trace %s before", gmail_id, address, trace_id)
                    self._resumed(taken, trace_id)
                    return
                raise
            self.claims.note(address, gmail_id, self.clock.now(), resume_sent=_sent(resume))
            try:
                self._answer_wait(trace_id, resume)
            except RejectedEnvelope:
                # The wait was answered first or ended just now, and nothing was published:
                # the note must not say sent.
                self.claims.note(address, gmail_id, self.clock.now(), resume_sent=None)
                raise
        except RejectedEnvelope as exc:
            reason = f"message {gmail_id} of {address}: {exc}"
            self.failures.record(reason, mailbox=address)
            log.warning("customer reply not resumed: %s", reason)
            latest = self.checkpoints.get_trace(
                trace_id
            )  # the wait may have given the trace up just now
            if latest is not None and self.replies.queues(latest):
                # As a reply arriving now: queued, and it resumes the wait the trace is in now.
                self._queue_reply(
                    replace(taken, facts={**taken.facts, "reason": str(exc)}), trace_id
                )
                return
            self._finish(taken, "refused", trace_id=trace_id, reason=str(exc))
            return
        self._resumed(taken, trace_id)

    def _resumed(self, taken: Taken, trace_id: str) -> None:
        """Finish the claim ``resumed``: the reply resumed the wait of ``trace_id``."""
        self._finish(taken, "resumed", trace_id=trace_id)
        taken.report.resumed.append(trace_id)

    def _answer_wait(self, trace_id: str, resume: dict[str, Any]) -> None:
        """Decide the wait's approval with this reply (first decision wins), then publish it.

        The reply and the wait's deadline (or another reply) race for the same step:
        whichever decides ``approvals/{approval_id}`` first is the one resume published
        for it. A deadline that comes later only republishes this resume, rebuilt from
        the record (``resume_of``). A redelivered reply whose wait is still waiting
        publishes its resume again (the runtime drops a duplicate).

        Raises:
            AnsweredFirst: the deadline or another reply decided the wait first; nothing
                is published (the caller keeps the reply as one arriving now).
            RejectedEnvelope: the trace no longer waits; nothing is published.
        """
        approval = answer_customer_wait(self.store, resume, self.clock.now())
        self.runtime.resume(trace_id, resume_of(approval))

    def _resumed_before(
        self, claim: dict[str, Any], resume: dict[str, Any], checkpoint: Checkpoint, step: int
    ) -> bool:
        """Whether ``resume``, sent by an earlier run on this claim, is what ran the wait at ``step``.

        The runtime does not record which resume ran a step, so this reads what is on
        record: the claim notes this very resume (same pause, same payload hash), so it
        may have been published; the checkpoint is past ``step``, so the wait was run; and
        the wait's approval was decided by this very reply (``answer_customer_wait``), so
        every resume published for that step was this one (the deadline only republishes
        it). Otherwise the reply is handled as refused (recorded, and queued where the
        graph reads queued replies): kept, not lost.
        """
        if claim.get("resume_sent") != _sent(resume) or checkpoint.step <= step:
            return False
        doc = self.store.get(approval_path(str(resume["approval_id"])))
        return doc is not None and answered_by(Approval.model_validate(doc), resume)

    def _review_reply(self, taken: Taken) -> bool:
        """Decide the approval a reply to a review email answers; False if it answers none."""
        address, gmail_id, email = taken.address, taken.gmail_id, taken.email
        approvals = approval_service(self.runtime.ports)
        if not (email.in_reply_to or email.references):
            return False
        from ..approvals.replies import DECIDED_NOTHING, decide_by_reply

        outcome = decide_by_reply(approvals, email, self.authserv_id)
        if outcome is None:
            return False
        log.info(
            "review reply %s in %s: %s (%s)", gmail_id, address, outcome.outcome, outcome.reason
        )
        if outcome.outcome in DECIDED_NOTHING:
            approval = approvals.get(outcome.approval_id)
            self.failures.record(
                f"reply {gmail_id} of {address} to the review email of approval "
                f"{outcome.approval_id} decided nothing ({outcome.outcome}): {outcome.reason}; "
                "the reviewer can still decide with the review link",
                mailbox=address,
                trace_id=approval.trace_id if approval is not None else "",
                gmail_id=gmail_id,
            )
        self._finish(taken, "review_reply", **outcome.record())
        taken.report.review_replies.append(outcome.approval_id)
        return True

    def _queue_reply(self, taken: Taken, trace_id: str) -> None:
        """Queue a reply on its busy trace ``trace_id`` (once, however often it is delivered)."""
        raw, email = taken.raw, taken.email
        now = self.clock.now()
        received = raw.internal_date_ms / 1000 if raw.internal_date_ms else now
        self.replies.queue(trace_id, email, received, now)
        # The trace may have paused for the customer since it was found busy: then the
        # queued reply could wait unread until the deadline, so it resumes the wait too
        # (the resume names the queued reply; the graph reads each gmail_id once).
        waiting = self.threads.waiting_for_reply(taken.address, taken.thread_id)
        if waiting is not None and waiting.trace_id == trace_id:
            # Answered meanwhile (its deadline, another reply): that resume runs the wait, which
            # reads the queue; or the trace moved on: the reply stays queued for its next step.
            with contextlib.suppress(RejectedEnvelope):
                self._answer_wait(
                    trace_id, customer_reply_resume(email, trace_id, waiting.step, queued=True)
                )
        self._finish(taken, "queued", trace_id=trace_id)
        taken.report.queued.append(trace_id)

    def _finish(self, taken: Taken, state: ClaimState, **fields: Any) -> None:
        """Finish the claim of the message being dispatched, with ``fields`` and its facts."""
        self.finish(taken.address, taken.gmail_id, state, taken.report, **fields, **taken.facts)

    def finish(
        self,
        address: str,
        gmail_id: str,
        state: ClaimState,
        report: IngestReport,
        **fields: Any,
    ) -> None:
        """Finish the message's claim as ``state`` (with ``fields``) and count it."""
        self.claims.finish(address, gmail_id, state, self.clock.now(), **fields)
        report.count(state)


def _sent(resume: dict[str, Any]) -> dict[str, Any]:
    """What a claim notes of the resume it is about to publish: the pause and the payload."""
    return {"approval_id": resume["approval_id"], "payload_hash": resume["payload_hash"]}

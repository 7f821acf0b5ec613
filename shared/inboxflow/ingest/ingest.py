"""Gmail ingestion: from a watch notification to one trace per new message (ARCHITECTURE section 5).

For a notification ``{emailAddress, historyId}``:

1. Read the mailbox's cursor in a transaction. A notification at or behind
   the cursor is stale (out of order or redelivered): nothing to do.
2. ``history.list`` from the cursor to the last page; keep ``messageAdded``
   in INBOX, skip SENT and DRAFT. A 404 (cursor too old) or a mailbox without
   a cursor runs a bounded full sync (``messages.list`` over a recent window)
   instead, recorded in ``ingest_events`` and on the mailbox.
3. Per message: claim it (create-only), fetch it raw, parse it, skip our own
   mail, record loop-guarded mail with the reason, then: decide the approval
   a reply to a review email answers (``approvals/replies.py``: only for an
   authenticated reviewer; a refused reply is recorded in ``failures``); a
   reply in the thread of a trace that waits for or queues customer replies is
   taken only from the customer's own address, authenticated
   (``mail/authentication.py``): anything else is recorded in ``failures``
   against the trace, claimed ``refused``, and never read; resume the
   thread's trace if it waits for a customer reply (the resume names that
   pause, and takes the pause's approval in a transaction before it is
   published: first decision wins, so of a reply and the wait's deadline only
   one resume is published per step; when the wait was answered or ended
   first, that is recorded in ``failures`` and the reply is handled as one
   arriving now, if the trace's graph reads queued replies; the claim notes the
   resume before publishing it, so a redelivery after a run that died once it
   was published finishes the claim ``resumed`` instead); queue the reply on
   the thread's trace if its graph queues
   thread replies and it is busy (``reply_queue.py``); else start a trace whose
   id derives from the message. The claim records each decision and its completion, so
   a run that dies half-way is finished by the next delivery; a message
   another run is still handling makes this run end retryable (after the
   rest of its messages) instead of moving the cursor past it.
4. Move the cursor forward (a transaction taking the max): only after every
   message up to it is claimed and carried out.

Rate limits and outages are retried with backoff; if they persist the error
is raised as ``RetryableError`` so Pub/Sub redelivers the notification.
Malformed notifications and unknown mailboxes are recorded in ``failures``
and acknowledged.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, TypeVar

from ..approvals.records import Approval, approval_id_for, approval_path
from ..approvals.service import answer_customer_wait, answered_by, note_resumed, resume_of
from ..config import InboxflowConfig
from ..errors import PermanentError, RejectedEnvelope, RetryableError
from ..mail import Email, EmailParseError
from ..mail.authentication import check_sender, configured_authserv_id
from ..mail.loaders import parse_raw
from ..mail.loop_guard import auto_reply_block, is_own_message, label_skip
from ..pauses import ResumeRefused, check_resume
from ..ports.checkpoint import Checkpoint
from ..ports.gmail_reader import (
    INBOX,
    AddedMessage,
    GmailError,
    GmailRateLimited,
    GmailReader,
    GmailUnavailable,
    HistoryExpired,
    MessageGone,
    RawMessage,
)
from ..routing import RouteDecision, route
from ..runtime import Runtime, payload_hash
from ..start import start_email_trace
from .claims import FINISHED, Claims, ClaimState
from .mailboxes import Mailbox, MailboxRegistry, UnknownMailbox
from .notification import BadNotification, GmailNotification, decode_notification
from .reply_queue import ReplyQueue
from .threads import CUSTOMER_REPLY, ThreadResolver

log = logging.getLogger("inboxflow.ingest")

T = TypeVar("T")
Outcome = Literal["ingested", "stale", "rejected"]
FUNCTION = "ingest"
MAX_RAW_FAILURE_BYTES = 16 * 1024


@dataclass
class IngestOptions:
    """Tunables of ingestion.

    Attributes:
        gmail_attempts: tries of one Gmail call on 429/403-rate-limit/5xx before giving up.
        backoff_base_s: first wait between those tries (doubles, jittered).
        backoff_max_s: longest single wait.
        full_sync_days: the window of a full sync (``newer_than:{days}d``).
        full_sync_max_pages: at most this many ``messages.list`` pages per full sync.
        max_history_pages: safety bound on one ``history.list`` walk.
        retention_days: how long claims and records are kept.
    """

    gmail_attempts: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 16.0
    full_sync_days: int = 7
    full_sync_max_pages: int = 5
    max_history_pages: int = 10_000
    retention_days: float = 30


@dataclass
class IngestReport:
    """What one notification did (logged, returned, and read by tests and the bench)."""

    mailbox: str
    history_id: int
    outcome: Outcome = "ingested"
    cursor_before: int | None = None
    cursor_after: int | None = None
    pages: int = 0
    listed: int = 0
    started: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    queued: list[str] = field(default_factory=list)
    """Traces a reply was queued on (``trace_replies``)."""
    review_replies: list[str] = field(default_factory=list)
    """Approvals a reply to a review email answered (decided or not: see the claim)."""
    duplicates: int = 0
    in_flight: int = 0
    repaired: int = 0
    blocked: int = 0
    own: int = 0
    skipped: int = 0
    gone: int = 0
    unreadable: int = 0
    full_sync: dict[str, Any] | None = None
    error: str | None = None

    def summary(self) -> str:
        """One log line."""
        if self.outcome != "ingested":
            return f"{self.mailbox} @{self.history_id}: {self.outcome} {self.error or ''}".strip()
        return (
            f"{self.mailbox} @{self.history_id}: cursor {self.cursor_before} -> {self.cursor_after}, "
            f"{self.listed} listed, {len(self.started)} started, {len(self.resumed)} resumed, "
            f"{len(self.queued)} queued, {len(self.review_replies)} review replies, "
            f"{self.duplicates} duplicates, {self.in_flight} in flight elsewhere, "
            f"{self.repaired} repaired, {self.blocked} blocked, "
            f"{self.own} own, {self.skipped} skipped"
            + (f", full sync of {self.full_sync['messages']}" if self.full_sync else "")
        )


class IngestIncomplete(RetryableError):
    """Another run holds some of the listed messages: redeliver once it is done.

    Attributes:
        report: what this run did before giving up on moving the cursor.
    """

    def __init__(self, message: str, report: IngestReport) -> None:
        super().__init__(message)
        self.report = report


class Ingestor:
    """Turns Gmail watch notifications into traces.

    Args:
        runtime: starts and resumes traces; its store holds mailboxes, claims and threads.
        gmail: the Gmail reader.
        options: tunables.
        sleep: how to wait between Gmail retries (default: the runtime's clock).
        config: the routing rules (default: ``inboxflow.yaml``, read and validated
            here, so a bad file stops the function before it handles any mail).
        router: decides the route of a message that starts a trace, in place of
            the rules (``inboxflow run --graph NAME``).

    A new message goes to the graph of the first matching rule (the mailbox's
    own rules, then the global ones); when none matches, to the graph the
    mailbox is registered with (``pipeline`` unless ``mailbox add`` said otherwise).
    """

    def __init__(
        self,
        runtime: Runtime,
        gmail: GmailReader,
        options: IngestOptions | None = None,
        sleep: Callable[[float], None] | None = None,
        config: InboxflowConfig | None = None,
        router: Callable[[Email, Mailbox], RouteDecision] | None = None,
    ) -> None:
        self.runtime = runtime
        self.router = router
        self.config = config if config is not None else runtime.ports.config
        self.authserv_id = configured_authserv_id(self.config)
        self.store = runtime.store
        self.clock = runtime.clock
        self.gmail = gmail
        self.options = options or IngestOptions()
        self.sleep = sleep or runtime.clock.sleep
        retention_s = self.options.retention_days * 86400
        self.mailboxes = MailboxRegistry(self.store)
        self.claims = Claims(self.store, retention_s)
        self.threads = ThreadResolver(self.store)
        # Queued replies live as long as the thread mapping they hang off (a trace may wait weeks).
        self.replies = ReplyQueue(self.store, runtime.graphs)

    # --- entry --------------------------------------------------------------------------

    def handle_message(self, message: Any) -> IngestReport:
        """Handle the Pub/Sub ``message`` of a Gmail notification.

        Returns normally (Pub/Sub acknowledges) for processed, stale and
        permanently bad notifications; the bad ones are in ``failures``.

        Raises:
            RetryableError: Gmail or the store failed transiently; redeliver.
        """
        try:
            notification = decode_notification(message)
        except BadNotification as exc:
            self._record_failure(f"not a Gmail notification: {exc}", message=message)
            log.warning("malformed Gmail notification, acknowledged: %s", exc)
            return IngestReport(mailbox="", history_id=0, outcome="rejected", error=str(exc))
        return self.ingest(notification, message=message)

    def ingest(self, notification: GmailNotification, message: Any | None = None) -> IngestReport:
        """Ingest everything new in a mailbox up to (at least) the notification's history id.

        Raises:
            RetryableError: Gmail or the store failed transiently; redeliver.
        """
        report = IngestReport(notification.email_address, notification.history_id)
        owner = f"ingest:{uuid.uuid4().hex[:12]}"
        try:
            mailbox = self.mailboxes.read_cursor(notification.email_address)
        except (UnknownMailbox, ValueError) as exc:
            return self._reject(report, f"unknown mailbox: {exc}", message)
        if mailbox.graph not in self.runtime.graphs:
            return self._reject(
                report, f"mailbox {mailbox.address} starts unknown graph {mailbox.graph!r}", message
            )
        report.mailbox = mailbox.address
        cursor = report.cursor_before = mailbox.history_id
        if cursor is not None and notification.history_id <= cursor:
            report.outcome = "stale"
            report.cursor_after = cursor
            log.info("%s", report.summary())
            return report

        updates: dict[str, Any] = {}
        if cursor is None:
            new_cursor = self._full_sync(
                mailbox, notification, report, "the mailbox had no cursor", owner
            )
            updates["last_full_sync"] = report.full_sync
        else:
            try:
                new_cursor = self._sync_history(mailbox, cursor, report, owner)
            except HistoryExpired:
                reason = f"history from {cursor} is no longer available (404)"
                new_cursor = self._full_sync(mailbox, notification, report, reason, owner)
                updates["last_full_sync"] = report.full_sync
        if report.in_flight:
            log.info("%s", report.summary())
            raise IngestIncomplete(
                f"{report.in_flight} message(s) of {mailbox.address} are being ingested by "
                "another run: the cursor stays until they are done",
                report,
            )
        _, report.cursor_after = self.mailboxes.advance_cursor(
            mailbox.address, new_cursor, self.clock.now(), **updates
        )
        log.info("%s", report.summary())
        return report

    def receive(
        self, mailbox: Mailbox, email: Email, gmail_id: str, via: str = "file"
    ) -> IngestReport:
        """Ingest one message already parsed (``inboxflow run``'s files), as if Gmail listed it.

        The message is claimed as ``gmail_id`` in ``mailbox`` (a message claimed before
        is a duplicate), and its thread is ``email.thread_id``; from there it goes the
        way of every listed message: a reply resumes the thread's trace waiting for the
        customer, is queued on its busy trace, or answers a review email; other mail
        starts a trace (``report.started``). The cursor is not read nor moved.

        Raises:
            RetryableError: the store failed transiently.
        """
        report = IngestReport(mailbox.address, 0)
        now = self.clock.now()
        received_ms = int(email.received_at.timestamp() * 1000)
        raw = RawMessage(
            gmail_id=gmail_id,
            thread_id=email.thread_id,
            raw=b"",
            label_ids=(INBOX,),
            internal_date_ms=received_ms if received_ms > 0 else int(now * 1000),
        )
        email = email.model_copy(update={"gmail_id": gmail_id, "mailbox": mailbox.address})
        owner = f"ingest:{uuid.uuid4().hex[:12]}"
        created, claim = self.claims.claim(
            mailbox.address, gmail_id, email.thread_id, now, via, owner
        )
        if not created:
            report.duplicates += 1
            return report
        try:
            self._take(mailbox, raw, email, str(claim["trace_id"]), report)
        except Exception:
            self.claims.release(mailbox.address, gmail_id, owner, self.clock.now())
            raise
        return report

    # --- listing ----------------------------------------------------------------------

    def _sync_history(self, mailbox: Mailbox, cursor: int, report: IngestReport, owner: str) -> int:
        """Claim every message added since ``cursor``; returns the history id listed up to."""
        seen: set[str] = set()
        latest = cursor
        for added, history_id in self._history_pages(mailbox.address, cursor, report):
            latest = max(latest, history_id)
            for message in added:
                if message.gmail_id in seen:
                    continue
                seen.add(message.gmail_id)
                report.listed += 1
                if message.label_ids and label_skip(message.label_ids):
                    report.skipped += 1
                    continue
                self._process(mailbox, message, "history", report, owner)
        return latest

    def _history_pages(
        self, address: str, cursor: int, report: IngestReport
    ) -> Iterator[tuple[list[AddedMessage], int]]:
        token: str | None = None
        for _ in range(self.options.max_history_pages):
            page = self._call(
                "history.list", partial(self.gmail.list_history, address, cursor, token)
            )
            report.pages += 1
            yield list(page.added), page.history_id
            token = page.next_page_token
            if not token:
                return
        raise RetryableError(
            f"history of {address} from {cursor} has more than {self.options.max_history_pages} pages"
        )

    def _full_sync(
        self,
        mailbox: Mailbox,
        notification: GmailNotification,
        report: IngestReport,
        reason: str,
        owner: str,
    ) -> int:
        """Claim the INBOX messages of the recent window; returns the new cursor."""
        query = f"newer_than:{self.options.full_sync_days}d"
        at = self.clock.now()
        token: str | None = None
        pages = listed = 0
        truncated = False
        seen: set[str] = set()
        while True:
            page = self._call(
                "messages.list",
                partial(self.gmail.list_messages, mailbox.address, [INBOX], query, token),
            )
            pages += 1
            for message in page.messages:
                if message.gmail_id in seen:
                    continue
                seen.add(message.gmail_id)
                listed += 1
                self._process(mailbox, message, "full_sync", report, owner)
            token = page.next_page_token
            if not token:
                break
            if pages >= self.options.full_sync_max_pages:
                truncated = True
                break
        report.listed += listed
        report.pages += pages
        report.full_sync = {
            "at": at,
            "reason": reason,
            "query": query,
            "messages": listed,
            "pages": pages,
            "truncated": truncated,
            "started": len(report.started),
            "history_id": notification.history_id,
        }
        now = self.clock.now()
        self.store.set(
            f"ingest_events/{_event_id(now)}",
            {
                "kind": "full_sync",
                "mailbox": mailbox.address,
                **report.full_sync,
                "expire_at": now + self.options.retention_days * 86400,
            },
        )
        log.warning(
            "full sync of %s (%s): %d messages in %d pages%s",
            mailbox.address,
            reason,
            listed,
            pages,
            ", truncated" if truncated else "",
        )
        return notification.history_id

    # --- one message --------------------------------------------------------------------

    def _process(
        self, mailbox: Mailbox, listed: AddedMessage, via: str, report: IngestReport, owner: str
    ) -> None:
        address, gmail_id = mailbox.address, listed.gmail_id
        created, claim = self.claims.claim(
            address, gmail_id, listed.thread_id, self.clock.now(), via, owner
        )
        if not created:
            if claim.get("state") in FINISHED:
                report.duplicates += 1
                return
            if not self.claims.take_over(address, gmail_id, owner, self.clock.now()):
                report.in_flight += 1
                return
            report.repaired += 1  # its first owner failed or died before finishing it
        try:
            self._carry_out(mailbox, claim, report)
        except Exception:
            try:
                self.claims.release(address, gmail_id, owner, self.clock.now())
            except Exception:
                log.exception("could not release the claim of %s in %s", gmail_id, address)
            raise

    def _carry_out(self, mailbox: Mailbox, claim: dict[str, Any], report: IngestReport) -> None:
        address, gmail_id = mailbox.address, str(claim["gmail_id"])
        try:
            raw = self._call("messages.get", lambda: self.gmail.get_raw(address, gmail_id))
        except MessageGone:
            self._finish(address, gmail_id, "gone", report)
            return
        skip = label_skip(raw.label_ids) if raw.label_ids else None
        if skip:
            self._finish(address, gmail_id, "skipped", report, reason=skip)
            return
        try:
            email = parse_raw(raw, address)
        except EmailParseError as exc:
            reason = f"message {gmail_id} of {address} is not a readable email: {exc}"
            self._record_failure(reason, mailbox=address)
            self._finish(address, gmail_id, "unreadable", report, reason=str(exc))
            return
        self._take(mailbox, raw, email, str(claim["trace_id"]), report)

    def _take(
        self, mailbox: Mailbox, raw: RawMessage, email: Email, trace_id: str, report: IngestReport
    ) -> None:
        """A claimed, parsed message: skip our own, block what loop protection forbids, else act."""
        address, gmail_id = mailbox.address, raw.gmail_id
        facts = {"sender": email.sender.address, "subject": email.subject[:200]}
        if is_own_message(email):
            self._finish(address, gmail_id, "own", report, **facts)
            return
        blocked = auto_reply_block(email)
        if blocked:
            log.info("not answering %s in %s: %s", gmail_id, address, blocked)
            self._finish(address, gmail_id, "blocked", report, reason=blocked, **facts)
            return
        self._start_or_resume(mailbox, raw, email, trace_id, report, facts)

    def _start_or_resume(
        self,
        mailbox: Mailbox,
        raw: RawMessage,
        email: Email,
        trace_id: str,
        report: IngestReport,
        facts: dict[str, Any],
    ) -> None:
        address, gmail_id, thread_id = mailbox.address, raw.gmail_id, raw.thread_id
        if self._review_reply(address, gmail_id, email, report, facts):
            return
        waiting = self.threads.waiting_for_reply(address, thread_id)
        busy = None if waiting else self.replies.busy_trace(address, thread_id)
        decision: dict[str, Any] = (
            {"action": "resume", "resume_trace_id": waiting.trace_id, "resume_step": waiting.step}
            if waiting
            else {"action": "queue", "queue_trace_id": busy}
            if busy
            else {"action": "start"}
        )
        claim = self.claims.decide(
            address, gmail_id, {**decision, "thread_id": thread_id}, self.clock.now()
        )
        taken_by = claim.get("resume_trace_id") or claim.get("queue_trace_id")
        if claim["action"] in ("resume", "queue") and self._not_the_customer(
            address, gmail_id, email, str(taken_by), report, facts
        ):
            return
        if claim["action"] == "queue":
            self._queue_reply(address, raw, email, str(claim["queue_trace_id"]), report, facts)
            return
        if claim["action"] == "resume":
            self._resume_with_reply(address, raw, email, claim, report, facts)
            return
        routed = (
            self.router(email, mailbox)
            if self.router is not None
            else route(email, self.config, address, default=mailbox.graph)
        )
        try:
            start_email_trace(self.runtime, email, routed, trace_id=trace_id)
        except PermanentError as exc:
            reason = f"message {gmail_id} of {address} cannot start a trace: {exc}"
            self._record_failure(reason, mailbox=address)
            self._finish(address, gmail_id, "unreadable", report, reason=str(exc), **facts)
            return
        self.threads.record(address, thread_id, trace_id, self.clock.now())
        self._finish(address, gmail_id, "started", report, **facts)
        report.started.append(trace_id)

    def _not_the_customer(
        self,
        address: str,
        gmail_id: str,
        email: Email,
        trace_id: str,
        report: IngestReport,
        facts: dict[str, Any],
    ) -> bool:
        """Refuse (record, never read) a reply in a trace's thread that is not the customer's own.

        The customer is the sender of the email that started the trace; the reply must
        come from that address, authenticated (``mail/authentication.py``). Anyone else
        writing in the thread (a stranger, a forged reply reusing the thread's first
        Message-ID, a spoofed customer) resumes nothing, is queued nowhere, and is
        recorded in ``failures`` against the trace (``inboxflow trace`` shows it).

        Returns:
            True when the reply was refused (the claim is finished).
        """
        checkpoint = self.store.get_trace(trace_id)
        customer = customer_of(checkpoint.state) if checkpoint is not None else None
        checked = check_sender(email, self.authserv_id)
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
        self._record_failure(reason, mailbox=address, trace_id=trace_id, gmail_id=gmail_id)
        log.warning("customer reply refused: %s", reason)
        self._finish(
            address, gmail_id, "refused", report, trace_id=trace_id, reason=f"it {why}", **facts
        )
        return True

    def _resume_with_reply(
        self,
        address: str,
        raw: RawMessage,
        email: Email,
        claim: dict[str, Any],
        report: IngestReport,
        facts: dict[str, Any],
    ) -> None:
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
        gmail_id = raw.gmail_id
        resume = customer_reply_resume(email, trace_id, step)
        checkpoint = self.store.get_trace(trace_id)
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
                    self._finish(address, gmail_id, "resumed", report, trace_id=trace_id, **facts)
                    report.resumed.append(trace_id)
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
            self._record_failure(reason, mailbox=address)
            log.warning("customer reply not resumed: %s", reason)
            latest = self.store.get_trace(trace_id)  # the wait may have given the trace up just now
            if latest is not None and self.replies.queues(latest):
                # As a reply arriving now: queued, and it resumes the wait the trace is in now.
                self._queue_reply(
                    address, raw, email, trace_id, report, {**facts, "reason": str(exc)}
                )
                return
            self._finish(
                address,
                gmail_id,
                "refused",
                report,
                trace_id=trace_id,
                reason=str(exc),
                **facts,
            )
            return
        self._finish(address, gmail_id, "resumed", report, trace_id=trace_id, **facts)
        report.resumed.append(trace_id)

    def _answer_wait(self, trace_id: str, resume: dict[str, Any]) -> None:
        """Decide the wait's approval with this reply (first decision wins), then publish it.

        The reply and the wait's deadline (or another reply) race for the same step:
        whichever decides ``approvals/{approval_id}`` first is the one resume published
        for it. A deadline that comes later only republishes this resume, rebuilt from
        the record (``resume_of``); a resume already noted published is not sent again.

        Raises:
            AnsweredFirst: the deadline or another reply decided the wait first; nothing
                is published (the caller keeps the reply as one arriving now).
            RejectedEnvelope: the trace no longer waits; nothing is published.
        """
        approval = answer_customer_wait(self.store, resume, self.clock.now())
        if approval.resumed_at is None:
            self.runtime.resume(trace_id, resume_of(approval))
            note_resumed(self.store, approval, self.clock.now())

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

    def _review_reply(
        self, address: str, gmail_id: str, email: Email, report: IngestReport, facts: dict[str, Any]
    ) -> bool:
        """Decide the approval a reply to a review email answers; False if it answers none."""
        approvals = self.runtime.ports.approvals
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
            self._record_failure(
                f"reply {gmail_id} of {address} to the review email of approval "
                f"{outcome.approval_id} decided nothing ({outcome.outcome}): {outcome.reason}; "
                "the reviewer can still decide with the review link",
                mailbox=address,
                trace_id=approval.trace_id if approval is not None else "",
                gmail_id=gmail_id,
            )
        self._finish(address, gmail_id, "review_reply", report, **outcome.record(), **facts)
        report.review_replies.append(outcome.approval_id)
        return True

    def _queue_reply(
        self,
        address: str,
        raw: RawMessage,
        email: Email,
        trace_id: str,
        report: IngestReport,
        facts: dict[str, Any],
    ) -> None:
        """Queue a reply on its busy trace (once, however often it is delivered)."""
        now = self.clock.now()
        received = raw.internal_date_ms / 1000 if raw.internal_date_ms else now
        self.replies.queue(trace_id, email, received, now)
        # The trace may have paused for the customer since it was found busy: then the
        # queued reply could wait unread until the deadline, so it resumes the wait too
        # (the resume names the queued reply; the graph reads each gmail_id once).
        waiting = self.threads.waiting_for_reply(address, raw.thread_id)
        if waiting is not None and waiting.trace_id == trace_id:
            # Answered meanwhile (its deadline, another reply): that resume runs the wait, which
            # reads the queue; or the trace moved on: the reply stays queued for its next step.
            with contextlib.suppress(RejectedEnvelope):
                self._answer_wait(
                    trace_id, customer_reply_resume(email, trace_id, waiting.step, queued=True)
                )
        self._finish(address, raw.gmail_id, "queued", report, trace_id=trace_id, **facts)
        report.queued.append(trace_id)

    def _finish(
        self,
        address: str,
        gmail_id: str,
        state: ClaimState,
        report: IngestReport,
        **fields: Any,
    ) -> None:
        self.claims.finish(address, gmail_id, state, self.clock.now(), **fields)
        if state in ("blocked", "own", "skipped", "gone", "unreadable"):
            setattr(report, state, getattr(report, state) + 1)

    # --- Gmail calls with backoff ---------------------------------------------------------

    def _call(self, what: str, call: Callable[[], T]) -> T:
        attempts = max(1, self.options.gmail_attempts)
        for attempt in range(1, attempts + 1):
            try:
                return call()
            except (GmailRateLimited, GmailUnavailable) as exc:
                if attempt == attempts:
                    raise RetryableError(
                        f"Gmail {what} still failing after {attempts} attempts: {exc}"
                    ) from exc
                delay = min(
                    self.options.backoff_max_s, self.options.backoff_base_s * 2 ** (attempt - 1)
                )
                self.sleep(delay * (0.5 + random.random() / 2))
            except (HistoryExpired, MessageGone):
                raise
            except GmailError as exc:
                # Neither transient nor expected: keep the notification (Pub/Sub redelivers,
                # its dead-letter policy bounds it) rather than lose mail.
                raise RetryableError(f"Gmail {what} failed: {exc}") from exc
        raise AssertionError("unreachable")

    # --- records ------------------------------------------------------------------------

    def _reject(self, report: IngestReport, reason: str, message: Any) -> IngestReport:
        self._record_failure(reason, message=message, mailbox=report.mailbox)
        log.warning("Gmail notification refused, acknowledged: %s", reason)
        report.outcome = "rejected"
        report.error = reason
        return report

    def _record_failure(
        self,
        reason: str,
        message: Any = None,
        mailbox: str = "",
        trace_id: str = "",
        gmail_id: str = "",
    ) -> None:
        """Record an acknowledged failure; one per message when ``gmail_id`` names it (a
        redelivery rewrites the same record)."""
        now = self.clock.now()
        doc: dict[str, Any] = {
            "status": "failed",
            "reason": reason,
            "at": now,
            "expire_at": now + self.options.retention_days * 86400,
            "function": FUNCTION,
            "node": FUNCTION,
        }
        if mailbox:
            doc["mailbox"] = mailbox
        if trace_id:
            doc["trace_id"] = trace_id
        if message is not None:
            doc["message"] = json.dumps(message, default=repr)[:MAX_RAW_FAILURE_BYTES]
        if gmail_id:
            key = hashlib.sha256(f"{mailbox}:{gmail_id}".encode()).hexdigest()[:24]
            self.store.set(f"failures/ingest-{key}", doc)
            return
        self.store.set(f"failures/{_event_id(now)}", doc)


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


def customer_of(state: Any) -> str | None:
    """The customer of a trace: the sender of the email that started it (``state["email"]``)."""
    email = state.get("email") if isinstance(state, dict) else None
    sender = email.get("sender") if isinstance(email, dict) else None
    address = sender.get("address") if isinstance(sender, dict) else None
    return str(address).strip().lower() if address else None


def _sent(resume: dict[str, Any]) -> dict[str, Any]:
    """What a claim notes of the resume it is about to publish: the pause and the payload."""
    return {"approval_id": resume["approval_id"], "payload_hash": resume["payload_hash"]}


def _event_id(now: float) -> str:
    return f"{int(now * 1000):013d}-{uuid.uuid4().hex[:8]}"

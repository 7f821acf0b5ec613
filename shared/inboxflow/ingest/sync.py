"""Gmail sync: from a watch notification to claimed messages (docs/architecture.md §7).

For a notification ``{emailAddress, historyId}``:

1. In one transaction on the mailbox (``mailbox_sync.py``): a notification at
   or behind the cursor is stale (out of order or redelivered): nothing to do;
   one arriving while another run lists the mailbox is deferred to that run
   (acknowledged, no list); else this run takes the mailbox's sync lease.
2. ``history.list`` from the cursor to the last page; keep ``messageAdded``
   in INBOX, skip SENT and DRAFT. A 404 (cursor too old) or a mailbox without
   a cursor runs a bounded catch-up listing instead (``messages.list`` since the
   last message ingested, ``after:``, or over a recent window when none was),
   recorded in ``ingest_events`` and on the mailbox; the claims make each
   message's outcome happen once whatever the listings overlap.
3. Per message: claim it (create-only), fetch it raw, parse it, and hand it to
   ``dispatch.Dispatcher`` (start, resume or queue its trace). A message
   another run is still handling makes this run end retryable (after the
   rest of its messages) instead of moving the cursor past it.
4. Move the cursor forward (a transaction taking the max): only after every
   message up to it is claimed and carried out; list again from there while
   notifications deferred during the listing are ahead of it.

The sync lease and the claims are short leases renewed by the run's
heartbeat (``heartbeat.py``): a killed run's mailbox and messages are taken
by the next delivery, well within Pub/Sub's retry budget.

Rate limits and outages are retried with backoff; if they persist the error
is raised as ``RetryableError`` so Pub/Sub redelivers the notification.
Malformed notifications and unknown mailboxes are recorded in ``failures``
and acknowledged.

A mailbox whose authorization Gmail refuses (``invalid_grant``: revoked or
expired) is marked ``disconnected`` once: that run tells the mailbox's
reviewers, with the command that reconnects it, and logs one alert line
(``outcome=mailbox_disconnected``). Its notifications are then acknowledged
without calling Gmail (no token refresh, no redelivery) until ``inboxflow
mailbox connect`` stores a new token; the cursor has not moved, so the next
listing picks up what arrived meanwhile.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from html import escape
from typing import Any, TypeVar

from ..config import InboxflowConfig
from ..engine.runtime import Runtime
from ..errors import RetryableError
from ..mail import Email, EmailParseError
from ..mail.authentication import configured_authserv_id
from ..mail.loaders import parse_raw
from ..mail.loop_guard import label_skip
from ..ports.gmail_reader import (
    INBOX,
    AddedMessage,
    GmailError,
    GmailRateLimited,
    GmailReader,
    GmailUnavailable,
    HistoryExpired,
    MailboxDisconnected,
    MessageGone,
    RawMessage,
)
from ..ports.notifier import Notification
from ..reply_queue import ReplyQueue
from ..routing import RouteDecision
from ..schema import INGEST_EVENTS
from ..threads import ThreadResolver
from .claims import CLAIM_LEASE_S, FINISHED, Claims
from .dispatch import Dispatcher
from .failures import FailureLog, event_id
from .heartbeat import Heartbeat
from .mailbox_sync import MailboxSync
from .mailboxes import Mailbox, MailboxRegistry, UnknownMailbox
from .notification import BadNotification, GmailNotification, decode_notification
from .report import IngestReport

log = logging.getLogger("inboxflow.ingest")

T = TypeVar("T")


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
        lease_s: how long the sync lease and a claim outlive the run's last renewal
            (shorter than Pub/Sub's redelivery budget).
        renew_every_s: seconds between two renewals by a live run's heartbeat.
        max_hold_s: a run stops renewing after this long (the function's timeout).
        listing_budget_s: a run starts no new listing for notifications deferred to it
            after this long: it gives the mailbox back and has its own notification
            redelivered (well inside ``max_hold_s``).
    """

    gmail_attempts: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 16.0
    full_sync_days: int = 7
    full_sync_max_pages: int = 5
    max_history_pages: int = 10_000
    retention_days: float = 30
    lease_s: float = CLAIM_LEASE_S
    renew_every_s: float = CLAIM_LEASE_S / 3
    max_hold_s: float = 300.0
    listing_budget_s: float = 120.0


class IngestIncomplete(RetryableError):
    """The run ends before the cursor reached what it was asked for: redeliver.

    Another run holds some of the listed messages, or mail kept arriving for
    longer than the run's listing budget.

    Attributes:
        report: what this run did before giving up on moving the cursor.
    """

    def __init__(self, message: str, report: IngestReport) -> None:
        super().__init__(message)
        self.report = report


class SyncBusy(RetryableError):
    """This notification's own earlier delivery is still listing the mailbox: redeliver later."""


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
        self.store = runtime.documents
        self.clock = runtime.clock
        self.gmail = gmail
        self.options = options or IngestOptions()
        self.sleep = sleep or runtime.clock.sleep
        retention_s = self.options.retention_days * 86400
        self.mailboxes = MailboxRegistry(self.store)
        self.claims = Claims(self.store, retention_s, self.options.lease_s)
        self.sync = MailboxSync(self.store, self.options.lease_s)
        self.threads = ThreadResolver(self.store, runtime.checkpoints)
        # Queued replies live as long as the thread mapping they hang off (a trace may wait weeks).
        self.replies = ReplyQueue(self.store, runtime.checkpoints, runtime.graphs)
        self.failures = FailureLog(self.store, self.clock, retention_s)
        self.dispatch = Dispatcher(
            runtime,
            self.claims,
            self.threads,
            self.replies,
            self.failures,
            self.config,
            self.authserv_id,
            router,
        )

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
            self.failures.record(f"not a Gmail notification: {exc}", message=message)
            log.warning("malformed Gmail notification, acknowledged: %s", exc)
            return IngestReport(mailbox="", history_id=0, outcome="rejected", error=str(exc))
        return self.ingest(notification, message=message)

    def ingest(self, notification: GmailNotification, message: Any | None = None) -> IngestReport:
        """Ingest everything new in a mailbox up to (at least) the notification's history id.

        Raises:
            RetryableError: Gmail or the store failed transiently, another run holds some
                of the messages, or this notification's earlier delivery still lists the
                mailbox; redeliver.
        """
        report = IngestReport(notification.email_address, notification.history_id)
        owner = f"ingest:{uuid.uuid4().hex[:12]}"
        try:
            turn = self.sync.begin(
                notification.email_address, notification.history_id, owner, self.clock.now()
            )
        except (UnknownMailbox, ValueError) as exc:
            return self._reject(report, f"unknown mailbox: {exc}", message)
        mailbox = turn.mailbox
        report.mailbox = mailbox.address
        report.cursor_before = report.cursor_after = mailbox.history_id
        if turn.turn == "busy":
            raise SyncBusy(
                f"{mailbox.address} @{notification.history_id}: an earlier delivery of this "
                "notification is still listing the mailbox"
            )
        if turn.turn != "listing":
            report.outcome = turn.turn
            log.info("%s", report.summary())
            return report
        if mailbox.graph not in self.runtime.graphs:
            self.sync.release(mailbox.address, owner, self.clock.now())
            return self._reject(
                report, f"mailbox {mailbox.address} starts unknown graph {mailbox.graph!r}", message
            )
        with Heartbeat(self.clock, self.options.renew_every_s, self.options.max_hold_s) as beat:
            beat.hold("sync", partial(self.sync.renew, mailbox.address, owner))
            try:
                self._list_rounds(mailbox, notification, report, owner, beat)
            except MailboxDisconnected as exc:
                self.sync.release(mailbox.address, owner, self.clock.now())
                self._disconnected(mailbox, str(exc), report)
                return report
            except Exception:
                try:
                    self.sync.release(mailbox.address, owner, self.clock.now())
                except Exception:
                    log.exception("could not give back the sync lease of %s", mailbox.address)
                raise
        log.info("%s", report.summary())
        return report

    def _list_rounds(
        self,
        mailbox: Mailbox,
        notification: GmailNotification,
        report: IngestReport,
        owner: str,
        beat: Heartbeat,
    ) -> None:
        """List and carry out from the cursor, again while deferred notifications are ahead."""
        cursor = mailbox.history_id
        began = self.clock.now()
        while True:
            updates: dict[str, Any] = {}
            if cursor is None:
                new_cursor = self._full_sync(
                    mailbox, notification, report, "the mailbox had no cursor", owner, beat
                )
                updates["last_full_sync"] = report.full_sync
            else:
                try:
                    new_cursor = self._sync_history(mailbox, cursor, report, owner, beat)
                except HistoryExpired:
                    reason = f"history from {cursor} is no longer available (404)"
                    new_cursor = self._full_sync(mailbox, notification, report, reason, owner, beat)
                    updates["last_full_sync"] = report.full_sync
            if report.latest_message_ms is not None:
                updates["last_message_ms"] = report.latest_message_ms
            if report.in_flight:
                log.info("%s", report.summary())
                raise IngestIncomplete(
                    f"{report.in_flight} message(s) of {mailbox.address} are being ingested by "
                    "another run: the cursor stays until they are done",
                    report,
                )
            end = self.sync.finish(mailbox.address, owner, new_cursor, self.clock.now(), **updates)
            report.cursor_after = cursor = end.after
            if not end.again:
                return
            if self.clock.now() - began > self.options.listing_budget_s:
                log.info("%s", report.summary())
                raise IngestIncomplete(
                    f"mail kept arriving in {mailbox.address} for {self.options.listing_budget_s:g}"
                    " s of listing: the mailbox is given back and this notification redelivered",
                    report,
                )
            report.rounds += 1

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
            self.dispatch.take(mailbox, raw, email, str(claim["trace_id"]), report)
        except Exception:
            self.claims.release(mailbox.address, gmail_id, owner, self.clock.now())
            raise
        return report

    # --- listing ----------------------------------------------------------------------

    def _sync_history(
        self, mailbox: Mailbox, cursor: int, report: IngestReport, owner: str, beat: Heartbeat
    ) -> int:
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
                self._process(mailbox, message, "history", report, owner, beat)
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
        beat: Heartbeat,
    ) -> int:
        """Claim the INBOX messages since the last one ingested (else of the recent window);
        returns the new cursor."""
        query = catch_up_query(mailbox, self.options)
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
                self._process(mailbox, message, "full_sync", report, owner, beat)
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
            INGEST_EVENTS.path(event_id(now)),
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
        self,
        mailbox: Mailbox,
        listed: AddedMessage,
        via: str,
        report: IngestReport,
        owner: str,
        beat: Heartbeat,
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
        beat.hold(("claim", gmail_id), partial(self.claims.renew, address, gmail_id, owner))
        try:
            self._carry_out(mailbox, claim, report)
        except Exception:
            try:
                self.claims.release(address, gmail_id, owner, self.clock.now())
            except Exception:
                log.exception("could not release the claim of %s in %s", gmail_id, address)
            raise
        finally:
            beat.drop(("claim", gmail_id))

    def _carry_out(self, mailbox: Mailbox, claim: dict[str, Any], report: IngestReport) -> None:
        address, gmail_id = mailbox.address, str(claim["gmail_id"])
        try:
            raw = self._call("messages.get", lambda: self.gmail.get_raw(address, gmail_id))
        except MessageGone:
            self.dispatch.finish(address, gmail_id, "gone", report)
            return
        if raw.internal_date_ms:
            report.latest_message_ms = max(report.latest_message_ms or 0, raw.internal_date_ms)
        skip = label_skip(raw.label_ids) if raw.label_ids else None
        if skip:
            self.dispatch.finish(address, gmail_id, "skipped", report, reason=skip)
            return
        try:
            email = parse_raw(raw, address)
        except EmailParseError as exc:
            reason = f"message {gmail_id} of {address} is not a readable email: {exc}"
            self.failures.record(reason, mailbox=address)
            self.dispatch.finish(address, gmail_id, "unreadable", report, reason=str(exc))
            return
        self.dispatch.take(mailbox, raw, email, str(claim["trace_id"]), report)

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
            except (HistoryExpired, MessageGone, MailboxDisconnected):
                raise
            except GmailError as exc:
                # Neither transient nor expected: keep the notification (Pub/Sub redelivers,
                # its dead-letter policy bounds it) rather than lose mail.
                raise RetryableError(f"Gmail {what} failed: {exc}") from exc
        raise AssertionError("unreachable")

    # --- health -------------------------------------------------------------------------

    def _disconnected(self, mailbox: Mailbox, reason: str, report: IngestReport) -> None:
        """Mark the mailbox disconnected; the run that changes it alerts and tells the reviewers."""
        report.outcome = "disconnected"
        report.error = reason
        now = self.clock.now()
        if not self.mailboxes.mark_disconnected(mailbox.address, reason, now):
            log.info("%s", report.summary())
            return
        command = reconnect_command(mailbox.address)
        log.error(
            "mailbox disconnected: %s (%s); its notifications are acknowledged unread until "
            "someone runs `%s`",
            mailbox.address,
            reason,
            command,
            extra={"outcome": "mailbox_disconnected"},
        )
        reviewers = [str(r) for r in mailbox.settings.get("reviewers") or []] or [mailbox.address]
        text = (
            f"inboxflow can no longer read {mailbox.address}: Gmail refused its authorization "
            f"(revoked, or expired).\n\nNew mail there is not handled until the mailbox's owner "
            f"reconnects it:\n\n    {command}\n\nMail that arrived meanwhile is picked up "
            "once it is reconnected."
        )
        page = f"<pre>{escape(text)}</pre>"
        key = f"mailbox-disconnected:{mailbox.address}:{int(now)}"
        try:
            notifier = self.runtime.ports.notifier
        except Exception:  # no notifier configured: the alert line still fires
            log.exception("no notifier to tell the reviewers of %s", mailbox.address)
            return
        for index, reviewer in enumerate(reviewers):
            try:
                notifier.send(
                    Notification(
                        reviewer,
                        f"Reconnect {mailbox.address} to inboxflow",
                        text,
                        page,
                        f"{key}:{index}",
                    )
                )
            except Exception:  # the alert line is the backstop of a notice that fails
                log.exception(
                    "could not tell %s that %s is disconnected", reviewer, mailbox.address
                )

    # --- records ------------------------------------------------------------------------

    def _reject(self, report: IngestReport, reason: str, message: Any) -> IngestReport:
        self.failures.record(reason, message=message, mailbox=report.mailbox)
        log.warning("Gmail notification refused, acknowledged: %s", reason)
        report.outcome = "rejected"
        report.error = reason
        return report


CATCH_UP_SLACK_S = 3600
"""A catch-up listing starts this long before the last message ingested (Gmail's ``after:``
counts whole seconds of ``internalDate``; the claims drop what is listed twice)."""


def catch_up_query(mailbox: Mailbox, options: IngestOptions) -> str:
    """The ``messages.list`` query of a catch-up: since the last message ingested, else the window."""
    if mailbox.last_message_ms:
        return f"after:{max(0, mailbox.last_message_ms // 1000 - CATCH_UP_SLACK_S)}"
    return f"newer_than:{options.full_sync_days}d"


def reconnect_command(address: str) -> str:
    """The command a person runs to give a mailbox a new authorization."""
    return f"inboxflow mailbox connect {address}"

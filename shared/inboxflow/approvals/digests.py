"""Reviewer digests: at most one message per interval with the count per graph and one inbox link.

A reviewer with ``notify: digest`` (or ``both``) in ``inboxflow.yaml`` gets, through
their own channel, a digest instead of (or besides) an email per pause:

- **new**: something waits that the last digest did not count, and no digest went
  out in the last ``interval_minutes`` (default 60);
- **daily**: the summary at ``daily_at`` in ``timezone`` (default 08:00 UTC), once a
  day, when anything waits.

Two triggers ask :meth:`Digests.send_due`: every pause (``ApprovalService.after_pause``,
for the reviewers of the round) and a sweep (:meth:`Digests.sweep`) that Cloud
Scheduler calls through ``POST /digest`` of the approval function (``inboxflow
serve`` runs it every minute; ``inboxflow digest --now`` once). A new approval
held back by the interval goes out with the first sweep after the interval.

**Exactly once.** ``reviewer_digests/{id}`` is the reviewer's record. A digest is
*claimed* in one transaction on it before anything is sent: the rules are read
and ``sending`` (a new digest id, under a lease) and ``last_sent_at`` written
together, so of two functions racing only one claims; the other sees the claim
and sends nothing. The id is the message's effect key (``Notification.trace_key``).
A caller that finds a claim whose lease lapsed (its sender crashed, between claim
and send or after the send) takes it over: it asks the channel for a message
with that key (``Notifier.find``) and sends only when there is none, then marks
the claim done, as the effect journal does for a pause's email.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field

from ..engine.waits import Approval
from ..errors import RetryableError
from ..field_defaults import empty_list
from ..lazy import Lazy
from ..mail.addresses import address_key_or_none, ascii_lower
from ..ports.documents import Filter, Transaction
from ..ports.notifier import Notification, NotificationRefused, Notifier
from ..schema import APPROVALS, REVIEWER_DIGESTS
from .grounds import Grounds, LazyMember, Part

if TYPE_CHECKING:
    from ..config import DigestSchedule, InboxflowConfig

log = logging.getLogger(__name__)

DIGEST_LEASE_S = 300.0
"""How long a claim keeps other callers off: a sender that has not finished by then is taken
to have crashed, and the next caller reconciles its digest (found by key, else sent)."""
KEEP_SENT = 20
"""How many sent digests a record lists (newest last)."""
DIGEST_WINDOW = 1000
"""The most waiting approvals one digest reads (soonest deadline first) and counts."""

DigestKind = Literal["new", "daily"]
FaultHook = Callable[[str], None]


def _no_fault(point: str) -> None:
    """Fault injection points (``before_claim``, ``after_claim``, ``after_send``): tests crash
    or hold callers there."""


def digest_record_id(reviewer: str) -> str:
    """The id of ``reviewer``'s record (addresses and names are not document ids)."""
    key = address_key_or_none(reviewer) or ascii_lower(reviewer.strip())
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def digest_path(reviewer: str) -> str:
    """Where ``reviewer``'s digest record is."""
    return REVIEWER_DIGESTS.path(digest_record_id(reviewer))


class DigestClaim(BaseModel):
    """A digest claimed for sending (``sending`` on the record)."""

    digest_id: str
    kind: DigestKind
    claimed_at: float
    lease_until: float
    attempts: int = 1
    seen_until: float
    """The newest approval (``created_at``) it counts: later ones are new to the next."""
    day: str | None = None
    """The reviewer's local date of a daily summary (``YYYY-MM-DD``)."""


class DigestRecord(BaseModel):
    """``reviewer_digests/{id}``: one reviewer's digests."""

    reviewer: str
    seq: int = 0
    last_sent_at: float | None = None
    seen_until: float = 0.0
    last_daily: str | None = None
    sending: DigestClaim | None = None
    sent: list[dict[str, Any]] = Field(default_factory=empty_list)


@dataclass(frozen=True)
class DigestOutcome:
    """What one ``send_due`` did for one reviewer.

    Attributes:
        reviewer: whose digest.
        action: ``sent``, ``reconciled`` (found already sent after a crash), ``refused``
            (the channel refused it for good), ``not_due``, ``busy`` (another caller
            is sending it), ``nothing_waits`` (a daily summary with nothing pending),
            ``not_digest`` (the reviewer gets no digests).
        digest_id: the digest's key, when one was claimed.
        kind: ``new`` or ``daily``.
        counts: the pending approvals per graph it counted.
        detail: the channel's refusal, when refused.
    """

    reviewer: str
    action: str
    digest_id: str | None = None
    kind: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    detail: str | None = None


def due_kind(
    record: DigestRecord, schedule: DigestSchedule, now: float, newest: float
) -> tuple[DigestKind | None, str]:
    """Which digest is due (``new``, ``daily`` or None) and the reviewer's local date.

    Args:
        record: the reviewer's record.
        schedule: their schedule.
        now: the time.
        newest: ``created_at`` of the newest pending approval (0 when none).
    """
    local = datetime.fromtimestamp(now, ZoneInfo(schedule.timezone))
    today = local.date().isoformat()
    if schedule.daily_at is not None and record.last_daily != today:
        hour, minute = (int(part) for part in schedule.daily_at.split(":"))
        if (local.hour, local.minute) >= (hour, minute):
            return "daily", today
    quiet = (
        record.last_sent_at is None or now - record.last_sent_at >= schedule.interval_minutes * 60
    )
    if newest > record.seen_until and quiet:
        return "new", today
    return None, today


def counts_by_graph(approvals: Sequence[Approval]) -> dict[str, int]:
    """Pending approvals per graph, the graph with most first (then by name)."""
    counted = Counter(approval.graph for approval in approvals)
    return dict(sorted(counted.items(), key=lambda item: (-item[1], item[0])))


class Digests(Part):
    """Send each digest reviewer at most one digest per interval, exactly once.

    Args:
        grounds: the store (approvals and the digest records), the clock, the config (the sender address, ``notify_from``).
        notifier: the reviewers' channels (``adapters.channels.ChannelNotifier``).
        sign_in: ``reviewer -> URL``: a single-use sign-in link to their inbox.
        settings: ``inboxflow.yaml`` (``reviewers:`` modes and ``digest:`` schedules).
        fault: fault injection (tests).
    """

    notifier = LazyMember[Notifier]("The reviewers' channels (built on first use).")

    def __init__(
        self,
        grounds: Grounds,
        notifier: Notifier | Lazy[Notifier],
        sign_in: Callable[[str], str],
        settings: Callable[[], InboxflowConfig],
        fault: FaultHook = _no_fault,
    ) -> None:
        super().__init__(grounds)
        self.notifier = notifier
        self.sign_in = sign_in
        self._settings = settings
        self.fault = fault

    @property
    def settings(self) -> InboxflowConfig:
        """``inboxflow.yaml`` as validated."""
        return self._settings()

    def wants_each(self, reviewer: str) -> bool:
        """Whether ``reviewer`` gets an email per pause (``each`` or ``both``)."""
        return self.settings.notify_mode(reviewer) != "digest"

    def wants_digest(self, reviewer: str) -> bool:
        """Whether ``reviewer`` gets digests (``digest`` or ``both``)."""
        return self.settings.notify_mode(reviewer) != "each"

    def on_pause(self, approval: Approval) -> RetryableError | None:
        """A pause: send the digest of each reviewer of its round who takes digests, if due.

        Returns:
            The first retryable failure (raised by the caller, so the pause is
            redelivered and those reviewers asked again), or None.
        """
        reviewers = approval.reviewers if approval.round == 0 else approval.escalate_to
        unavailable: RetryableError | None = None
        for reviewer in reviewers:
            if not self.wants_digest(reviewer):
                continue
            try:
                self.send_due(reviewer)
            except RetryableError as exc:
                log.warning("digest for %s: %s", reviewer, exc)
                unavailable = unavailable or exc
        return unavailable

    def sweep(self) -> list[DigestOutcome]:
        """Send every digest that is due (the scheduled call: daily summaries, held-back ones).

        One reviewer's channel failing never keeps the others from theirs; a
        retryable failure is logged and left to the next sweep.
        """
        outcomes = []
        for reviewer in self.settings.digest_reviewers():
            try:
                outcomes.append(self.send_due(reviewer))
            except RetryableError as exc:
                log.warning("digest for %s: %s", reviewer, exc)
                outcomes.append(DigestOutcome(reviewer, "unavailable", detail=str(exc)))
        return outcomes

    def waiting(self, reviewer: str) -> list[Approval]:
        """What waits for ``reviewer``, as their inbox lists it (the same indexed query:
        ``may_decide`` array-contains them, pending, by deadline)."""
        where: list[Filter] = [
            ("may_decide", "array_contains", reviewer),
            ("status", "==", "pending"),
        ]
        rows = self.store.list(APPROVALS.name, where, order_by="deadline", limit=DIGEST_WINDOW)
        return [Approval.model_validate(doc) for _, doc in rows]

    def record(self, reviewer: str) -> DigestRecord | None:
        """``reviewer``'s digest record, or None before their first digest."""
        doc = self.store.get(digest_path(reviewer))
        return None if doc is None else DigestRecord.model_validate(doc)

    def send_due(self, reviewer: str) -> DigestOutcome:
        """Send ``reviewer``'s digest if one is due, or finish one whose sender crashed.

        Raises:
            RetryableError: the channel is unavailable; the claim is released, so the
                next caller sends it.
        """
        if not self.wants_digest(reviewer):
            return DigestOutcome(reviewer, "not_digest")
        schedule = self.settings.digest_schedule(reviewer)
        now = self.clock.now()
        # One read answers most calls (a pause within the interval): nothing can be due.
        known = self.record(reviewer) or DigestRecord(reviewer=reviewer)
        if known.sending is not None and known.sending.lease_until > now:
            return DigestOutcome(reviewer, "busy")
        if known.sending is None and due_kind(known, schedule, now, math.inf)[0] is None:
            return DigestOutcome(reviewer, "not_due")
        pending = self.waiting(reviewer)
        newest = max((approval.created_at for approval in pending), default=0.0)
        self.fault("before_claim")
        claimed = self.store.run_transaction(
            lambda tx: self._claim(tx, reviewer, schedule, now, newest)
        )
        if isinstance(claimed, str):
            return DigestOutcome(reviewer, claimed)
        claim, takeover = claimed
        self.fault("after_claim")
        if takeover:
            found = self.notifier.find(claim.digest_id, self.config.notify_from)
            if found is not None:
                self._finish(reviewer, claim, {**found, "reconciled": True})
                return DigestOutcome(reviewer, "reconciled", claim.digest_id, claim.kind)
        counts = counts_by_graph(pending)
        if not counts:
            self._finish(reviewer, claim, {"nothing_waits": True})
            return DigestOutcome(reviewer, "nothing_waits", claim.digest_id, claim.kind)
        from .pages import render_digest  # templates: only when a digest goes out
        from .sign_in import SIGN_IN_TTL_S

        link = self.sign_in(reviewer)
        overdue = sum(1 for approval in pending if approval.deadline <= now)
        subject, text, html = render_digest(
            reviewer,
            counts,
            link=link,
            valid_minutes=SIGN_IN_TTL_S // 60,
            daily=claim.kind == "daily",
            overdue=overdue,
        )
        note = Notification(
            reviewer, subject, text, html, claim.digest_id, self.config.notify_from, link
        )
        try:
            receipt = self.notifier.send(note)
        except NotificationRefused as exc:
            log.warning("digest for %s refused: %s", reviewer, exc)
            self._finish(reviewer, claim, {"error": str(exc), "channel": exc.channel}, counts)
            return DigestOutcome(
                reviewer, "refused", claim.digest_id, claim.kind, counts, detail=str(exc)
            )
        except RetryableError:
            self._release(reviewer, claim)
            raise
        self.fault("after_send")
        self._finish(reviewer, claim, receipt, counts)
        log.info("digest %s (%s) sent to %s: %s", claim.digest_id, claim.kind, reviewer, counts)
        return DigestOutcome(reviewer, "sent", claim.digest_id, claim.kind, counts)

    def _claim(
        self,
        tx: Transaction,
        reviewer: str,
        schedule: DigestSchedule,
        now: float,
        newest: float,
    ) -> tuple[DigestClaim, bool] | str:
        """In the transaction: claim the due digest (or take over a lapsed claim), or say why not."""
        path = digest_path(reviewer)
        doc = tx.get(path)
        record = (
            DigestRecord(reviewer=reviewer) if doc is None else DigestRecord.model_validate(doc)
        )
        if record.sending is not None:
            if record.sending.lease_until > now:
                return "busy"
            taken = record.sending.model_copy(
                update={
                    "lease_until": now + DIGEST_LEASE_S,
                    "attempts": record.sending.attempts + 1,
                }
            )
            tx.set(path, record.model_copy(update={"sending": taken}).model_dump())
            return taken, True
        kind, today = due_kind(record, schedule, now, newest)
        if kind is None:
            return "not_due"
        if newest == 0.0:  # a daily summary of nothing: that day is done, nothing is sent
            tx.set(path, record.model_copy(update={"last_daily": today}).model_dump())
            return "nothing_waits"
        seq = record.seq + 1
        claim = DigestClaim(
            digest_id=f"digest-{digest_record_id(reviewer)}:{seq}",
            kind=kind,
            claimed_at=now,
            lease_until=now + DIGEST_LEASE_S,
            seen_until=max(newest, record.seen_until),
            day=today if kind == "daily" else None,
        )
        claimed = record.model_copy(update={"seq": seq, "sending": claim, "last_sent_at": now})
        tx.set(path, claimed.model_dump())
        return claim, False

    def _finish(
        self,
        reviewer: str,
        claim: DigestClaim,
        receipt: dict[str, Any],
        counts: dict[str, int] | None = None,
    ) -> None:
        """Mark ``claim`` done on the record (unless someone else already finished it)."""
        entry = {
            "digest_id": claim.digest_id,
            "kind": claim.kind,
            "claimed_at": claim.claimed_at,
            "done_at": self.clock.now(),
            "counts": counts or {},
            **{k: v for k, v in receipt.items() if isinstance(v, str | int | float | bool)},
        }

        def finish(record: DigestRecord, _: DigestClaim) -> DigestRecord:
            return record.model_copy(
                update={
                    "sending": None,
                    "seen_until": max(record.seen_until, claim.seen_until),
                    "last_daily": claim.day or record.last_daily,
                    "sent": [*record.sent, entry][-KEEP_SENT:],
                }
            )

        self._change_own_claim(reviewer, claim, finish)

    def _release(self, reviewer: str, claim: DigestClaim) -> None:
        """Give a claim back after a retryable failure: the next caller sends it at once."""

        def release(record: DigestRecord, sending: DigestClaim) -> DigestRecord:
            lapsed = sending.model_copy(update={"lease_until": 0.0})
            return record.model_copy(update={"sending": lapsed})

        self._change_own_claim(reviewer, claim, release)

    def _change_own_claim(
        self,
        reviewer: str,
        claim: DigestClaim,
        change: Callable[[DigestRecord, DigestClaim], DigestRecord],
    ) -> None:
        """Apply ``change`` to the reviewer's record while ``claim`` still holds it (else nothing).

        ``change`` gets the record and the claim as stored in it.
        """
        path = digest_path(reviewer)

        def apply(tx: Transaction) -> None:
            doc = tx.get(path)
            if doc is None:
                return
            record = DigestRecord.model_validate(doc)
            if record.sending is None or record.sending.digest_id != claim.digest_id:
                return
            tx.set(path, change(record, record.sending).model_dump())

        self.store.run_transaction(apply)

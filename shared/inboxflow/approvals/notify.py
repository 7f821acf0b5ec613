"""Reviewer notifications: the email (or channel message) of each round, and any later one.

Each email is an effect in the journal, keyed by round and reviewer, so a
redelivered pause sends nothing twice; one reviewer's channel failing never
keeps the others from hearing of it. Before an email is sent its Message-ID
stamp is drawn with the approval's id (``review_mails.review_mail_fields``), and once
sent its Gmail thread is recorded, so that a reviewer's reply leads back to the approval.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..engine.effects import EffectJournal
from ..engine.waits import Approval, approval_path
from ..errors import RetryableError
from ..lazy import Lazy
from ..mail_stamps import stamp_for
from ..ports.documents import Transaction
from ..ports.notifier import Notification, NotificationRefused, Notifier
from .grounds import Grounds, LazyMember, Part
from .tokens import Tokens

if TYPE_CHECKING:
    from .pages import ApprovalView

log = logging.getLogger(__name__)


class Notifications(Part):
    """Tell reviewers of an approval, once per round and reviewer.

    Args:
        grounds: the store (approvals and the review-mail records), the clock, the config (the sender address).
        notifier: sends reviewer emails.
        journal: makes each email an effect (sent once, found again after a crash).
        tokens: mints the review link each email carries.
        view: the page model of an approval as a reviewer sees it.
        each: whether a reviewer gets an email per pause (``notify: each`` or ``both``);
            default: everyone.
    """

    notifier = LazyMember[Notifier]("What reviewers are notified through (built on first use).")

    def __init__(
        self,
        grounds: Grounds,
        notifier: Notifier | Lazy[Notifier],
        journal: EffectJournal,
        tokens: Tokens,
        view: Callable[[Approval, str], ApprovalView],
        each: Callable[[str], bool] | None = None,
    ) -> None:
        super().__init__(grounds)
        self.notifier = notifier
        self.journal = journal
        self.tokens = tokens
        self.view = view
        self.each = each or (lambda reviewer: True)

    def notify_round(self, current: Approval) -> RetryableError | None:
        """Notify the reviewers of the approval's current round (each once).

        A reviewer whose channel refuses for good is recorded on the approval
        (``notify_errors``). A reviewer with ``notify: digest`` gets no email of
        their own: their digest counts the approval (``approvals/digests.py``).

        Returns:
            The first retryable failure (those reviewers are notified on the
            redelivery that raising it causes), or None.
        """
        reviewers = current.reviewers if current.round == 0 else current.escalate_to
        refused: dict[str, str] = {}
        unavailable: RetryableError | None = None
        for reviewer in reviewers:
            if not self.each(reviewer):
                continue
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
                from .review_mails import record_review_thread

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
        return unavailable

    def _notify(self, approval: Approval, reviewer: str, key: str) -> dict[str, Any]:
        from .pages import render_notification
        from .review_mails import review_mail_fields

        link = self.tokens.issue_link(approval, reviewer)
        subject, text, html = render_notification(self.view(approval, reviewer), link=link)
        # Before sending, so that a reply (``approvals/replies.py``) always finds it: the
        # stamp is the random one the message's Message-ID will carry (``mail_stamps.py``),
        # drawn with the approval it is for.
        stamp_for(self.store, key, self.clock.now(), about=review_mail_fields(approval))
        try:
            receipt = self.notifier.send(
                Notification(reviewer, subject, text, html, key, self._sender(approval), link)
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
            from .review_mails import review_mail_fields

            subject, text, html = render(self.tokens.issue_link(approval, reviewer))
            stamp_for(self.store, key, self.clock.now(), about=review_mail_fields(approval))
            try:
                receipt = self.notifier.send(
                    Notification(reviewer, subject, text, html, key, self._sender(approval))
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

"""Review decisions by email: a reviewer answers the review email instead of clicking.

When a reviewer email is sent, ``record_review_mail`` keeps
``review_mails/{digest}``: the digest is the one in the email's Message-ID
(``<inboxflow.{digest}@domain>``, ``ports.workspace.trace_message_id`` of the
effect key), so a reply, whose ``In-Reply-To``/``References`` carry that id,
leads back to the approval and the reviewer it was sent to. Gmail may replace
our Message-ID on a sent message; then the reply carries Gmail's id, and the
Gmail thread is what leads back: once a review email is sent, its thread in
the sending mailbox is kept as ``review_threads/{mailbox}:{thread_id}``.

``decide_by_reply`` reads the reply's first non-blank line (quoted text below
it is never read): ``approve``/``accept`` take the kind's approving choice,
``reject: <comment>`` its rejecting choice with the comment. The decision goes
through ``ApprovalService.decide_as``, the path every decision takes (first
decision wins, a decided approval answers 409), so a link click and a reply
can never both decide. Anything else changes nothing and says why: the sender
is not a reviewer of that approval, the approval is decided or past its
deadline, the line is not understood, or the kind has no such choice.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..mail import Email
from ..ports.checkpoint import CheckpointStore

if TYPE_CHECKING:
    from .records import Approval
    from .service import ApprovalService

REVIEW_MAILS = "review_mails"
REVIEW_THREADS = "review_threads"
APPROVING = ("approve", "accept")
REJECTING = ("reject",)
_OUR_MESSAGE_ID = re.compile(r"^inboxflow\.([0-9a-f]{32})@", re.IGNORECASE)
_APPROVE = re.compile(r"^(approve|accept)(?:s|d|ed)?\b", re.IGNORECASE)
_REJECT = re.compile(r"^reject(?:ed|s)?\b\s*[:\-\N{EN DASH}\N{EM DASH}]?\s*(.*)$", re.IGNORECASE)

Outcome = Literal[
    "decided", "not_a_reviewer", "already_decided", "expired", "not_understood", "refused"
]


def review_mail_path(trace_key: str) -> str:
    """Where the review email sent with effect key ``trace_key`` is recorded."""
    return f"{REVIEW_MAILS}/{hashlib.sha256(trace_key.encode('utf-8')).hexdigest()[:32]}"


def record_review_mail(
    store: CheckpointStore, approval: Approval, reviewer: str, trace_key: str, now: float
) -> None:
    """Remember which approval and reviewer the email stamped ``trace_key`` is for."""
    store.set(
        review_mail_path(trace_key),
        {
            "approval_id": approval.approval_id,
            "trace_id": approval.trace_id,
            "reviewer": reviewer,
            "round": approval.round,
            "sent_at": now,
            "expire_at": approval.expire_at,
        },
    )


def review_thread_path(mailbox: str, thread_id: str) -> str:
    """Where the review email sent from ``mailbox`` in Gmail thread ``thread_id`` is recorded."""
    return f"{REVIEW_THREADS}/{mailbox.strip().lower()}:{thread_id}"


def record_review_thread(
    store: CheckpointStore,
    approval: Approval,
    reviewer: str,
    mailbox: str,
    thread_id: str,
    now: float,
) -> None:
    """Remember the Gmail thread the review email to ``reviewer`` was sent in (once)."""
    store.create(
        review_thread_path(mailbox, thread_id),
        {
            "approval_id": approval.approval_id,
            "trace_id": approval.trace_id,
            "reviewer": reviewer,
            "round": approval.round,
            "mailbox": mailbox.strip().lower(),
            "thread_id": thread_id,
            "sent_at": now,
            "expire_at": approval.expire_at,
        },
    )


def review_mail_of(store: CheckpointStore, email: Email) -> dict[str, Any] | None:
    """The review email ``email`` answers, or None.

    By our Message-ID in its In-Reply-To/References first; Gmail may have given the
    sent review email a Message-ID of its own, so then by the Gmail thread the reply
    is in (the review email's thread in the mailbox that sent it).
    """
    for message_id in [email.in_reply_to or "", *reversed(email.references)]:
        match = _OUR_MESSAGE_ID.match(message_id.strip().strip("<>"))
        if match:
            doc = store.get(f"{REVIEW_MAILS}/{match.group(1).lower()}")
            if doc is not None:
                return doc
    if email.thread_id and email.mailbox:
        return store.get(review_thread_path(email.mailbox, email.thread_id))
    return None


def parse_decision(text: str) -> tuple[str, str | None] | None:
    """``("approve", None)`` or ``("reject", comment)`` from a reply's first non-blank line."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if _APPROVE.match(first):
        return "approve", None
    rejected = _REJECT.match(first)
    if rejected:
        return "reject", rejected.group(1).strip() or None
    return None


@dataclass(frozen=True)
class ReplyDecision:
    """What a reply to a review email did.

    Attributes:
        approval_id: the approval the reply answers.
        outcome: ``decided``, or why nothing changed.
        reason: one sentence for the claim record and the logs.
        decision: the choice taken (``decided`` only).
        reviewer: the reviewer who decided (as the approval lists them), or the sender.
    """

    approval_id: str
    outcome: Outcome
    reason: str
    decision: str | None = None
    reviewer: str | None = None

    def record(self) -> dict[str, Any]:
        """The fields kept on the message's claim."""
        return {
            "approval_id": self.approval_id,
            "review_outcome": self.outcome,
            "reason": self.reason,
            "decision": self.decision,
        }


def decide_by_reply(approvals: ApprovalService, email: Email) -> ReplyDecision | None:
    """Decide the approval ``email`` answers, if its sender may and its first line says how.

    Returns:
        None when ``email`` answers no review email; else what it did.
    """
    from .service import AlreadyDecided, ApprovalError

    mail = review_mail_of(approvals.store, email)
    if mail is None:
        return None
    approval_id = str(mail["approval_id"])
    sender = email.sender.address.strip().lower()
    approval = approvals.get(approval_id)
    if approval is None:
        return ReplyDecision(approval_id, "refused", "the approval no longer exists")
    listed = {r.lower(): r for r in (*approval.reviewers, *approval.escalate_to)}
    reviewer = listed.get(sender)
    if reviewer is None:
        return ReplyDecision(
            approval_id, "not_a_reviewer", f"{sender} is not a reviewer of this approval"
        )
    if _failed_authentication(email):
        return ReplyDecision(
            approval_id, "refused", f"the reply claims to be from {sender} but failed DMARC"
        )
    if approval.status != "pending":
        return _already(approvals, approval)
    if approvals.clock.now() >= approval.deadline:
        return ReplyDecision(approval_id, "expired", "the approval is past its deadline")
    parsed = parse_decision(email.body_text)
    if parsed is None:
        return ReplyDecision(
            approval_id,
            "not_understood",
            'the first line does not start with "approve", "accept" or "reject: <comment>"',
        )
    wanted, comment = parsed
    values = approvals.kind(approval).values
    names = APPROVING if wanted == "approve" else REJECTING
    choice = next((value for value in names if value in values), None)
    if choice is None:
        return ReplyDecision(
            approval_id,
            "not_understood",
            f"this review has no {wanted} choice (its choices: {', '.join(values)}): use the link",
        )
    try:
        approvals.decide_as(approval_id, reviewer, choice, comment=comment)
    except AlreadyDecided as exc:
        return _already(approvals, exc.approval)
    except ApprovalError as exc:
        return ReplyDecision(approval_id, "refused", exc.message)
    return ReplyDecision(
        approval_id, "decided", f"{choice} by email reply", decision=choice, reviewer=reviewer
    )


def _already(approvals: ApprovalService, approval: Approval) -> ReplyDecision:
    """Decided before; its resume is published again in case the run that decided died first
    (``publish_resume`` does nothing once the resume is noted, and the runtime drops duplicates)."""
    approvals.publish_resume(approval)
    who = approval.decided_by or "the deadline"
    return ReplyDecision(
        approval.approval_id,
        "already_decided",
        f"already decided: {approval.decision or approval.status} by {who}",
    )


def _failed_authentication(email: Email) -> bool:
    """The receiving server (Gmail) found the From domain's DMARC check failing."""
    results = email.headers.get("authentication-results", "")
    return bool(re.search(r"\bdmarc=fail\b", results, re.IGNORECASE))


__all__ = [
    "REVIEW_MAILS",
    "REVIEW_THREADS",
    "ReplyDecision",
    "decide_by_reply",
    "parse_decision",
    "record_review_mail",
    "record_review_thread",
    "review_mail_of",
    "review_mail_path",
    "review_thread_path",
]

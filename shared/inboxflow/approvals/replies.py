"""Review decisions by email: a reviewer answers the review email instead of clicking.

When a reviewer email is sent, its stamp is drawn with the approval's id
(``review_mails.review_mail_fields``): the stamp is the random one in the email's
Message-ID (``<inboxflow.{stamp}@domain>``, drawn once per effect key: ``mail_stamps.py``;
nothing a customer sees lets them derive it), so a reply, whose
``In-Reply-To``/``References`` carry that id, leads back to the approval and the
reviewer it was sent to. Gmail may replace our Message-ID on a sent message;
then the reply carries Gmail's id, and the Gmail thread is what leads back: once
a review email is sent, its thread in the sending mailbox is kept as
``review_threads/{mailbox}:{thread_id}``.

``decide_by_reply`` decides only for a reply whose **authenticated** sender
(``mail/authentication.py``: one From address, vouched for by our receiving
server's Authentication-Results) is a reviewer of that approval, and only on a
first line that is exactly ``approve`` or ``accept`` (a full stop allowed) or
``reject: <comment>``, case-insensitive. The first line is read from the text
the reviewer wrote: quoted parts of an HTML reply (blockquotes, Gmail's and
Outlook's quote containers) are removed first (``mail/html_text.reply_text``),
and a plain-text line starting ``>`` is a quote. The decision goes through
``Decisions.decide_as``, the path every decision takes (first decision
wins, a decided approval answers 409), so a link click and a reply can never
both decide. Anything else changes nothing and says why: not authenticated, not
a reviewer of that approval, decided or past its deadline, or not understood;
a reviewer whose reply was not understood is told once (per approval round,
through the effect journal) how to answer, with a fresh link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..mail import Email
from ..mail.addresses import same_address
from ..mail.authentication import check_sender
from ..mail.html_text import reply_text
from .errors import AlreadyDecided, ApprovalError
from .review_mails import review_mail_of

if TYPE_CHECKING:
    from ..engine.waits import Approval
    from .service import ApprovalService

APPROVING = ("approve", "accept")
REJECTING = ("reject",)
_APPROVE = re.compile(r"(?:approve|accept)\.?", re.IGNORECASE)
_REJECT = re.compile(r"reject\s*:\s*(.*)", re.IGNORECASE)
HOW_TO_ANSWER = 'a first line that is exactly "approve" (or "accept") or "reject: <comment>"'

Outcome = Literal[
    "decided",
    "not_authenticated",
    "not_a_reviewer",
    "already_decided",
    "expired",
    "not_understood",
    "refused",
]
DECIDED_NOTHING: tuple[Outcome, ...] = (
    "not_authenticated",
    "not_a_reviewer",
    "not_understood",
    "refused",
)
"""Outcomes recorded as refused replies (``failures``): the reviewer can still use the link."""


def parse_decision(text: str) -> tuple[str, str | None] | None:
    """``("approve", None)`` or ``("reject", comment)`` from a reply's first non-blank line.

    The line must be exactly ``approve``/``accept`` (a full stop allowed) or
    ``reject: <comment>``, case-insensitive, surrounding whitespace ignored; a quoted
    line (``>``) or anything else is None.
    """
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if _APPROVE.fullmatch(first):
        return "approve", None
    rejected = _REJECT.fullmatch(first)
    if rejected:
        return "reject", rejected.group(1).strip() or None
    return None


def reply_first_text(email: Email) -> str:
    """The text the reviewer wrote: the HTML part without its quoted parts, else the plain text."""
    if email.body_html:
        return reply_text(email.body_html)
    return email.body_text


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


def decide_by_reply(
    approvals: ApprovalService, email: Email, authserv_id: str | None = None
) -> ReplyDecision | None:
    """Decide the approval ``email`` answers, if its authenticated sender may and its first line
    says how.

    Args:
        approvals: the approval service.
        email: the reply.
        authserv_id: the receiving server whose verdict authenticates the sender
            (default: the configured one).

    Returns:
        None when ``email`` answers no review email; else what it did.
    """
    mail = review_mail_of(approvals.store, email)
    if mail is None:
        return None
    approval_id = str(mail["approval_id"])
    approval = approvals.get(approval_id)
    if approval is None:
        return ReplyDecision(approval_id, "refused", "the approval no longer exists")
    checked = check_sender(email, authserv_id)
    if checked.address is None:
        return ReplyDecision(
            approval_id,
            "not_authenticated",
            f"the reply claims to be from {checked.claimed} but is not authenticated: "
            f"{checked.reason}",
        )
    sender = checked.address
    reviewer = next(
        (r for r in (*approval.reviewers, *approval.escalate_to) if same_address(r, sender)), None
    )
    if reviewer is None:
        return ReplyDecision(
            approval_id, "not_a_reviewer", f"{sender} is not a reviewer of this approval"
        )
    if approval.status != "pending":
        return _already(approvals, approval)
    if approvals.clock.now() >= approval.deadline:
        return ReplyDecision(approval_id, "expired", "the approval is past its deadline")
    parsed = parse_decision(reply_first_text(email))
    if parsed is None:
        return _not_understood(
            approvals, approval, reviewer, f"the reply does not start with {HOW_TO_ANSWER}"
        )
    wanted, comment = parsed
    values = approvals.decisions.kind(approval).values
    names = APPROVING if wanted == "approve" else REJECTING
    choice = next((value for value in names if value in values), None)
    if choice is None:
        return _not_understood(
            approvals,
            approval,
            reviewer,
            f"this review has no {wanted} choice (its choices: {', '.join(values)}): use the link",
        )
    try:
        approvals.decisions.decide_as(approval_id, reviewer, choice, comment=comment)
    except AlreadyDecided as exc:
        return _already(approvals, exc.approval)
    except ApprovalError as exc:
        if exc.status in (400, 413):  # e.g. a rejection without the comment the kind requires
            return _not_understood(approvals, approval, reviewer, exc.message)
        return ReplyDecision(approval_id, "refused", exc.message)
    return ReplyDecision(
        approval_id, "decided", f"{choice} by email reply", decision=choice, reviewer=reviewer
    )


def _not_understood(
    approvals: ApprovalService, approval: Approval, reviewer: str, reason: str
) -> ReplyDecision:
    """Nothing decided; the reviewer is told how to answer (once per approval round)."""
    from .pages import render_reply_help

    approvals.notifications.tell_reviewer(
        approval,
        reviewer,
        f"reply-help-{approval.round}-{reviewer}",
        lambda link: render_reply_help(approvals.view(approval, reviewer), link=link, why=reason),
    )
    return ReplyDecision(approval.approval_id, "not_understood", reason, reviewer=reviewer)


def _already(approvals: ApprovalService, approval: Approval) -> ReplyDecision:
    """Decided before; its resume is published again in case the run that decided died first
    (``publish_resume`` publishes only while the trace waits on the approval, and the runtime drops duplicates)."""
    approvals.decisions.publish_resume(approval)
    who = approval.decided_by or "the deadline"
    return ReplyDecision(
        approval.approval_id,
        "already_decided",
        f"already decided: {approval.decision or approval.status} by {who}",
    )


__all__ = [
    "DECIDED_NOTHING",
    "HOW_TO_ANSWER",
    "ReplyDecision",
    "decide_by_reply",
    "parse_decision",
    "reply_first_text",
]

"""The review emails we sent, by stamp and by Gmail thread: where a reviewer's reply leads back.

A reviewer email's stamp (the random one in its Message-ID,
``<inboxflow.{stamp}@domain>``, ``mail_stamps.py``) is drawn, before it is sent,
with the approval's id in the stamp's document (``review_mail_fields``): that one
document is how the email is stamped, found again after a crash, and answered. Before
it was a second document, ``review_mails/{stamp}``, written per email (one write more);
those of emails sent before are still read. Gmail may replace our Message-ID on a sent message; then the
Gmail thread is what leads back (``review_threads/{mailbox}:{thread_id}``,
``record_review_thread``). ``review_mail_of`` finds the review email a reply answers;
``replies.py`` decides by it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..mail_stamps import stamped
from ..schema import REVIEW_MAILS, REVIEW_THREADS

if TYPE_CHECKING:
    from ..engine.waits import Approval
    from ..mail import Email
    from ..ports.documents import DocumentStore

_OUR_MESSAGE_ID = re.compile(r"^inboxflow\.([0-9a-f]{32})@", re.IGNORECASE)


def review_mail_path(stamp: str) -> str:
    """Where the review email whose Message-ID carries ``stamp`` is recorded."""
    return REVIEW_MAILS.path(stamp.strip().lower())


def review_mail_fields(approval: Approval) -> dict[str, Any]:
    """What a review email's stamp is drawn with (``mail_stamps.stamp_for(about=...)``): the
    approval a reply to it answers (who may decide is the approval's to say)."""
    return {"approval_id": approval.approval_id}


def review_thread_path(mailbox: str, thread_id: str) -> str:
    """Where the review email sent from ``mailbox`` in Gmail thread ``thread_id`` is recorded."""
    return REVIEW_THREADS.path(f"{mailbox.strip().lower()}:{thread_id}")


def record_review_thread(
    store: DocumentStore,
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


def review_mail_of(store: DocumentStore, email: Email) -> dict[str, Any] | None:
    """The review email ``email`` answers, or None.

    By our Message-ID in its In-Reply-To/References first; Gmail may have given the
    sent review email a Message-ID of its own, so then by the Gmail thread the reply
    is in (the review email's thread in the mailbox that sent it).
    """
    for message_id in [email.in_reply_to or "", *reversed(email.references)]:
        match = _OUR_MESSAGE_ID.match(message_id.strip().strip("<>"))
        if match:
            stamp = match.group(1).lower()
            doc = stamped(store, stamp)
            if doc is None or not doc.get("approval_id"):  # a customer's mail, or sent before
                doc = store.get(REVIEW_MAILS.path(stamp))
            if doc is not None:
                return doc
    if email.thread_id and email.mailbox:
        return store.get(review_thread_path(email.mailbox, email.thread_id))
    return None

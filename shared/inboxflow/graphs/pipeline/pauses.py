"""The pipeline's pause kind: a reviewer approves, edits or rejects a drafted reply.

What approving does depends on the settings (``auto_send``): the pausing node
(``review``) puts it in the pause's context as ``on_approve`` (button text),
``approved`` (the result page's headline) and ``approved_detail``; the
defaults below describe the default, a Gmail draft.
"""

from __future__ import annotations

from ..kit import reply_approval_kind

SAVES_DRAFT = {
    "on_approve": "save as draft",
    "approved": "the reply is saved as a draft",
    "approved_detail": (
        "The reply below is saved in the mailbox's Gmail Drafts, in the email's thread. "
        "Nothing is sent until someone sends it from Gmail."
    ),
}
"""What approving does with ``auto_send`` off (the default)."""
SENDS = {
    "on_approve": "send",
    "approved": "the reply goes out",
    "approved_detail": "The reply below is sent now.",
}
"""What approving does with ``auto_send`` on."""

APPROVE_DRAFT_KIND = reply_approval_kind(
    "approve_draft",
    "Approve a reply",
    message_field="draft",
    approve_label="Approve and {on_approve}",
    approved="{approved}",
    approved_detail="{approved_detail}",
    rejected_detail="Nothing is sent. The email stays in the inbox.",
    description="approve / edit / reject the drafted reply before dispatch",
    notification="Approve reply to {sender}: {subject}",
    recipient_editable=True,
    defaults=SAVES_DRAFT,
)

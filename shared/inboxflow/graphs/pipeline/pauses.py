"""The pipeline's pause kind: a reviewer approves, edits or rejects a drafted reply.

What approving does depends on the settings (``auto_send``): the pausing node
(``review``) puts it in the pause's context as ``on_approve`` (button text),
``approved`` (the result page's headline) and ``approved_detail``; the
defaults below describe the default, a Gmail draft.
"""

from __future__ import annotations

from ...engine.pause_kinds import Choice, EditableField, PauseKind

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

APPROVE_DRAFT_KIND = PauseKind(
    "approve_draft",
    "Approve a reply",
    (
        Choice(
            "approve",
            "Approve and {on_approve}",
            "primary",
            ("Approved \N{EN DASH} {approved}", "{approved_detail}"),
            applies_edit=True,
        ),
        Choice(
            "reject",
            "Reject",
            "danger",
            ("Rejected", "Nothing is sent. The email stays in the inbox."),
        ),
    ),
    editable=(
        EditableField("to", "To", "address", max_chars=320, required=True),
        EditableField("subject", "Subject", "line", max_chars=998, required=True),
        EditableField("draft", "Message", "text", max_chars=20_000, required=True),
    ),
    description="approve / edit / reject the drafted reply before dispatch",
    defaults=SAVES_DRAFT,
    notification="Approve reply to {sender}: {subject}",
    payload_title="The reply",
    bulk_safe=True,
)

"""The pipeline's pause kind: a reviewer approves, edits or rejects a drafted reply."""

from __future__ import annotations

from ..pauses import Choice, EditableField, PauseKind

APPROVE_DRAFT_KIND = PauseKind(
    "approve_draft",
    "Approve a reply",
    (
        Choice(
            "approve",
            "Approve and send",
            "primary",
            ("Approved \N{EN DASH} the reply goes out", "The reply below is sent now."),
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
        EditableField("draft", "Reply", "text", max_chars=20_000, required=True),
        EditableField("to", "To", "address", max_chars=320, required=True),
        EditableField("subject", "Subject", "line", max_chars=998, required=True),
    ),
    description="approve / edit / reject the drafted reply before dispatch",
)

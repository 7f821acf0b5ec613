"""The support graph's pause kind: a reviewer approves, edits or rejects a suggested reply."""

from __future__ import annotations

from ...engine.pause_kinds import Choice, EditableField, PauseKind

APPROVE_SUPPORT_REPLY = PauseKind(
    "approve_support_reply",
    "Approve a support reply",
    (
        Choice(
            "approve",
            "Approve and send",
            "primary",
            ("Approved \N{EN DASH} the reply goes out", "The reply below is written once."),
            applies_edit=True,
        ),
        Choice(
            "reject",
            "Reject",
            "danger",
            ("Rejected", "Nothing is sent. The ticket stays active for the support team."),
        ),
    ),
    editable=(
        EditableField("subject", "Subject", "line", max_chars=998, required=True),
        EditableField("reply", "Message", "text", max_chars=20_000, required=True),
    ),
    description="approve / edit / reject a suggested support reply (not confident, or critical)",
    notification="Support reply to {sender}: {subject}",
    payload_title="The reply",
    bulk_safe=True,
)

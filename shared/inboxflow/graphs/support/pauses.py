"""The support graph's pause kind: a reviewer approves, edits or rejects a suggested reply."""

from __future__ import annotations

from ..kit import reply_approval_kind

APPROVE_SUPPORT_REPLY = reply_approval_kind(
    "approve_support_reply",
    "Approve a support reply",
    message_field="reply",
    approve_label="Approve and send",
    approved="the reply goes out",
    approved_detail="The reply below is written once.",
    rejected_detail="Nothing is sent. The ticket stays active for the support team.",
    description="approve / edit / reject a suggested support reply (not confident, or critical)",
    notification="Support reply to {sender}: {subject}",
)

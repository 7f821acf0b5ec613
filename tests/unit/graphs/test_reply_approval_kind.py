"""The reply approval kinds built by ``kit.reply_approval_kind`` store what was declared by hand."""

from __future__ import annotations

from inboxflow.engine.pause_kinds import Choice, EditableField, PauseKind
from inboxflow.graphs.pipeline.pauses import APPROVE_DRAFT_KIND, SAVES_DRAFT
from inboxflow.graphs.support.pauses import APPROVE_SUPPORT_REPLY

DECLARED_DRAFT = PauseKind(
    "approve_draft",
    "Approve a reply",
    (
        Choice(
            "approve",
            "Approve and {on_approve}",
            "primary",
            ("Approved \N{EN DASH} {approved}", "{approved_detail}"),
            applies_edit=True,
            comment="optional",
            comment_label="Note for future drafts (optional)",
        ),
        Choice(
            "reject",
            "Reject",
            "danger",
            ("Rejected", "Nothing is sent. The email stays in the inbox."),
            comment="optional",
            comment_label="What is wrong (future drafts never say it; optional)",
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
"""The pipeline's kind as it was declared before the builder (with the comments the drafts
learn from, graphs/reply_learning.py)."""

DECLARED_SUPPORT_REPLY = PauseKind(
    "approve_support_reply",
    "Approve a support reply",
    (
        Choice(
            "approve",
            "Approve and send",
            "primary",
            ("Approved \N{EN DASH} the reply goes out", "The reply below is written once."),
            applies_edit=True,
            comment="optional",
            comment_label="Note for future drafts (optional)",
        ),
        Choice(
            "reject",
            "Reject",
            "danger",
            ("Rejected", "Nothing is sent. The ticket stays active for the support team."),
            comment="optional",
            comment_label="What is wrong (future drafts never say it; optional)",
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
"""The support graph's kind as it was declared before the builder."""


def test_the_pipeline_kind_is_unchanged() -> None:
    assert APPROVE_DRAFT_KIND == DECLARED_DRAFT
    assert [f.name for f in APPROVE_DRAFT_KIND.editable] == ["to", "subject", "draft"]


def test_the_support_kind_is_unchanged() -> None:
    assert APPROVE_SUPPORT_REPLY == DECLARED_SUPPORT_REPLY
    assert [f.name for f in APPROVE_SUPPORT_REPLY.editable] == ["subject", "reply"]
    assert dict(APPROVE_SUPPORT_REPLY.defaults) == {}

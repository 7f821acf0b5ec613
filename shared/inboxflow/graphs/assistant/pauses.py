"""The assistant's pause kinds: ``notify`` (should I answer this?) and ``tool_review``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine.pause_kinds import Choice, EditableField, PauseKind

NOTIFY_KIND = PauseKind(
    "notify",
    "An email you may want to answer",
    (
        Choice(
            "respond",
            "Respond",
            "primary",
            ("Responding", "The assistant drafts an answer; you review each action."),
            comment="optional",
            comment_label="Instruction for the assistant (optional)",
        ),
        Choice("ignore", "Ignore", "danger", ("Ignored", "Nothing is done with this email.")),
    ),
    description="the owner decides whether the assistant answers an email",
    notification="Email from {sender}: {subject}",
    payload_title="The email",
    bulk_safe=True,
)
"""Triage was not sure: the owner chooses respond (with an optional instruction) or ignore."""

TOOL_REVIEW_KIND = PauseKind(
    "tool_review",
    "Review the assistant's {tool}",
    (
        Choice(
            "accept",
            "{accept_label}",
            "primary",
            ("Accepted", "The assistant runs it as shown."),
        ),
        Choice(
            "edit",
            "{edit_label}",
            "primary",
            ("{edit_outcome}", "{edit_detail}"),
            applies_edit=True,
        ),
        Choice(
            "ignore",
            "Ignore",
            "danger",
            ("Ignored", "It is not run."),
        ),
        Choice(
            "respond",
            "Send feedback",
            outcome=("Sent back", "The assistant tries again with your feedback."),
            comment="required",
            comment_label="Feedback (or your answer to its question)",
        ),
    ),
    editable=(
        EditableField("to", "To", "address", max_chars=320),
        EditableField("subject", "Subject", "line", max_chars=998),
        EditableField("content", "Message", "text", max_chars=20_000),
        EditableField("attendees", "Attendees", "addresses", max_chars=2000),
        EditableField("preferred_day", "Day (YYYY-MM-DD)", "line", max_chars=10),
        EditableField("start_time", "Start (HH:MM, your time zone)", "line", max_chars=5),
        EditableField("duration_minutes", "Duration (minutes)", "line", max_chars=3),
        EditableField("answer", "Your answer", "text", max_chars=4000),
    ),
    description="accept / edit / ignore / respond to a tool call of the assistant",
    defaults={
        "tool": "action",
        "accept_label": "Accept",
        "edit_label": "Run with my edits",
        "edit_outcome": "Edited",
        "edit_detail": "The assistant runs it with your edits and remembers them.",
    },
    notification="Review {tool} for: {subject}",
    payload_title="The action",
)
"""A reviewed tool call (``write_email``, ``schedule_meeting``, ``Question``).

The page edits only the fields in the payload: a ``Question`` carries ``question``
(shown) and ``answer`` (the owner's text answer, sent back to the model as the
tool's result); its context relabels the buttons (``QUESTION_LABELS``)."""

QUESTION_LABELS = {
    "accept_label": "Skip (no answer)",
    "edit_label": "Send my answer",
    "edit_outcome": "Answered",
    "edit_detail": "The assistant continues with your answer.",
}
"""How a ``Question`` review names its buttons (pause context values)."""


def pause_context(email: Mapping[str, Any], reasons: list[str], **extra: Any) -> dict[str, Any]:
    """What the review page shows beside the decision: the email, and why the owner is asked."""
    return {
        "sender": email["sender"]["address"],
        "mailbox": str(email.get("mailbox") or ""),
        "subject": email.get("subject", ""),
        "received_at": str(email.get("received_at", "")),
        "email_text": str(email.get("body_text", ""))[:4000],
        "reasons": reasons,
        **extra,
    }

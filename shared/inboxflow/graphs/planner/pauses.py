"""The planner's pause kinds: ``agency_review`` (the agency decides on a plan) and
``customer_reply`` (the customer answers in the thread; ingest resumes it).

A plan that emails the customer (``ask_customer``) shows the email as a ``draft`` field:
the agency's edit of it (greeting, sign-off, facts) or its comment teaches the drafts
(:mod:`..reply_learning`); the email itself is always written from the inputs."""

from __future__ import annotations

from ...engine.pause_kinds import Choice, EditableField, PauseKind

AGENCY_REVIEW = PauseKind(
    "agency_review",
    "Review the planned {tool}",
    (
        Choice(
            "approve",
            "Approve and run",
            "primary",
            ("Approved", "The assistant runs exactly these inputs."),
        ),
        Choice(
            "edit",
            "Replan with my edits",
            "neutral",
            ("Sent back with your edits", "The assistant replans from your edited inputs."),
            applies_edit=True,
            comment="optional",
            comment_label="Note for the assistant (optional)",
        ),
        Choice(
            "reject",
            "Reject",
            "danger",
            ("Rejected", "The assistant replans from your comment."),
            comment="required",
            comment_label="What is wrong (the assistant replans from it)",
        ),
    ),
    editable=(
        EditableField("inputs", "Planned inputs (JSON)", "text", max_chars=8000, required=True),
        EditableField("draft", "The email to the customer", "text", max_chars=20_000),
    ),
    description="approve / edit the inputs / reject with a comment the planner's next action",
    defaults={"tool": "action"},
    notification="Review the planned {tool} for: {subject}",
    payload_title="The planned action",
    demo_choice="approve",
)

CUSTOMER_REPLY = PauseKind(
    "customer_reply",
    "Waiting for the customer's reply",
    (
        Choice("reply", "The customer replied", "primary", ("Replied", "The planner goes on.")),
        Choice(
            "no_reply",
            "No reply yet",
            "danger",
            ("No reply", "The customer is reminded, then the trace needs review."),
        ),
    ),
    waits_for="customer",
    description="the customer answers the question in the thread (ingest resumes); "
    "a reminder after N days, needs_review after M",
    payload_title="What the customer was asked",
)

"""The support graph's line in ``inboxflow traces``."""

from __future__ import annotations

from ...engine.graph import TraceSummary
from ...ports.checkpoint import Checkpoint


def summary(checkpoint: Checkpoint) -> TraceSummary:
    """``{customer_id}:{ticket_id} urgency/type`` and the reply or why it ended."""
    state = checkpoint.state
    ticket = state.get("ticket") or {}
    supervision = state.get("supervision") or {}
    triage = state.get("triage") or {}
    label = (
        f"{ticket.get('customer_id')}:{ticket.get('ticket_id')}"
        f" {supervision.get('urgency', '-')}/{supervision.get('issue_type', '-')}"
        if ticket
        else "-"
    )
    return TraceSummary(
        label=label,
        confidence=triage.get("confidence"),
        preview=state.get("end_reason") or triage.get("suggested_response") or "",
    )

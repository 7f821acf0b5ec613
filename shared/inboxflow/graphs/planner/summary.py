"""The planner's line in ``inboxflow traces``."""

from __future__ import annotations

from ...engine.graph import TraceSummary
from ...ports.checkpoint import Checkpoint


def summary(checkpoint: Checkpoint) -> TraceSummary:
    """``quote_id: premium`` (or what the planner does now) and its last note."""
    state = checkpoint.state
    quote = state.get("quote_session") or {}
    rate = quote.get("rate") or {}
    plan = state.get("planned_tool_inputs") or {}
    if rate:
        label = f"{quote.get('quote_id')}: ${rate['annual_premium_cents'] / 100:,.2f}/yr"
    elif state.get("awaiting_customer_reply"):
        label = "waiting for the customer"
    elif plan:
        label = f"plan: {plan.get('tool_name')}"
    else:
        label = str(quote.get("quote_id") or "-")
    notes = (state.get("agent_scratchpad") or {}).get("notes") or []
    return TraceSummary(
        label=label, preview=state.get("end_reason") or (notes[-1] if notes else "")
    )

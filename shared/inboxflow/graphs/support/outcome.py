"""The support desk's judgment on a trace, as ``inboxflow eval`` reads it (``Graph.outcome``)."""

from __future__ import annotations

from typing import Any

from ...ports.checkpoint import Checkpoint
from .pauses import APPROVE_SUPPORT_REPLY

FIELDS = (
    "language",
    "urgency",
    "issue_type",
    "action",
    "ticket",
    "customer_known",
    "queue",
    "confidence",
)
"""``language`` detected (ISO 639-1); the supervisor's ``urgency`` and ``issue_type``;
``action``: ``auto_respond`` (answered without a person), ``review`` (a reviewer approves
the reply), ``escalate`` or ``queue`` (a specialist queue takes the ticket); ``ticket``:
``new``, ``continued`` (a reply in its thread, or the matcher's match) or ``reopened`` (a
reply in the thread of a completed ticket, which took it up again); ``customer_known`` to the CRM; ``queue`` assigned; the triage's ``confidence``."""

_ACTIONS = {"escalate_human": "escalate", "route_specialist": "queue"}


def outcome(checkpoint: Checkpoint) -> dict[str, Any]:
    """The support desk's fields of ``checkpoint`` (None where the trace did not get that far)."""
    state = checkpoint.state
    translation = state.get("translation") or {}
    supervision = state.get("supervision") or {}
    triage = state.get("triage") or {}
    act = state.get("act") or {}
    ticket = state.get("ticket") or {}
    recommended = act.get("action") or triage.get("recommended_action")
    action = _ACTIONS.get(str(recommended), recommended)
    if act.get("status") == "escalated":
        action = "escalate"
    elif action == "auto_respond":
        waiting = (checkpoint.pause or {}).get("kind") == APPROVE_SUPPORT_REPLY.name
        if waiting or act.get("approved_by"):
            action = "review"
    how = ticket.get("how")
    return {
        "language": translation.get("original_language"),
        "urgency": supervision.get("urgency") or triage.get("urgency"),
        "issue_type": supervision.get("issue_type")
        or (triage.get("extracted_info") or {}).get("issue_type"),
        "action": action,
        "ticket": None if how is None else how if how in ("new", "reopened") else "continued",
        "customer_known": state.get("customer_known") if state.get("customer") else None,
        "queue": act.get("queue"),
        "confidence": triage.get("confidence"),
    }

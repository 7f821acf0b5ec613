"""The agent graph's judgment on a trace, as ``inboxflow eval`` reads it (``Graph.outcome``)."""

from __future__ import annotations

from typing import Any

from ...ports.checkpoint import Checkpoint

FIELDS = ("run_status", "tools", "escalated", "reservations")
"""``run_status`` of the loop (``completed``, ``escalated``, ``max_iterations``, ``error``,
``running``); ``tools`` called, in first-call order (a call waiting for review included);
``escalated``; ``reservations``: the drugs reserved (active reservations the run created)."""


def outcome(checkpoint: Checkpoint) -> dict[str, Any]:
    """The agent's fields of ``checkpoint``."""
    state = checkpoint.state
    log = state.get("tool_log") or []
    called = [str(entry.get("tool")) for entry in log]
    called += [str(call.get("name")) for call in state.get("pending_calls") or []]
    reservations = [
        str(entry["result"].get("drug"))
        for entry in log
        if entry.get("tool") == "manage_reservation"
        and (entry.get("arguments") or {}).get("action") == "create"
        and isinstance(entry.get("result"), dict)
        and entry["result"].get("status") == "active"
    ]
    fields: dict[str, Any] = {
        "run_status": state.get("status"),
        "tools": list(dict.fromkeys(called)),
        "escalated": state.get("status") == "escalated" or bool(state.get("escalation")),
        "reservations": reservations,
    }
    reason = state.get("escalation") or state.get("error")
    if reason:
        fields["end_reason"] = reason
    return fields

"""The planner's judgment on a trace, as ``inboxflow eval`` reads it (``Graph.outcome``)."""

from __future__ import annotations

from typing import Any

from ...ports.checkpoint import Checkpoint

FIELDS = ("action", "asked", "quote")
"""``action``: the last action planned (a tool name: ``ask_customer``, ``get_rate``,
``prepare_final_summary``...; the one waiting for review, if any, else the last one run);
``asked``: the fields the last question asked for (as ``action``: the question waiting for
the agency's review, if any, else the last one sent to the customer); ``quote``:
``none`` (not opened), ``open``, ``rated`` or ``sent`` (the summary reached the customer)."""


def outcome(checkpoint: Checkpoint) -> dict[str, Any]:
    """The planner's fields of ``checkpoint``."""
    state = checkpoint.state
    planned = state.get("planned_tool_inputs") or {}
    last = state.get("last_tool_outputs") or {}
    session = state.get("quote_session") or {}
    if not session:
        quote = "none"
    elif last.get("tool") == "prepare_final_summary" and last.get("status") == "success":
        quote = "sent"
    elif session.get("rate"):
        quote = "rated"
    else:
        quote = "open"
    sent = list((state.get("agent_scratchpad") or {}).get("asked") or [])
    waiting = planned.get("args") if planned.get("tool_name") == "ask_customer" else None
    return {
        "action": planned.get("tool_name") or last.get("tool"),
        "asked": list((waiting or {}).get("fields") or []) if waiting is not None else sent,
        "quote": quote,
    }

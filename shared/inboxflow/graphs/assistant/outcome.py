"""The assistant's judgment on a trace, as ``inboxflow eval`` reads it (``Graph.outcome``)."""

from __future__ import annotations

from typing import Any

from ...ports.checkpoint import Checkpoint

FIELDS = ("triage", "tools")
"""``triage``: ``ignore``, ``notify`` or ``respond``; ``tools`` the assistant called or
proposed (a call waiting for Alex's review included), in first-call order."""


def outcome(checkpoint: Checkpoint) -> dict[str, Any]:
    """The assistant's fields of ``checkpoint``."""
    state = checkpoint.state
    called = [str(entry.get("tool")) for entry in state.get("tool_log") or []]
    called += [str(call.get("name")) for call in state.get("pending_calls") or []]
    fields: dict[str, Any] = {
        "triage": state.get("classification"),
        "tools": list(dict.fromkeys(called)),
    }
    if state.get("error"):
        fields["end_reason"] = state["error"]
    return fields

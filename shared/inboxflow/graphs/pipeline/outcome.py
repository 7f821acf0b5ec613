"""The pipeline's judgment on a trace, as ``inboxflow eval`` reads it (``Graph.outcome``)."""

from __future__ import annotations

from typing import Any

from ...ports.checkpoint import Checkpoint

FIELDS = ("category", "confidence", "tools", "tone")
"""``category`` and ``confidence`` of the classification; ``tools`` the decide node chose;
``tone`` of the draft. A reply dispatch refused for loop protection sets ``loop_protected``."""


def outcome(checkpoint: Checkpoint) -> dict[str, Any]:
    """The pipeline's fields of ``checkpoint`` (None where the trace did not get that far)."""
    state = checkpoint.state
    classification = state.get("classification") or {}
    draft = state.get("draft") or {}
    fields: dict[str, Any] = {
        "category": classification.get("category"),
        "confidence": classification.get("confidence"),
        "tools": list(dict.fromkeys(str(t.get("name")) for t in state.get("tool_plan") or [])),
        "tone": draft.get("tone"),
    }
    if (state.get("dispatch") or {}).get("status") == "refused":
        fields["loop_protected"] = True
    return fields

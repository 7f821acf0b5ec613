"""The assistant's line in ``inboxflow traces``."""

from __future__ import annotations

from ...engine.graph import TraceSummary
from ...ports.checkpoint import Checkpoint


def summary(checkpoint: Checkpoint) -> TraceSummary:
    """``classification: status`` and the last email written."""
    state = checkpoint.state
    label = f"{state.get('classification') or '?'}: {state.get('status', '?')}"
    written = [
        str(entry.get("arguments", {}).get("content", ""))
        for entry in state.get("tool_log") or []
        if entry.get("tool") == "write_email" and entry.get("result", {}).get("sent")
    ]
    return TraceSummary(label=label, preview=written[-1] if written else state.get("reasoning", ""))

"""How the agent graph starts a trace from an email, and how a trace reads in the CLI table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine.graph import StartContext, TraceSummary
from ...ports.checkpoint import Checkpoint
from .profiles import snapshot


def initial_state(email: Mapping[str, Any], start: StartContext) -> Mapping[str, Any]:
    """The email, and the profile the route names (snapshotted from ``inboxflow.yaml``)."""
    return {
        "email": dict(email),
        "profile": snapshot(start.profile, start.config).model_dump(),
        "rule": start.rule,
    }


def summary(checkpoint: Checkpoint) -> TraceSummary:
    """``profile: status (N turns)`` and the reply written (or the final message)."""
    state = checkpoint.state
    profile = (state.get("profile") or {}).get("name", "?")
    turns = state.get("iteration", 0)
    label = f"{profile}: {state.get('status', '?')} ({turns} turns)"
    reply = state.get("reply") or {}
    drafted = next(
        (
            str(entry.get("arguments", {}).get("body", ""))
            for entry in state.get("tool_log") or []
            if entry.get("tool") in ("create_draft", "send_reply")
            and "error" not in entry.get("result", {})
        ),
        "",
    )
    preview = (f"to {reply.get('to')}: " if reply else "") + (
        drafted or state.get("final_message") or ""
    )
    return TraceSummary(label=label, preview=preview)

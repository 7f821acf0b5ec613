"""How the pipeline starts a trace from an email, and how a trace reads in the CLI table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine.graph import StartContext, TraceSummary
from ...ports.checkpoint import Checkpoint


def initial_state(email: Mapping[str, Any], start: StartContext) -> Mapping[str, Any]:
    """The pipeline's first state: the email, nothing else."""
    return {"email": dict(email)}


def summary(checkpoint: Checkpoint) -> TraceSummary:
    """Category and confidence of the classification; why it ended unanswered, or the draft."""
    state = checkpoint.state
    classification = state.get("classification") or {}
    draft = (state.get("draft") or {}).get("body")
    if checkpoint.pause:
        draft = (checkpoint.pause.get("payload") or {}).get("draft") or draft
    return TraceSummary(
        label=classification.get("category", "-"),
        confidence=classification.get("confidence"),
        preview=state.get("end_reason") or draft or "",
    )

"""The agent graph's guard: what a profile always hands to a person, whatever the model answers.

``escalation_cues`` is declared on ``agent_turn`` (the step that carries the
model's judgment, before any tool runs). A profile lists in ``escalate_on``
what it never lets the model handle (``inboxflow.yaml``; the pharmacy's:
``[medical_advice, complaint]``); when the inquiry carries such a cue
(``cues/<lang>.toml``) and the model proposes anything but ``escalate`` (a stock
search, a reservation, a draft, a final answer), the guard replaces the turn:
the run ends ``escalated`` before any tool runs, ``finish`` tells the
profile's reviewers, and the trace waits in ``needs_review``.
"""

from __future__ import annotations

from ...engine.context import NodeContext
from ...engine.guards import Verdict
from ...engine.step import Step
from .cues import cues
from .state import AgentState

WHAT: dict[str, str] = {
    "medical_advice": "a medical question for a pharmacist",
    "complaint": "a complaint",
}


def escalation_cue(kind: str, text: str) -> str | None:
    """The cue of ``kind`` (``medical_advice`` or ``complaint``) ``text`` holds, or None."""
    if kind == "medical_advice":
        found = cues("medical_advice").find(text)
        if found:
            return f'"{found[0].text}" ({found[0].cue.label})'
        child, use = cues("child").find(text), cues("child_use").find(text)
        if child and use:
            return f'a child ("{child[0].text}") and "{use[0].text}" ({child[0].cue.label})'
        return None
    found = cues("complaint").find(text) if kind == "complaint" else []
    return f'"{found[0].text}" ({found[0].cue.label})' if found else None


def _only_escalates(step: Step) -> bool:
    calls = step.update.get("pending_calls") or []
    return bool(calls) and all(call.get("name") == "escalate" for call in calls)


def escalation_cues(state: AgentState, step: Step, ctx: NodeContext) -> Verdict | None:
    """Escalate an inquiry of a kind the profile declares, before the model's tools run."""
    inquiry = state.inquiry
    if inquiry is None or not state.profile.escalate_on or _only_escalates(step):
        return None
    if step.update.get("status") in ("escalated", "error", "max_iterations"):
        return None
    text = f"{inquiry.subject}\n{inquiry.text}"
    for kind in state.profile.escalate_on:
        cue = escalation_cue(kind, text)
        if cue is None:
            continue
        reason = f"{WHAT.get(kind, kind)}: {cue}"
        proposed = [str(call.get("name")) for call in step.update.get("pending_calls") or []]
        said = f"the model proposed {', '.join(proposed)}" if proposed else "the model answered"
        update = {
            "status": "escalated",
            "escalation": f"{reason} (escalate_on: {kind})",
            "pending_calls": [],
            "iteration": step.update.get("iteration", state.iteration),
        }
        return Verdict(Step(update=update, goto="finish"), f"{reason}: {said} -> escalated")
    return None


__all__ = ["WHAT", "escalation_cue", "escalation_cues"]

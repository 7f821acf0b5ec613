"""The agent graph's guards: what a profile always hands to a person, whatever the model answers.

``safety_screen`` is declared on ``preprocess``: the safety screen (:mod:`..screen`)
reads the inquiry (the patient's own words in a helpdesk notification) once.

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

from typing import Any

from ...engine.context import NodeContext
from ...engine.guards import Verdict
from ...engine.step import Step
from ..screen import FLOORS, ScreenReport, screened
from ..word_data import cue_languages
from .cues import cues
from .state import AgentState, Inquiry

WHAT: dict[str, str] = {
    "medical_advice": "a medical question for a pharmacist",
    "complaint": "a complaint",
}

SCREENED_AS: dict[str, tuple[str, ...]] = {
    "medical_advice": ("medical",),
    "complaint": ("complaint", "legal_threat"),
}
"""The screen's kinds each ``escalate_on`` entry covers."""
ALWAYS_ESCALATED = ("harm", "fraud", "security_incident", "data_loss", "legal_threat")
"""Screen findings every profile hands to a person, whatever it declares."""


def safety_screen(state: AgentState, step: Step, ctx: NodeContext) -> Verdict | None:
    """Preprocess's guard: the screen reads the inquiry (else the email) once."""
    inquiry = step.update.get("inquiry")
    if isinstance(inquiry, dict):
        inquiry = Inquiry.model_validate(inquiry)
    if isinstance(inquiry, Inquiry) and inquiry.text:
        read = {"sender": inquiry.sender_email, "subject": inquiry.subject, "text": inquiry.text}
    else:
        email: dict[str, Any] = state.email
        sender = email.get("sender") or {}
        read = {
            "sender": str(sender.get("address", "")),
            "subject": str(email.get("subject", "")),
            "text": str(email.get("body_text", "")),
        }
    return screened(step, ctx, read, cue_languages(f"{__package__}.cues"), state.screen)


def screen_escalation(report: ScreenReport | None, escalate_on: tuple[str, ...]) -> str | None:
    """Why the screen's report hands the inquiry to a person, or None."""
    if report is None:
        return None
    if report.needs_person:
        return report.explain()
    kinds = {kind for entry in escalate_on for kind in SCREENED_AS.get(entry, (entry,))}
    finding = report.first(kinds | set(ALWAYS_ESCALATED))
    if finding is None:
        return None
    return f"{FLOORS[finding.kind]}: {report.explain([finding.kind])}"


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
    """Escalate an inquiry of a kind the profile declares (its cues, or the screen's finding),
    or one the screen found risky or could not read, before the model's tools run."""
    inquiry = state.inquiry
    if inquiry is None or _only_escalates(step):
        return None
    if step.update.get("status") in ("escalated", "error", "max_iterations"):
        return None
    text = f"{inquiry.subject}\n{inquiry.text}\n{inquiry.note}"  # a forwarder's note too
    found = [
        (kind, f"{WHAT.get(kind, kind)}: {cue}")
        for kind in state.profile.escalate_on
        if (cue := escalation_cue(kind, text)) is not None
    ]
    screen = screen_escalation(state.screen, tuple(state.profile.escalate_on))
    if screen is not None:
        found.append(("screen", screen))
    if not found:
        return None
    kind, reason = found[0]
    proposed = [str(call.get("name")) for call in step.update.get("pending_calls") or []]
    said = f"the model proposed {', '.join(proposed)}" if proposed else "the model answered"
    update = {
        "status": "escalated",
        "escalation": reason if kind == "screen" else f"{reason} (escalate_on: {kind})",
        "pending_calls": [],
        "iteration": step.update.get("iteration", state.iteration),
    }
    return Verdict(Step(update=update, goto="finish"), f"{reason}: {said} -> escalated")


__all__ = [
    "ALWAYS_ESCALATED",
    "SCREENED_AS",
    "WHAT",
    "escalation_cue",
    "escalation_cues",
    "safety_screen",
    "screen_escalation",
]

"""The support desk's guards: promises of the product that hold whatever the model answers.

| guard                | node                            | rule |
|----------------------|---------------------------------|------|
| ``urgency_rules``    | supervisor                      | the seed's urgency rules over the model's urgency, raised to the desk's floor (:mod:`.urgency`); the specialist the signals name |
| ``escalate_at_once`` | supervisor                      | a security concern, an enterprise outage or data loss, or a demand for a manager or legal steps goes to a person at once (``escalate``) |
| ``reply_needs_person`` | billing, technical, general   | no reply goes out without a person when the message holds a demand (manager, refund, compensation, legal steps, cancelling), a complaint or negative sentiment, a security, outage, data-loss or billing-error signal, when the sender may not be the customer, when the ticket was reopened (the answer did not do), or when no cited knowledge-base article is relevant enough (``RELEVANCE_FLOOR``) |

Signals are read from the subject, the customer's original messages and their
translation by the cue lists of every language (:mod:`.signals`), joined with the
signals the model reports. Each guard says in its reason which cue or rule fired.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ...engine.guards import Verdict
from ...engine.step import Step
from ..screen import FLOORS, screened
from ..word_data import cue_languages
from .signals import SIGNALS, Hit, find_cues
from .state import SupportState
from .tasks import IssueType, Supervision, TriageResult, Urgency
from .urgency import enforce_rules, escalation_rule, floor_urgency, raise_to, signal_issue_type

if TYPE_CHECKING:
    from ...engine.context import NodeContext

RELEVANCE_FLOOR = 0.35
"""Least relevance (cosine similarity of the best chunk of a cited article to the message)
for a reply to go out without a person. Measured with ``bench/support_kb_relevance.py``
(the offline embedder, the sample knowledge base, the 25 non-loop support cases of
``evals/`` and the 7 support samples): the nearest article of another topic scored
0.03-0.25 (es how-to 0.03, outages 0.07-0.25, the 20-seat invoice 0.25), the right topic
without the answer 0.27-0.40, articles that answer the question 0.46-0.56 (PDF export
0.56, SAML SSO 0.49, failing scheduled exports 0.46). 0.35 sits above every wrong topic
with a margin of 0.1; what lies between needs a person, and the offline model's own
confidence (``offline.answer_confidence``) reaches the auto-respond bar only from 0.40."""
M = TypeVar("M", bound=BaseModel)

NEVER_ALONE = frozenset({"security", "outage", "data_loss", "billing_error"})
"""Signals a reply never answers without a person."""

SCREEN_ESCALATES: dict[str, Urgency] = {
    "security_incident": "critical",
    "data_loss": "critical",
    "legal_threat": "high",
    "harm": "high",
}
"""Screen findings that send the ticket to a person at once, and the least urgency of each."""


def safety_screen(state: SupportState, step: Step, ctx: NodeContext) -> Verdict | None:
    """Intake's guard: the safety screen reads the customer's email once (:mod:`..screen`)."""
    languages = cue_languages(f"{__package__}.cues")
    return screened(step, ctx, state.email, languages, state.screen)


def screen_floor(state: SupportState, step: Step, ctx: NodeContext) -> Verdict | None:
    """A security incident or data loss the screen found is critical and escalated; a legal
    threat or harm is escalated at least high, whatever the supervisor answered."""
    proposed = _proposed(step, "supervision", Supervision)
    report = state.screen
    if proposed is None or report is None:
        return None
    finding = report.first(SCREEN_ESCALATES)
    if finding is None:
        return None
    urgency = raise_to(proposed.urgency, SCREEN_ESCALATES[finding.kind])
    if step.goto == "escalate" and proposed.requires_escalation and urgency == proposed.urgency:
        return None
    supervision = proposed.model_copy(update={"urgency": urgency, "requires_escalation": True})
    changes = f"urgency {proposed.urgency} -> {urgency}; " if urgency != proposed.urgency else ""
    reason = f"{changes}{step.goto} -> escalate ({FLOORS[finding.kind]}); {report.explain(SCREEN_ESCALATES)}"
    update = {**step.update, "supervision": supervision}
    return Verdict(replace(step, update=update, goto="escalate"), reason)


def _proposed(step: Step, field: str, model: type[M]) -> M | None:
    value = step.update.get(field)
    if value is None or isinstance(value, model):
        return value
    return model.model_validate(value)


def message_texts(state: SupportState) -> list[str]:
    """What the rules read: the subject, the original messages and their translation."""
    translation = state.translation
    texts = [state.email.subject]
    if translation is not None:
        texts += translation.original_messages + translation.translated_messages
    else:
        texts.append(state.email.body_text)
    return texts


def _cue_note(cues: dict[str, Hit], signals: set[str]) -> str:
    shown = [str(cues[s]) for s in sorted(signals) if s in cues]
    return "; ".join(shown) if shown else "signals the model reported"


def urgency_rules(state: SupportState, step: Step, ctx: NodeContext) -> Verdict | None:
    """The seed's urgency rules and the desk's floor over the supervisor's answer; the
    specialist the signals name."""
    proposed = _proposed(step, "supervision", Supervision)
    if proposed is None or state.customer is None:
        return None
    plan = state.customer.plan
    cues = find_cues(*message_texts(state))
    signals = set(proposed.signals) | (cues.keys() & set(SIGNALS))
    ruled = enforce_rules(proposed.model_copy(update={"signals": sorted(signals)}), plan, "")
    changes: list[str] = []
    shown = (
        set(signals) if proposed.urgency != ruled.urgency or floor_urgency(plan, signals) else set()
    )
    urgency = ruled.urgency
    floor = floor_urgency(plan, signals)
    if floor is not None and raise_to(urgency, floor[0]) != urgency:
        urgency = floor[0]
    if urgency != proposed.urgency:
        why = floor[1] if floor is not None and floor[0] == urgency else ruled.reasoning
        changes.append(f"urgency {proposed.urgency} -> {urgency} ({why.strip()})")
    named = signal_issue_type(signals, cues.keys())
    issue_type: IssueType = proposed.issue_type
    from_signal = signal_issue_type(signals) is not None
    if named is not None and named != issue_type and (from_signal or issue_type == "general"):
        changes.append(f"issue type {issue_type} -> {named}")
        issue_type = named
        if not from_signal:
            shown.add(f"{named}_topic")
    if not changes:
        return None
    reasoning = f"{proposed.reasoning} [rules: {'; '.join(changes)}]".strip()
    supervision = proposed.model_copy(
        update={
            "urgency": urgency,
            "issue_type": issue_type,
            "signals": sorted(signals),
            "reasoning": reasoning,
        }
    )
    goto = "escalate" if supervision.requires_escalation else issue_type
    if urgency == proposed.urgency:
        shown &= {"billing_error", "security", "outage", "data_loss", "service_disruption"} | {
            f"{named}_topic"
        }
    reason = f"{'; '.join(changes)}; from {_cue_note(cues, shown)}"
    return Verdict(
        replace(step, update={**step.update, "supervision": supervision}, goto=goto), reason
    )


def escalate_at_once(state: SupportState, step: Step, ctx: NodeContext) -> Verdict | None:
    """A security concern, or an enterprise outage or data loss, goes to a person at once."""
    proposed = _proposed(step, "supervision", Supervision)
    if proposed is None or state.customer is None:
        return None
    if step.goto == "escalate":
        return None
    cues = find_cues(*message_texts(state), kinds=(*SIGNALS, "escalation_demand"))
    signals = set(proposed.signals) | (cues.keys() & set(SIGNALS))
    why = escalation_rule(state.customer.plan, signals)
    if why is None and "escalation_demand" in cues:
        why = "a demand for a manager or legal steps goes to a person at once"
        signals.add("escalation_demand")
    if why is None:
        return None
    signals.discard("escalation_demand")
    supervision = proposed.model_copy(
        update={"requires_escalation": True, "signals": sorted(signals)}
    )
    shown = signals | ({"escalation_demand"} & cues.keys())
    reason = f"{why}: {step.goto} -> escalate; from {_cue_note(cues, shown)}"
    update = {**step.update, "supervision": supervision}
    return Verdict(replace(step, update=update, goto="escalate"), reason)


def review_reasons(
    state: SupportState, triage: TriageResult, relevance: dict[str, Any]
) -> list[str]:
    """Why a person must approve ``triage``'s reply before it goes out (empty: none)."""
    reasons: list[str] = []
    cues = find_cues(*message_texts(state))
    for kind in ("escalation_demand", "demand", "complaint"):
        if kind in cues:
            reasons.append(f"a {kind.replace('_', ' ')}: {cues[kind]}")
    if triage.extracted_info.sentiment == "negative" and "complaint" not in cues:
        reasons.append("the specialist read the sentiment as negative")
    supervised = set(state.supervision.signals) if state.supervision else set()
    signals = (supervised | set(cues)) & NEVER_ALONE
    for signal in sorted(signals):
        hit = cues.get(signal)
        reasons.append(f"a {signal} signal: {hit}" if hit else f"a {signal} signal (the model)")
    screen = state.screen
    if screen is not None and (screen.needs_person or screen.findings):
        reasons.append(screen.explain())
    if state.sender is not None:
        reasons.extend(state.sender.concerns())
    if state.ticket is not None and state.ticket.how == "reopened":
        reasons.append("the customer wrote again after the ticket was answered (reopened)")
    cited = [s for s in triage.relevant_articles if s in relevance]
    best = max((float(relevance[s]) for s in cited), default=0.0)
    if best < RELEVANCE_FLOOR:
        what = "no cited article" if not cited else f"the best cited article ({best:.2f})"
        reasons.append(
            f"{what} is not relevant enough to answer alone (needs {RELEVANCE_FLOOR:.2f})"
        )
    return reasons


def reply_needs_person(state: SupportState, step: Step, ctx: NodeContext) -> Verdict | None:
    """No reply goes out without a person on a demand, a complaint, a serious signal, a
    doubtful sender or an answer no relevant article backs."""
    triage = _proposed(step, "triage", TriageResult)
    if triage is None or triage.recommended_action != "auto_respond":
        return None
    relevance = step.update.get("kb_relevance") or {}
    reasons = review_reasons(state, triage, relevance)
    if not reasons:
        return None
    update = {**step.update, "review_reasons": reasons}
    return Verdict(replace(step, update=update), "auto_respond -> review: " + "; ".join(reasons))


__all__ = [
    "NEVER_ALONE",
    "RELEVANCE_FLOOR",
    "escalate_at_once",
    "message_texts",
    "reply_needs_person",
    "review_reasons",
    "safety_screen",
    "screen_floor",
    "urgency_rules",
]

"""The seed's urgency rules, which hold over the supervisor's answer (``support_supervise``).

The urgency rules hold whatever the model says: they read the plan from the
CRM and the signals found by the cue lists (:mod:`.signals`, every language),
joined with any signals the model reports. In order, the first that applies wins:

| rule                                          | urgency  |
|-----------------------------------------------|----------|
| any security concern                          | critical |
| enterprise + outage or data loss              | critical |
| enterprise + billing error                    | high     |
| pro + service disruption (or outage)          | high     |
| free + general question                       | low      |
| otherwise                                     | the model's |

The ``urgency_floor`` guard (:mod:`.guards`) holds the first four as a floor,
with three of the desk's own beside them (a problem is never below them, whatever
the plan): outage or data loss on any plan is at least ``high``, an enterprise
service disruption at least ``high``, a billing error on a paid plan at least
``medium``.
"""

from __future__ import annotations

from collections.abc import Iterable

from .crm import Plan
from .signals import text_signals
from .tasks import IssueType, Supervision, Urgency

URGENCY_ORDER: tuple[Urgency, ...] = ("low", "medium", "high", "critical")


def rule_urgency(plan: Plan | None, signals: Iterable[str]) -> tuple[Urgency, str] | None:
    """The urgency a seed rule imposes, and which rule; None when no rule applies."""
    found = set(signals)
    if "security" in found:
        return "critical", "any security concern is critical"
    if plan == "enterprise" and found & {"outage", "data_loss"}:
        return "critical", "enterprise + outage or data loss is critical"
    if plan == "enterprise" and "billing_error" in found:
        return "high", "enterprise + billing error is high"
    if plan == "pro" and found & {"service_disruption", "outage"}:
        return "high", "pro + service disruption is high"
    problems = {"outage", "data_loss", "billing_error", "service_disruption"}
    if plan == "free" and "general_question" in found and not found & problems:
        return "low", "free + general question is low"
    return None


def enforce_rules(answer: Supervision, plan: Plan | None, text: str) -> Supervision:
    """The model's answer with the seed's urgency rules applied over it."""
    signals = sorted(set(answer.signals) | text_signals(text))
    ruled = rule_urgency(plan, signals)
    if ruled is None:
        return answer.model_copy(update={"signals": signals})
    urgency, rule = ruled
    reasoning = answer.reasoning
    if urgency != answer.urgency:
        reasoning = f"{reasoning} [rule: {rule}; the model said {answer.urgency}]".strip()
    else:
        reasoning = f"{reasoning} [rule: {rule}]".strip()
    return answer.model_copy(
        update={"urgency": urgency, "signals": signals, "reasoning": reasoning}
    )


def floor_urgency(plan: Plan | None, signals: Iterable[str]) -> tuple[Urgency, str] | None:
    """The least urgency the signals allow, and the rule that says so; None: no floor."""
    found = set(signals)
    ruled = rule_urgency(plan, found)
    if ruled is not None and ruled[0] != "low":
        return ruled
    if found & {"outage", "data_loss"}:
        return "high", "an outage or data loss is at least high on any plan"
    if plan == "enterprise" and "service_disruption" in found:
        return "high", "an enterprise service disruption is at least high"
    if plan in ("pro", "enterprise") and "billing_error" in found:
        return "medium", "a billing error on a paid plan is at least medium"
    return None


def escalation_rule(plan: Plan | None, signals: Iterable[str]) -> str | None:
    """Why the signals send the ticket to a person at once (escalate), or None."""
    found = set(signals)
    if "security" in found:
        return "a security concern goes to a person at once"
    if plan == "enterprise" and found & {"outage", "data_loss"}:
        return "an enterprise outage or data loss goes to a person at once"
    return None


def signal_issue_type(signals: Iterable[str], topics: Iterable[str] = ()) -> IssueType | None:
    """The specialist the signals (and topic cues) name, or None when they name none.

    A billing error is billing's; security, outages, data loss and disruptions are
    technical; otherwise the topic cues decide (billing before technical).
    """
    found, named = set(signals), set(topics)
    if "billing_error" in found:
        return "billing"
    if found & {"security", "outage", "data_loss", "service_disruption"}:
        return "technical"
    if "billing_topic" in named:
        return "billing"
    if "technical_topic" in named:
        return "technical"
    return None


def raise_to(current: Urgency, floor: Urgency) -> Urgency:
    """The higher of two urgencies."""
    return max(current, floor, key=URGENCY_ORDER.index)

"""The seed's urgency rules, which hold over the supervisor's answer (``support_supervise``).

The urgency rules hold whatever the model says: they read the plan from the
CRM and the signals found in the (English) text by fixed patterns, joined
with any signals the model reports. In order, the first that applies wins:

| rule                                          | urgency  |
|-----------------------------------------------|----------|
| any security concern                          | critical |
| enterprise + outage or data loss              | critical |
| enterprise + billing error                    | high     |
| pro + service disruption (or outage)          | high     |
| free + general question                       | low      |
| otherwise                                     | the model's |
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...ports.crm import Plan
from .tasks import Supervision, Urgency

SIGNAL_PATTERNS: dict[str, re.Pattern[str]] = {
    "security": re.compile(
        r"\b(security|vulnerab\w*|breach\w*|hack\w*|phishing|compromised|leak\w*|exploit\w*"
        r"|unauthori[sz]ed (?:access|login)|suspicious (?:login|activity)|xss|csrf"
        r"|sql injection|exposed (?:data|credentials|keys?|tokens?))\b",
        re.IGNORECASE,
    ),
    "outage": re.compile(
        r"\b(outage|is down|are down|went down|completely down|all users|nobody can"
        r"|cannot (?:log ?in|access)|can't (?:log ?in|access)|503|502|unreachable)\b",
        re.IGNORECASE,
    ),
    "data_loss": re.compile(
        r"\b(data loss|lost (?:all |our |my )?(?:data|records|files)|(?:data|records|files) "
        r"(?:are|were|is|was) (?:gone|deleted|missing)|deleted (?:our|my) data)\b",
        re.IGNORECASE,
    ),
    "billing_error": re.compile(
        r"\b(charged twice|double[- ]charged|overcharged|wrong (?:amount|invoice|charge)"
        r"|incorrect (?:invoice|charge|amount)|billing error|invoice error|refund)\b",
        re.IGNORECASE,
    ),
    "service_disruption": re.compile(
        r"\b(slow|timeouts?|timing out|intermittent\w*|errors? (?:when|on|while)|degraded"
        r"|not working|stopped working|keeps failing|fails? to (?:load|sync|save))\b",
        re.IGNORECASE,
    ),
    "general_question": re.compile(
        r"(\?|\b(how (?:do|can|to)|is (?:it|there) (?:possible|a way)|where (?:do|can|is)"
        r"|what is|can i|could you explain)\b)",
        re.IGNORECASE,
    ),
}
"""How the rules see the signals in English text (the model may add more)."""

URGENCY_ORDER: tuple[Urgency, ...] = ("low", "medium", "high", "critical")


def text_signals(text: str) -> set[str]:
    """The signals the fixed patterns find in ``text``."""
    return {name for name, pattern in SIGNAL_PATTERNS.items() if pattern.search(text)}


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

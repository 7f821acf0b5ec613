"""The seed's urgency rules hold whatever the model says (table-tested)."""

from __future__ import annotations

import pytest

from inboxflow.graphs.support.tasks import Supervision
from inboxflow.graphs.support.urgency import enforce_rules, rule_urgency, text_signals

OUTAGE = "Our dashboards are down for all users since this morning."
DATA_LOSS = "We lost all our records after the import, the files are gone."
BILLING = "We were charged twice on the January invoice."
DISRUPTION = "Exports keep failing with timeouts every afternoon."
QUESTION = "How do I add a teammate to my workspace?"
SECURITY = "I think my account was compromised: a suspicious login from abroad."


@pytest.mark.parametrize(
    ("plan", "text", "model_says", "expected"),
    [
        ("enterprise", OUTAGE, "low", "critical"),
        ("enterprise", DATA_LOSS, "medium", "critical"),
        ("enterprise", BILLING, "low", "high"),
        ("enterprise", BILLING, "critical", "high"),
        ("pro", DISRUPTION, "low", "high"),
        ("pro", OUTAGE, "medium", "high"),
        ("free", QUESTION, "critical", "low"),
        ("free", SECURITY, "low", "critical"),
        ("pro", SECURITY, "medium", "critical"),
        ("enterprise", f"{QUESTION} {SECURITY}", "low", "critical"),
        # no rule applies: the model's urgency stands
        ("free", DISRUPTION, "medium", "medium"),
        ("pro", QUESTION, "medium", "medium"),
        ("pro", BILLING, "high", "high"),
        ("enterprise", QUESTION, "medium", "medium"),
        ("free", f"{QUESTION} {BILLING}", "medium", "medium"),
    ],
)
def test_urgency_rules_override_the_model(plan, text, model_says, expected):
    answer = Supervision(urgency=model_says, issue_type="general", requires_escalation=False)
    assert enforce_rules(answer, plan, text).urgency == expected


def test_a_signal_the_model_reports_counts_even_when_the_patterns_miss_it():
    answer = Supervision(
        urgency="low", issue_type="technical", requires_escalation=False, signals=["security"]
    )
    ruled = enforce_rules(answer, "free", "Something odd is happening with my account.")
    assert ruled.urgency == "critical"
    assert "any security concern" in ruled.reasoning and "the model said low" in ruled.reasoning


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        (OUTAGE, "outage"),
        (DATA_LOSS, "data_loss"),
        (BILLING, "billing_error"),
        (DISRUPTION, "service_disruption"),
        (QUESTION, "general_question"),
        (SECURITY, "security"),
    ],
)
def test_each_signal_is_found_by_its_pattern(text, signal):
    assert signal in text_signals(text)


def test_no_rule_for_an_unknown_plan_or_no_signal():
    assert rule_urgency(None, {"outage"}) is None
    assert rule_urgency("enterprise", set()) is None

"""Routing rules, condition by condition: first match wins, the mailbox's rules first, and why
each earlier rule did not match."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import yaml

from inboxflow.config import InboxflowConfig, parse_config
from inboxflow.graphs import graph_registry
from inboxflow.mail import Email, email_from_json
from inboxflow.routing import explicit, route
from tests.harness.mail_auth import gmail_fail, gmail_pass

from .test_config import AGENT, GRAPHS

MAILBOX = "maya.chen@brightlane.io"


def email(**fields: Any) -> Email:
    data: dict[str, Any] = {
        "from": "Priya Raman <Priya.Raman@Kestrel-Logistics.com>",
        "to": MAILBOX,
        "subject": "Pricing for 40 seats",
        "body": "Hello, what does the team plan cost?",
        "date": "2026-11-12T09:00:00Z",
    }
    data.update(fields)
    return email_from_json(data)


def rules(*items: dict[str, Any], mailboxes: dict[str, Any] | None = None) -> InboxflowConfig:
    routing: dict[str, Any] = {"rules": list(items)}
    if mailboxes:
        routing["mailboxes"] = {a: {"rules": r} for a, r in mailboxes.items()}
    return parse_config(
        {
            "routing": routing,
            "profiles": [
                {
                    "name": "scheduler",
                    "system_prompt_file": "pharmacy.md",
                    "tools": ["check_calendar"],
                }
            ],
        },
        GRAPHS,
        source="t.yaml",
    )


def rule(name: str, route: str = "agent", **match: Any) -> dict[str, Any]:
    found = {"name": name, "match": match, "route": route}
    if route == "agent":
        found["profile"] = "scheduler"
    return found


def matched(config: InboxflowConfig, message: Email, mailbox: str | None = None) -> str | None:
    return route(message, config, mailbox).rule


def test_no_rules_or_no_match_goes_to_the_pipeline() -> None:
    decision = route(email(), InboxflowConfig())
    assert (decision.graph, decision.rule, decision.profile) == ("pipeline", None, None)
    decision = route(email(), rules(rule("x", subject_contains="invoice")))
    assert decision.graph == "pipeline" and decision.rule is None
    assert decision.reasons_not_matched == [
        ("x", "subject_contains: 'invoice' not in 'Pricing for 40 seats'")
    ]


def test_all_matches_everything_and_carries_the_profile() -> None:
    decision = route(email(), rules(rule("everything", all=True)))
    assert (decision.graph, decision.profile, decision.rule) == ("agent", "scheduler", "everything")
    assert decision.mailbox == MAILBOX


def test_sender_email_is_exact_and_case_insensitive() -> None:
    config = rules(rule("priya", sender_email="priya.raman@KESTREL-logistics.com"))
    assert matched(config, email()) == "priya"
    assert matched(config, email(**{"from": "priya.raman@kestrel-logistics.co"})) is None
    assert matched(config, email(**{"from": "xpriya.raman@kestrel-logistics.com"})) is None
    why = route(email(**{"from": "bob@x.com"}), config).reasons_not_matched[0][1]
    assert why == "sender_email: bob@x.com is not priya.raman@kestrel-logistics.com"


def test_sender_domain_is_the_exact_domain_after_the_at() -> None:
    config = rules(rule("kestrel", sender_domain="kestrel-logistics.COM"))
    assert matched(config, email()) == "kestrel"
    assert matched(config, email(**{"from": "a@eu.kestrel-logistics.com"})) is None
    assert matched(config, email(**{"from": "a@kestrel-logistics.com.evil.io"})) is None
    why = route(email(**{"from": "a@other.io"}), config).reasons_not_matched[0][1]
    assert why == "sender_domain: other.io is not kestrel-logistics.com"


def test_subject_contains_is_a_case_insensitive_substring() -> None:
    config = rules(rule("seats", subject_contains="40 SEATS"))
    assert matched(config, email()) == "seats"
    assert matched(config, email(subject="Pricing for 4 seats")) is None


def test_header_match_needs_every_header_present_and_matching() -> None:
    config = rules(
        rule("urgent", header_match={"X-Priority": r"^[12]\b", "X-Customer-Tier": "gold|platinum"})
    )
    both = {"X-PRIORITY": "1 (Highest)", "x-customer-tier": "platinum"}
    assert matched(config, email(headers=both)) == "urgent"
    low = {"X-Priority": "3 (Normal)", "X-Customer-Tier": "gold"}
    assert matched(config, email(headers=low)) is None
    assert route(email(headers=low), config).reasons_not_matched[0][1] == (
        "header_match: x-priority '3 (Normal)' does not match '^[12]\\\\b'"
    )
    only_one = {"X-Priority": "1"}
    assert route(email(headers=only_one), config).reasons_not_matched[0][1] == (
        "header_match: no x-customer-tier header"
    )


def test_a_backtracking_pattern_runs_through_re2_on_a_hostile_subject() -> None:
    import re2

    config = rules(rule("aaa", route="pipeline", header_match={"Subject": "^(a+)+$"}))
    pattern = config.routing.rules[0].match.patterns["subject"]
    # RE2 matches in linear time; Python's re took minutes on 35 characters of this.
    assert isinstance(pattern.compiled, type(re2.compile("a")))
    hostile = email(subject="a" * 1999 + "!")
    assert matched(config, hostile) is None
    assert matched(config, email(subject="aaaa")) == "aaa"


def test_re2_is_imported_only_by_a_config_with_a_header_match() -> None:
    script = (
        "import sys\n"
        "from inboxflow.config import parse_config\n"
        "rule = {'name': 'r', 'route': 'pipeline', 'match': {'subject_contains': 'x'}}\n"
        "parse_config({'routing': {'rules': [rule]}})\n"
        "print('re2' in sys.modules)\n"
        "rule['match'] = {'header_match': {'X-Priority': '^1'}}\n"
        "parse_config({'routing': {'rules': [rule]}})\n"
        "print('re2' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_a_header_over_2000_characters_matches_no_pattern() -> None:
    config = rules(rule("prio", route="pipeline", header_match={"X-Priority": "^1"}))
    assert matched(config, email(headers={"X-Priority": "1" + "x" * 1999})) == "prio"
    padded = email(headers={"X-Priority": "1" + "x" * 2000})
    assert matched(config, padded) is None
    assert route(padded, config).reasons_not_matched[0][1] == (
        "header_match: x-priority of 2001 characters (patterns see at most 2000)"
    )


BOSS = "boss@brightlane.io"
PRIYA = "Priya.Raman@Kestrel-Logistics.com"
FORWARDED_BLOCK = (
    "FYI, can you answer this?\n\n---------- Forwarded message ---------\n"
    "From: The Boss <boss@brightlane.io>\nDate: Mon\nSubject: Q\n\nQuestion"
)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"from": BOSS, "headers": {"Authentication-Results": gmail_pass(BOSS)}}, True),
        (
            {
                "from": "The Boss <BOSS@brightlane.io>",
                "headers": {"Authentication-Results": gmail_pass(BOSS)},
            },
            True,
        ),
        # what the sender writes: never the forwarder
        ({"headers": {"Reply-To": BOSS, "Authentication-Results": gmail_pass(PRIYA)}}, False),
        (
            {"body": FORWARDED_BLOCK, "headers": {"Authentication-Results": gmail_pass(PRIYA)}},
            False,
        ),
        ({"body": "Von: Boss <BOSS@brightlane.io>\nBetreff: x"}, False),
        (
            {"headers": {"X-Forwarded-From": BOSS, "Authentication-Results": gmail_pass(PRIYA)}},
            False,
        ),
        # From says boss, but nothing (or a failing or foreign verdict) vouches for it
        ({"from": BOSS}, False),
        ({"from": BOSS, "headers": {"Authentication-Results": gmail_fail(BOSS)}}, False),
        (
            {
                "from": BOSS,
                "headers": {"Authentication-Results": gmail_pass(BOSS, "mx.evil.example")},
            },
            False,
        ),
    ],
)
def test_forwarded_from_is_the_authenticated_sender_never_reply_to_or_body_lines(
    fields: dict[str, Any], expected: bool
) -> None:
    config = rules(rule("fwd", forwarded_from=BOSS))
    assert (matched(config, email(**fields)) == "fwd") is expected


def test_forwarded_from_says_why_it_did_not_match() -> None:
    config = rules(rule("fwd", forwarded_from=BOSS))
    spoofed = email(**{"from": BOSS, "headers": {"Reply-To": BOSS}})
    assert route(spoofed, config).reasons_not_matched == [
        (
            "fwd",
            "forwarded_from: the sender is not authenticated "
            "(no Authentication-Results from the receiving server)",
        )
    ]
    other = email(headers={"Authentication-Results": gmail_pass(PRIYA)})
    assert route(other, config).reasons_not_matched[0][1] == (
        "forwarded_from: the authenticated sender Priya.Raman@kestrel-logistics.com is not "
        "boss@brightlane.io"
    )


def test_conditions_are_anded() -> None:
    config = rules(rule("both", sender_domain="kestrel-logistics.com", subject_contains="invoice"))
    assert matched(config, email()) is None
    assert matched(config, email(subject="Invoice 42")) == "both"
    assert route(email(), config).reasons_not_matched[0][1].startswith("subject_contains")


def test_first_match_wins_and_earlier_misses_are_explained() -> None:
    config = rules(
        rule("billing", subject_contains="invoice"),
        rule("kestrel", "pipeline", sender_domain="kestrel-logistics.com"),
        rule("everything", all=True),
    )
    decision = route(email(), config)
    assert (decision.rule, decision.graph, decision.profile) == ("kestrel", "pipeline", None)
    assert [name for name, _ in decision.reasons_not_matched] == ["billing"]


def test_a_mailboxs_own_rules_come_first_and_only_for_that_mailbox() -> None:
    config = rules(
        rule("global", "pipeline", all=True),
        mailboxes={"Maya.Chen@brightlane.io": [rule("maya-only", subject_contains="pricing")]},
    )
    assert matched(config, email()) == "maya-only"
    assert matched(config, email(subject="hello")) == "global"
    assert matched(config, email(), mailbox="support@brightlane.io") == "global"
    assert route(email(subject="hello"), config).reasons_not_matched == [
        ("maya-only", "subject_contains: 'pricing' not in 'hello'")
    ]


def test_the_default_graph_is_the_callers_when_no_rule_matches() -> None:
    decision = route(email(), InboxflowConfig(), MAILBOX, default="agent")
    assert decision.graph == "agent" and decision.rule is None


def test_a_graph_named_by_hand_is_checked_like_a_rule() -> None:
    config = rules()
    assert explicit("pipeline", None, config, GRAPHS).graph == "pipeline"
    assert explicit("agent", "scheduler", config, GRAPHS).profile == "scheduler"
    with pytest.raises(
        ValueError, match=r"unknown graph 'nope'; graphs: agent, assistant, pipeline"
    ):
        explicit("nope", None, config, GRAPHS)
    with pytest.raises(ValueError, match=r"graph 'agent' needs --profile; profiles: scheduler"):
        explicit("agent", None, config, GRAPHS)
    with pytest.raises(ValueError, match=r"graph 'pipeline' takes no profile"):
        explicit("pipeline", "scheduler", config, GRAPHS)
    with pytest.raises(ValueError, match=r"unknown profile 'sales'"):
        explicit("agent", "sales", config, GRAPHS)


def test_the_shipped_examples_are_valid_rules() -> None:
    """The commented examples of inboxflow.yaml, uncommented, validate and route."""
    from inboxflow.dev.infra import REPO_ROOT

    lines = (REPO_ROOT / "inboxflow.yaml").read_text().splitlines()
    start = lines.index("# routing:")
    block = []
    for line in lines[start:]:
        if line.strip() == "#":
            break
        block.append(line[2:])
    config = parse_config(yaml.safe_load("\n".join(block)), graph_registry())
    assert [r.name for _, r in config.rules_for("support@brightlane.io")] == [
        "support-forwards",
        "billing",
        "vip",
    ]
    assert AGENT.takes_profile

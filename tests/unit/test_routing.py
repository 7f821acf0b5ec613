"""Routing rules, condition by condition: first match wins, the mailbox's rules first, and why
each earlier rule did not match."""

from __future__ import annotations

import string
import subprocess
import sys
from itertools import pairwise
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from inboxflow.config import InboxflowConfig, parse_config
from inboxflow.graphs import graph_registry
from inboxflow.mail import Email, email_from_eml, email_from_json
from inboxflow.mail.addresses import address_key, same_address
from inboxflow.routing import explicit, route
from tests.harness.mail_auth import gmail_pass

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
        "from inboxflow.graphs import graph_registry\n"
        "rule = {'name': 'r', 'route': 'pipeline', 'match': {'subject_contains': 'x'}}\n"
        "parse_config({'routing': {'rules': [rule]}}, graph_registry())\n"
        "print('re2' in sys.modules)\n"
        "rule['match'] = {'header_match': {'X-Priority': '^1'}}\n"
        "parse_config({'routing': {'rules': [rule]}}, graph_registry())\n"
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
FORWARD = (
    "FYI, can you answer this?\n\n---------- Forwarded message ---------\n"
    "From: {writer}\nDate: Mon, 9 Nov 2026 at 10:15\nSubject: Q\nTo: {to}\n\nQuestion"
)
ATTACHED = (
    "From: Priya Raman <priya.raman@kestrel-logistics.com>\nTo: maya.chen@brightlane.io\n"
    "Subject: Fwd: Q\nMessage-ID: <fwd1@kestrel-logistics.com>\nMIME-Version: 1.0\n"
    'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\nsee below\n'
    "--b\nContent-Type: message/rfc822\n\nFrom: The Boss <Boss@Brightlane.io>\nTo: a@b.example\n"
    "Subject: Q\nDate: Mon, 9 Nov 2026 10:15:00 +0000\n\nQuestion\n--b--\n"
)


@pytest.mark.parametrize(
    ("fields", "signal"),
    [
        # Gmail auto-forwarding: From the original sender, the forwarder in X-Forwarded-For
        (
            {
                "headers": {
                    "X-Forwarded-For": f"{BOSS} {MAILBOX}",
                    "X-Forwarded-To": MAILBOX,
                    "Authentication-Results": gmail_pass(PRIYA),
                }
            },
            "X-Forwarded-For",
        ),
        # two hops: boss -> relay -> Maya; the first hop's headers name the relay too
        (
            {"headers": {"X-Forwarded-To": f"relay@brightlane.io\n{MAILBOX}"}},
            "X-Forwarded-To",
        ),
        ({"headers": {"X-Forwarded-From": f"The Boss <{BOSS.upper()}>"}}, "X-Forwarded-From"),
        ({"headers": {"Resent-From": f"The Boss <{BOSS}>"}}, "Resent-From"),
        (
            {"body": FORWARD.format(writer=f"The Boss <{BOSS}>", to=PRIYA)},
            "the forwarded block (From)",
        ),
        ({"body": FORWARD.format(writer=PRIYA, to=f"<{BOSS}>")}, "the forwarded block (To)"),
        ({"headers": {"Reply-To": f"The Boss <{BOSS}>"}}, "Reply-To"),
        (
            {"from": "The Boss <Boss@BrightLane.io>"},
            "From",
        ),  # not authenticated: routes all the same
    ],
)
def test_forwarded_from_matches_each_signal_and_says_which(
    fields: dict[str, Any], signal: str
) -> None:
    rule_for = BOSS if signal != "X-Forwarded-To" else "relay@brightlane.io"
    decision = route(email(**fields), rules(rule("fwd", forwarded_from=rule_for)))
    assert decision.rule == "fwd"
    assert decision.signal == f"forwarded_from {rule_for} via {signal}"


def test_forwarded_from_reads_an_attached_message() -> None:
    decision = route(email_from_eml(ATTACHED.encode()), rules(rule("fwd", forwarded_from=BOSS)))
    assert decision.signal == f"forwarded_from {BOSS} via an attached message (From)"


def test_the_first_signal_in_order_is_named() -> None:
    both = email(
        **{"from": BOSS, "headers": {"Reply-To": BOSS, "X-Forwarded-For": f"{BOSS} {MAILBOX}"}}
    )
    decision = route(both, rules(rule("fwd", forwarded_from=BOSS)))
    assert decision.signal == f"forwarded_from {BOSS} via X-Forwarded-For"


@pytest.mark.parametrize(
    "fields",
    [
        # the destination of an auto-forward is the mailbox, not a forwarder
        {"headers": {"X-Forwarded-For": f"{PRIYA} {BOSS}", "X-Forwarded-To": BOSS}},
        # a look-alike (Cyrillic o, a digit for a letter) is another address
        {"headers": {"X-Forwarded-For": "b\u043ess@brightlane.io x@y.example"}},
        {"headers": {"Reply-To": "b0ss@brightlane.io"}},
        {"from": "boss@brightlane.io.evil.example"},
        # a "From:" line that is no forwarded block (no intro, no date, no other field)
        {"body": "Von: Boss <BOSS@brightlane.io>\nBetreff: x"},
        # the block a reply quotes is its history, not a forward
        {
            "subject": "Re: Q",
            "headers": {"In-Reply-To": "<q1@brightlane.io>"},
            "body": "Thanks!\n\n" + FORWARD.format(writer=BOSS, to=PRIYA).replace("\n", "\n> "),
        },
    ],
)
def test_forwarded_from_does_not_match_what_does_not_name_the_forwarder(
    fields: dict[str, Any],
) -> None:
    mailbox = BOSS if "X-Forwarded-To" in fields.get("headers", {}) else None
    decision = route(email(**fields), rules(rule("fwd", forwarded_from=BOSS)), mailbox)
    assert decision.rule is None and decision.signal is None
    assert decision.reasons_not_matched == [
        (
            "fwd",
            f"forwarded_from: no signal names {BOSS} (X-Forwarded-For, X-Forwarded-To, "
            "X-Forwarded-From, Resent-From, the forwarded message, Reply-To, From)",
        )
    ]


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


# --- Gmail's auto-forwarding, generated (issue 37) -------------------------------------------

_LABEL = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=2, max_size=10)
_DOMAIN = st.lists(_LABEL, min_size=2, max_size=3).map(".".join)
_LOCAL = st.text(alphabet=string.ascii_lowercase + string.digits + "._", min_size=1, max_size=12)
_ADDR = st.builds(lambda local, domain: f"{local.strip('.')}a@{domain}", _LOCAL, _DOMAIN)


def _arc(i: int, domain: str, noise: str) -> str:
    return (
        f"ARC-Seal: i={i}; a=rsa-sha256; t=1736850000; cv=pass;\r\n d=google.com; s=arc-20240605;"
        f"\r\n b={noise}\r\n"
        f"ARC-Message-Signature: i={i}; a=rsa-sha256; c=relaxed/relaxed; d=google.com;\r\n"
        f" s=arc-20240605; h=to:subject:message-id:date:from:mime-version;\r\n bh={noise}=;\r\n"
        f"ARC-Authentication-Results: i={i}; mx.google.com;\r\n dkim=pass header.i=@{domain};"
        f"\r\n spf=pass smtp.mailfrom={noise[:8]}@{domain}\r\n"
    )


@st.composite
def auto_forwards(draw: st.DrawFn) -> tuple[bytes, str, str]:
    """``(raw message, forwarder, mailbox)``: mail to ``forwarder`` that Gmail forwarded, in
    one or two hops, to ``mailbox``, with the ARC chain and ``+caf_`` Return-Path of each hop."""
    people = draw(st.lists(_ADDR, min_size=3, max_size=4, unique_by=address_key))
    original, forwarder, mailbox, *relay = people
    hops = [forwarder, *relay, mailbox]
    noise = draw(
        st.text(alphabet=string.ascii_letters + string.digits + "+/", min_size=20, max_size=60)
    )
    case = draw(st.sampled_from([str, str.upper, str.lower]))
    lines = [f"Delivered-To: {mailbox}\r\n"]
    for i, (source, destination) in enumerate(reversed(list(pairwise(hops)))):
        local, _, domain = source.partition("@")
        caf = destination.replace("@", "=")
        lines.append(f"Received: by 2002:a05:{i}::{i} with SMTP id x{i}; Thu, 14 Jan 2027\r\n")
        lines.append(_arc(len(hops) - 1 - i, domain, noise))
        lines.append(f"Return-Path: <{local}+caf_={caf}@{domain}>\r\n")
        lines.append(f"{case('X-Forwarded-To')}: {destination}\r\n")
        lines.append(f"{case('X-Forwarded-For')}: {source} {destination}\r\n")
    lines.append(f"Authentication-Results: {gmail_pass(original)}\r\n")
    lines.append(
        f"From: Patient <{original}>\r\nTo: {forwarder}\r\nSubject: question\r\n"
        "Message-ID: <m1@example.org>\r\nDate: Thu, 14 Jan 2027 12:00:00 +0100\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\nSwollen ankles since the new tablets.\r\n"
    )
    return "".join(lines).encode(), forwarder, mailbox


@settings(max_examples=150, deadline=None)
@given(auto_forwards())
def test_gmail_auto_forwarding_routes_by_its_forwarder(sent: tuple[bytes, str, str]) -> None:
    raw, forwarder, mailbox = sent
    message = email_from_eml(raw, mailbox)
    assert same_address(message.mailbox, mailbox)
    config = rules(
        rule("to-the-mailbox", forwarded_from=mailbox),
        rule("forwarder", forwarded_from=forwarder.upper()),
    )
    decision = route(message, config)
    assert decision.rule == "forwarder", decision
    assert decision.signal == f"forwarded_from {forwarder.upper()} via X-Forwarded-For"
    # the destination (the mailbox itself) is no forwarder
    assert decision.reasons_not_matched[0][0] == "to-the-mailbox"


@pytest.mark.parametrize(
    ("match", "sender"),
    [
        ({"sender_email": "boss@bigcustomer.com"}, "bo\u017fs@bigcustomer.com"),  # long s
        ({"sender_email": "kim@bigcustomer.com"}, "\u212aim@bigcustomer.com"),  # Kelvin sign
        ({"sender_domain": "bigcustomer.com"}, "x@b\u0131gcustomer.com"),  # dotless i
    ],
)
def test_sender_conditions_never_match_a_look_alike(match: dict[str, str], sender: str) -> None:
    """issue 39: an address is compared by its address_key, never by Unicode case folding."""
    config = rules({"name": "vip", "match": match, "route": "pipeline"})
    assert route(email(**{"from": sender}), config).rule is None


@pytest.mark.parametrize(
    "match", [{"sender_email": "boss@bigcustomer.com"}, {"sender_domain": "bigcustomer.com"}]
)
def test_sender_conditions_match_across_ascii_case(match: dict[str, str]) -> None:
    config = rules({"name": "vip", "match": match, "route": "pipeline"})
    assert route(email(**{"from": "Boss <Boss@BigCustomer.COM>"}), config).rule == "vip"

"""inboxflow.yaml: what validates, and the one-line error naming the rule for what does not."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel

from inboxflow.config import (
    CONFIG_VARIABLE,
    ConfigError,
    InboxflowConfig,
    config_path,
    load_config,
    parse_config,
)
from inboxflow.dev.infra import REPO_ROOT
from inboxflow.dev.infra.archive import source_archive_members
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.step import END, Step
from inboxflow.graphs import graph_registry


class AgentState(BaseModel):
    email: dict = {}


def _answer(state: AgentState, ctx: object) -> Step:
    return Step(goto=END)


AGENT = Graph.build(
    "agent",
    "answer",
    AgentState,
    [Node("answer", _answer, routes=(END,))],
    takes_profile=True,
    tools=graph_registry()["pipeline"].tools.only(["check_calendar"]),
)
GRAPHS = {**graph_registry(), "agent": AGENT}


def parse(text: str) -> InboxflowConfig:
    import yaml

    return parse_config(yaml.safe_load(textwrap.dedent(text)), GRAPHS, source="inboxflow.yaml")


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(text)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


VALID = """
    profiles:
      - name: scheduler
        system_prompt_file: pharmacy.md
        tools: [check_calendar]
    routing:
      rules:
        - name: vip
          match: {sender_domain: BigCustomer.com, header_match: {X-Priority: "^[12]"}}
          route: pipeline
        - name: meetings
          match: {subject_contains: meeting}
          route: agent
          profile: scheduler
        - name: rest
          match: {all: true}
          route: pipeline
      mailboxes:
        Support@Brightlane.io:
          rules:
            - name: support-forwards
              match: {forwarded_from: maya.chen@brightlane.io}
              route: pipeline
"""


def test_a_full_config_validates_and_orders_mailbox_rules_first() -> None:
    config = parse(VALID)
    assert [p.name for p in config.profiles] == ["scheduler"]
    assert config.profiles[0].tools == ["check_calendar"]
    order = [(where, rule.name) for where, rule in config.rules_for("support@brightlane.io")]
    assert order == [
        ("routing.mailboxes[Support@Brightlane.io].rules[0]", "support-forwards"),
        ("routing.rules[0]", "vip"),
        ("routing.rules[1]", "meetings"),
        ("routing.rules[2]", "rest"),
    ]
    assert [rule.name for _, rule in config.rules_for("other@brightlane.io")] == [
        "vip",
        "meetings",
        "rest",
    ]
    assert config.routing.rules[0].match.patterns["x-priority"].pattern == "^[12]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            """
            routing:
              rules:
                - {name: a, match: {all: true}, route: pipeline}
                - {name: b, match: {all: true}, route: pipeline}
                - {name: vip, match: {all: true}, route: nope}
            """,
            "inboxflow.yaml: rule 'vip' (routing.rules[2]): unknown graph 'nope'; graphs: agent, assistant, pipeline",
        ),
        (
            """
            routing:
              rules: [{name: cal, match: {all: true}, route: agent}]
            """,
            "inboxflow.yaml: rule 'cal' (routing.rules[0]): graph 'agent' needs a profile; "
            "profiles: (none declared)",
        ),
        (
            """
            profiles: [{name: scheduler, system_prompt_file: pharmacy.md, tools: [check_calendar]}]
            routing:
              rules: [{name: p, match: {all: true}, route: pipeline, profile: scheduler}]
            """,
            "inboxflow.yaml: rule 'p' (routing.rules[0]): graph 'pipeline' takes no profile "
            "(got 'scheduler')",
        ),
        (
            """
            profiles: [{name: scheduler, system_prompt_file: pharmacy.md, tools: [check_calendar]}]
            routing:
              rules: [{name: cal, match: {all: true}, route: agent, profile: sales}]
            """,
            "inboxflow.yaml: rule 'cal' (routing.rules[0]): unknown profile 'sales'; "
            "profiles: scheduler",
        ),
        (
            """
            routing:
              rules: [{name: prio, match: {header_match: {X-Priority: "([12"}}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'prio' (routing.rules[0]): match: header_match X-Priority: "
            "pattern '([12': RE2 refuses it (missing ]: [12; routing runs patterns in linear "
            "time: no backreferences, look-around or \\Z)",
        ),
        (
            r"""
            routing:
              rules: [{name: twice, match: {header_match: {Subject: '(a)\1'}}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'twice' (routing.rules[0]): match: header_match Subject: "
            "pattern '(a)\\\\1': RE2 refuses it (invalid escape sequence: \\1; routing runs "
            "patterns in linear time: no backreferences, look-around or \\Z)",
        ),
        (
            """
            routing:
              rules: [{name: typo, match: {sender_domian: x.com}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'typo' (routing.rules[0]): match: unknown key 'sender_domian'",
        ),
        (
            """
            routing:
              rules: [{name: typo, match: {all: true}, route: pipeline, priority: 1}]
            """,
            "inboxflow.yaml: rule 'typo' (routing.rules[0]): unknown key 'priority'",
        ),
        (
            """
            routing:
              rules: [{name: empty, match: {}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'empty' (routing.rules[0]): match: empty match: "
            "give at least one condition (or `all: true`)",
        ),
        (
            """
            routing:
              rules: [{name: never, match: {all: false}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'never' (routing.rules[0]): match: `all: false` matches "
            "nothing: remove the rule or the condition",
        ),
        (
            """
            routing:
              rules:
                - {name: twice, match: {all: true}, route: pipeline}
                - {name: twice, match: {subject_contains: x}, route: pipeline}
            """,
            "inboxflow.yaml: rule 'twice' (routing.rules[1]): duplicate rule name "
            "(also routing.rules[0])",
        ),
        (
            """
            routing:
              rules: [{name: twice, match: {all: true}, route: pipeline}]
              mailboxes:
                a@b.io: {rules: [{name: twice, match: {all: true}, route: pipeline}]}
            """,
            "inboxflow.yaml: rule 'twice' (routing.rules[0]): duplicate rule name "
            "(also routing.mailboxes[a@b.io].rules[0])",
        ),
        (
            """
            routing:
              mailboxes:
                a@b.io: {rules: [{name: m, match: {all: true}, route: nope}]}
            """,
            "inboxflow.yaml: rule 'm' (routing.mailboxes[a@b.io].rules[0]): unknown graph 'nope'",
        ),
        (
            """
            routing:
              rules: [{name: who, match: {sender_email: bob}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'who' (routing.rules[0]): match: sender_email 'bob' is not an "
            "email address",
        ),
        (
            """
            routing:
              rules: [{name: dom, match: {sender_domain: bob@x.com}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'dom' (routing.rules[0]): match: sender_domain 'bob@x.com' "
            "is not a domain (no '@')",
        ),
        (
            """
            routing:
              rules: [{name: fwd, match: {forwarded_from: nobody}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'fwd' (routing.rules[0]): match: forwarded_from 'nobody' is "
            "not an email address",
        ),
        (
            """
            routing:
              rules: [{name: h, match: {header_match: {}}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'h' (routing.rules[0]): match: header_match is empty",
        ),
        (
            """
            routing:
              rules: [{name: noroute, match: {all: true}}]
            """,
            "inboxflow.yaml: rule 'noroute' (routing.rules[0]): missing key 'route'",
        ),
        (
            """
            routing:
              rules: [{match: {all: true}, route: pipeline}]
            """,
            "inboxflow.yaml: rule (routing.rules[0]): missing key 'name'",
        ),
        (
            """
            routing:
              rules: [{name: n, match: {subject_contains: 12}, route: pipeline}]
            """,
            "inboxflow.yaml: rule 'n' (routing.rules[0]): match.subject_contains: "
            "Input should be a valid string",
        ),
        (
            """
            routing:
              rule: []
            """,
            "inboxflow.yaml: routing: unknown key 'rule'",
        ),
        (
            """
            routes: []
            """,
            "inboxflow.yaml: (top): unknown key 'routes'",
        ),
        (
            """
            profiles:
              - {name: a, system_prompt_file: pharmacy.md, tools: [check_calendar]}
              - {name: a, system_prompt_file: pharmacy.md, tools: [check_calendar]}
            """,
            "inboxflow.yaml: profiles[1]: duplicate profile name 'a'",
        ),
        (
            """
            profiles: [{tools: []}]
            """,
            "inboxflow.yaml: profiles[0]: missing key 'name'",
        ),
        (
            """
            routing:
              mailboxes:
                support: {rules: []}
            """,
            "inboxflow.yaml: routing.mailboxes: 'support' is not a mailbox address",
        ),
    ],
)
def test_each_mistake_is_one_line_naming_the_rule(text: str, expected: str) -> None:
    message = error_of(text)
    assert message.startswith(expected), message


def test_several_errors_say_how_many_more() -> None:
    message = error_of(
        """
        routing:
          rules:
            - {name: a, match: {}, route: pipeline}
            - {name: b, match: {}, route: pipeline}
        """
    )
    assert message.endswith("(and 1 more)"), message


def test_the_top_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match=r"^x.yaml: expected a mapping at the top, got list$"):
        parse_config(["routing"], GRAPHS, source="x.yaml")


def test_an_empty_file_means_no_rules(tmp_path: Path) -> None:
    path = tmp_path / "inboxflow.yaml"
    path.write_text("# nothing yet\n")
    config = load_config(path, GRAPHS)
    assert config.routing.rules == [] and config.source == str(path)


def test_bad_yaml_and_a_missing_named_file_are_clear(tmp_path: Path) -> None:
    path = tmp_path / "inboxflow.yaml"
    path.write_text("routing:\n  rules: [\n")
    with pytest.raises(ConfigError, match=r"inboxflow.yaml: not valid YAML \(line \d+\)"):
        load_config(path, GRAPHS)
    with pytest.raises(ConfigError, match=r"missing.yaml: cannot read the config"):
        load_config(tmp_path / "missing.yaml", GRAPHS)


def test_the_path_comes_from_the_environment_else_the_project_root(tmp_path: Path) -> None:
    assert config_path({CONFIG_VARIABLE: str(tmp_path / "x.yaml")}) == tmp_path / "x.yaml"
    assert config_path({}) == REPO_ROOT / "inboxflow.yaml"
    (tmp_path / "x.yaml").write_text(
        "routing: {rules: [{name: r, match: {all: true}, route: nope}]}"
    )
    with pytest.raises(ConfigError, match=r"rule 'r' \(routing.rules\[0\]\): unknown graph 'nope'"):
        load_config(None, graph_registry(), environ={CONFIG_VARIABLE: str(tmp_path / "x.yaml")})


def test_the_shipped_file_validates_and_is_in_the_source_archive() -> None:
    config = load_config(REPO_ROOT / "inboxflow.yaml", graph_registry())
    assert [(r.name, r.route, r.profile) for r in config.routing.rules] == [
        ("pharmacy-crisp", "agent", "pharmacy")
    ]
    names = dict(source_archive_members())
    assert names["inboxflow.yaml"] == REPO_ROOT / "inboxflow.yaml"


# --- graph settings --------------------------------------------------------------------


def test_graph_settings_are_validated_by_the_graphs_settings_model() -> None:
    from inboxflow.graphs import graph_registry

    graphs = graph_registry()
    config = parse_config(
        {"graphs": {"pipeline": {"auto_send": True, "reviewers": ["a@b.test"]}}}, graphs
    )
    assert config.graph_settings("pipeline") == {"auto_send": True, "reviewers": ["a@b.test"]}
    with pytest.raises(
        ConfigError, match=r"^inboxflow.yaml: graphs.pipeline.reviewers: .*not an email address"
    ):
        parse_config({"graphs": {"pipeline": {"reviewers": ["nobody"]}}}, graphs)
    with pytest.raises(
        ConfigError, match=r"graphs.pipeline.auto_sned: Extra inputs are not permitted"
    ):
        parse_config({"graphs": {"pipeline": {"auto_sned": True}}}, graphs)
    with pytest.raises(
        ConfigError, match=r"graphs.nope: unknown graph; graphs: agent, assistant, pipeline"
    ):
        parse_config({"graphs": {"nope": {}}}, graphs)


def test_the_pipeline_takes_its_settings_from_the_config_and_the_environment_on_top(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inboxflow.graphs.pipeline.settings import pipeline_settings
    from tests.harness.runtimes import runtime_for

    path = tmp_path / "inboxflow.yaml"
    path.write_text(
        "graphs:\n  pipeline:\n    auto_send: true\n    reviewers: [lead@b.test]\n    calendar_days: 3\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("INBOXFLOW_CONFIG", str(path))
    settings = pipeline_settings(runtime_for(tmp_path).ports)
    assert (settings.auto_send, settings.reviewers, settings.calendar_days) == (
        True,
        ("lead@b.test",),
        3,
    )
    monkeypatch.setenv("INBOXFLOW_REVIEWERS", "night@b.test, day@b.test")
    settings = pipeline_settings(runtime_for(tmp_path).ports)
    assert settings.reviewers == ("night@b.test", "day@b.test") and settings.auto_send


def test_a_key_given_twice_is_an_error_not_a_silent_override(tmp_path) -> None:
    path = tmp_path / "inboxflow.yaml"
    path.write_text(
        "routing:\n  mailboxes:\n    a@b.test: {rules: []}\n  rules: []\n  mailboxes:\n    c@d.test: {rules: []}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"not valid YAML \(line 5\): duplicate key 'mailboxes'"):
        load_config(path, graph_registry())

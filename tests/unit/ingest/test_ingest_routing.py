"""Gmail ingest routes each new message by inboxflow.yaml: the mailbox's rules, the global rules,
then the graph the mailbox was registered with; the rule is recorded on the trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from inboxflow.config import CONFIG_VARIABLE, ConfigError, InboxflowConfig, parse_config
from inboxflow.graphs import graph_registry
from inboxflow.ingest.sync import IngestOptions, Ingestor

from .test_ingest import FOLLOW_UP, MAILBOX, World


def routed_world(tmp_path: Path, config: InboxflowConfig, graph: str = "pipeline") -> World:
    world = World(tmp_path)
    world.ingestor = Ingestor(
        world.runtime, world.gmail, IngestOptions(), sleep=world.sleeps.append, config=config
    )
    world.register(graph=graph)
    return world


def config(rules: list[dict], mailbox_rules: list[dict] | None = None) -> InboxflowConfig:
    routing: dict = {"rules": rules}
    if mailbox_rules is not None:
        routing["mailboxes"] = {MAILBOX.upper(): {"rules": mailbox_rules}}
    return parse_config({"routing": routing}, {**graph_registry(), "follow_up": FOLLOW_UP})


VIP = {"name": "vip", "match": {"sender_domain": "vip.example"}, "route": "follow_up"}


def started(world: World, n: int, sender: str = "") -> tuple[str, str, str | None]:
    _, history_id = world.deliver(n, sender=sender) if sender else world.deliver(n)
    report = world.notify(history_id)
    assert len(report.started) == 1, report.summary()
    checkpoint = world.store.get_trace(report.started[0])
    assert checkpoint is not None and checkpoint.route is not None
    assert world.store.step_logs(checkpoint.trace_id)[0].route == checkpoint.route
    assert checkpoint.route.mailbox == MAILBOX
    return checkpoint.trace_id, checkpoint.graph, checkpoint.route.rule


def test_a_matching_rule_picks_the_graph_and_is_recorded(tmp_path: Path) -> None:
    world = routed_world(tmp_path, config([VIP]))
    _, graph, rule = started(world, 1, sender="Boss <boss@VIP.example>")
    assert (graph, rule) == ("follow_up", "vip")
    _, graph, rule = started(world, 2)
    assert (graph, rule) == ("pipeline", None)


def test_without_a_match_the_mailbox_graph_is_the_default(tmp_path: Path) -> None:
    world = routed_world(tmp_path, config([VIP]), graph="follow_up")
    _, graph, rule = started(world, 1)
    assert (graph, rule) == ("follow_up", None)


def test_the_mailboxs_own_rules_come_before_the_global_ones(tmp_path: Path) -> None:
    to_pipeline = {"name": "maya-vip", "match": {"all": True}, "route": "pipeline"}
    world = routed_world(tmp_path, config([VIP], mailbox_rules=[to_pipeline]))
    _, graph, rule = started(world, 1, sender="Boss <boss@vip.example>")
    assert (graph, rule) == ("pipeline", "maya-vip")


def test_a_bad_config_stops_the_ingestor_before_any_mail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "inboxflow.yaml"
    bad.write_text("routing:\n  rules:\n    - {name: vip, match: {all: true}, route: nope}\n")
    monkeypatch.setenv(CONFIG_VARIABLE, str(bad))
    with pytest.raises(
        ConfigError, match=r"rule 'vip' \(routing.rules\[0\]\): unknown graph 'nope'"
    ):
        World(tmp_path)

"""Shadow runs on the embedded default (``engine/shadow.py``, ``shadow:`` of inboxflow.yaml):
every effect held, nothing written outside the shadow's traces, the live traces unchanged."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.config import ConfigError, ShadowConfig, parse_config
from inboxflow.engine.shadow import HELD, HeldDocuments, HeldJournal, shadow_trace_id
from inboxflow.graphs import graph_registry
from inboxflow.ports.checkpoint import Checkpoint
from inboxflow.ports.llm import LLMTask, LLMUsage, Out
from tests.harness.pipeline import StormBus
from tests.harness.shadow import World, repo_config, samples, world

OFFLINE = ShadowConfig(share=1.0, model="offline")
INSIDE_A_TRACE = ("traces", "effects")
"""Where a trace keeps itself: its checkpoint (with its steps) and its effect journal."""


def _shadows(w: World) -> list[Checkpoint]:
    return [
        Checkpoint.model_validate(doc)
        for _, doc in w.store.list("traces", where=[("shadow", "==", True)])
    ]


def _effects_of(w: World, trace_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [(key, doc) for key, doc in w.store.list("effects") if key.startswith(f"{trace_id}:")]


def _live_outcome(w: World, trace_id: str) -> dict[str, Any]:
    checkpoint = w.store.get_trace(trace_id)
    assert checkpoint is not None
    graph = w.runtime.graphs[checkpoint.graph]
    return {
        "status": checkpoint.status,
        "pause": (checkpoint.pause or {}).get("kind"),
        "effects": sorted(key.split(":", 2)[2] for key, _ in _effects_of(w, trace_id)),
        "error": checkpoint.error,
        **{name: graph.outcome(checkpoint).get(name) for name in graph.outcome_fields},
    }


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, list[str], World, list[str]]:
    """Every graph's samples run twice: without a shadow, then with one on all of them."""
    without = world(tmp_path_factory.mktemp("live"), None)
    live_ids = without.run_samples()
    beside = world(tmp_path_factory.mktemp("shadow"), OFFLINE)
    shadowed_ids = beside.run_samples()
    return without, live_ids, beside, shadowed_ids


def test_every_live_trace_gets_one_shadow_trace(worlds: Any) -> None:
    _, _, beside, live_ids = worlds
    shadows = {checkpoint.shadow_of: checkpoint for checkpoint in _shadows(beside)}
    assert sorted(shadows) == sorted(live_ids)
    for live_id, shadow in shadows.items():
        assert shadow.trace_id == shadow_trace_id(live_id) == f"{live_id}-shadow"
        assert shadow.status != "waiting" and shadow.status != "running"


def test_a_shadow_writes_nothing_outside_its_traces(worlds: Any) -> None:
    without, _, beside, _ = worlds
    alone, shadowed = without.documents(), beside.documents()
    for collection, docs in shadowed.items():
        if collection in INSIDE_A_TRACE:
            continue
        assert len(docs) == len(alone[collection]), collection
        assert "-shadow" not in json.dumps(docs, default=str), collection


def test_every_shadow_effect_is_held_and_none_performed(worlds: Any) -> None:
    _, _, beside, _ = worlds
    held = 0
    for shadow in _shadows(beside):
        for key, doc in _effects_of(beside, shadow.trace_id):
            assert doc["status"] == HELD, key
            assert doc["would"], key
            assert not key.split(":", 2)[2].startswith(("notify-", "deadline-")), key
            held += 1
    assert held >= 20
    writes = [doc for _, doc in beside.store.list("effects") if doc.get("held_path")]
    assert {doc["held_path"].split("/")[0] for doc in writes} >= {"tickets", "agent_runs"}


def test_a_shadow_pause_asks_nobody(worlds: Any) -> None:
    _, _, beside, _ = worlds
    approvals = [doc["trace_id"] for _, doc in beside.store.list("approvals")]
    assert approvals and not [trace_id for trace_id in approvals if "-shadow" in trace_id]
    paused = [shadow for shadow in _shadows(beside) if shadow.pause]
    assert {shadow.pause["kind"] for shadow in paused} >= {"approve_draft", "tool_review"}
    for shadow in paused:
        assert shadow.status == "done" and shadow.pause["held"] is True
        assert "approval_id" not in shadow.pause
        assert shadow.pause["payload"] and shadow.pause["reviewers"] is not None


def test_the_live_traces_are_the_same_beside_a_shadow(worlds: Any) -> None:
    without, live_ids, beside, shadowed_ids = worlds
    assert [_live_outcome(without, t) for t in live_ids] == [
        _live_outcome(beside, t) for t in shadowed_ids
    ]


def test_a_redelivered_message_makes_one_shadow_trace(tmp_path: Path) -> None:
    bus = StormBus(clock=_clock(), copies=2, shuffle_seed=3)
    w = world(tmp_path, OFFLINE, bus=bus)
    email = samples("pipeline", 1)[0]
    first = w.start("pipeline", email, trace_id="message-0001")
    again = w.start("pipeline", email, trace_id="message-0001")
    assert first == again == "message-0001"
    shadows = _shadows(w)
    assert [shadow.trace_id for shadow in shadows] == ["message-0001-shadow"]
    names = [key.split(":", 2)[2] for key, _ in _effects_of(w, "message-0001-shadow")]
    assert names == sorted(set(names)) and "dispatch" in names


def test_the_share_is_chosen_from_the_message_id() -> None:
    tenth = ShadowConfig(share=0.1, model="offline")
    keys = [f"<m{i}@example.com>" for i in range(2000)]
    taken = [key for key in keys if tenth.takes(key)]
    assert 150 < len(taken) < 250
    assert taken == [key for key in keys if tenth.takes(key)]
    assert all(ShadowConfig(share=1.0, model="offline").takes(key) for key in keys)


def test_a_shadow_outside_its_share_starts_nothing(tmp_path: Path) -> None:
    shadow = ShadowConfig(share=0.5, model="offline")
    w = world(tmp_path, shadow)
    emails = samples("pipeline", 4)
    for email in emails:
        w.start("pipeline", email)
    wanted = sum(shadow.takes(email.message_id or "") for email in emails)
    assert len(_shadows(w)) == wanted


def test_a_shadow_of_other_graphs_or_of_a_profile_alone_leaves_the_graph_alone(
    tmp_path: Path,
) -> None:
    only_support = ShadowConfig(share=1.0, model="offline", graphs=["support"])
    w = world(tmp_path, only_support)
    w.start("pipeline", samples("pipeline", 1)[0])
    assert _shadows(w) == []
    assert not ShadowConfig(share=1.0, profile="pharmacy").covers("pipeline", False)
    assert ShadowConfig(share=1.0, profile="pharmacy").covers("agent", True)


def test_a_profile_shadow_runs_the_agent_with_its_profile(tmp_path: Path) -> None:
    shadow_config = ShadowConfig(share=1.0, profile="pharmacy-brief")
    config = repo_config(shadow_config)
    brief = config.profiles[0].model_copy(update={"name": "pharmacy-brief", "max_iterations": 1})
    config = config.model_copy(update={"profiles": [*config.profiles, brief]})
    w = world(tmp_path, shadow_config, config=config)
    live = w.start("agent", samples("agent", 1)[0])
    [shadow] = _shadows(w)
    assert shadow.shadow_of == live
    assert shadow.route is not None and shadow.route.profile == "pharmacy-brief"
    assert shadow.state["profile"]["max_iterations"] == 1
    checkpoint = w.store.get_trace(live)
    assert checkpoint is not None and checkpoint.route is not None
    assert checkpoint.route.profile == "pharmacy"


class _ShadowModel(OfflineModel):
    """The offline model under another name: which model answered is on each call."""

    name = "shadow-model"

    def generate(self, task: LLMTask[Out], inputs: Any) -> tuple[Out, LLMUsage]:
        output, usage = super().generate(task, inputs)
        return output, dataclasses.replace(usage, model=self.name)


def test_the_shadow_asks_its_own_model_and_the_live_trace_the_live_one(tmp_path: Path) -> None:
    w = world(tmp_path, OFFLINE)
    w.runtime.shadow_llm = _ShadowModel()
    live = w.start("pipeline", samples("pipeline", 1)[0])
    models = {
        trace_id: {call["model"] for log in w.store.step_logs(trace_id) for call in log.llm_calls}
        for trace_id in (live, shadow_trace_id(live))
    }
    assert models == {live: {"offline-heuristics"}, shadow_trace_id(live): {"shadow-model"}}


def test_the_composition_root_builds_the_shadow_model_only_when_it_changes(
    tmp_path: Path,
) -> None:
    offline = world(tmp_path / "a", OFFLINE).runtime.shadow_llm
    assert offline is not None and isinstance(offline.get(), OfflineModel)  # type: ignore[union-attr]
    assert (
        world(tmp_path / "b", ShadowConfig(share=1.0, profile="pharmacy")).runtime.shadow_llm
        is None
    )
    assert world(tmp_path / "c", None).runtime.shadow_llm is None


def test_held_documents_hold_writes_read_them_back_and_hide_the_live_traces(
    tmp_path: Path,
) -> None:
    w = world(tmp_path, None)
    store, clock = w.store, w.runtime.clock
    store.set("tickets/live", {"ticket_id": "live", "opened_by": "L1:3:open_ticket"})
    store.set("tickets/other", {"ticket_id": "other", "opened_by": "X9:1:open_ticket"})
    journal = HeldJournal(store, clock)
    first = HeldDocuments(store, journal, "L1-shadow", 1, None, "L1")
    assert first.get("tickets/live") is None
    assert [key for key, _ in first.list("tickets")] == ["other"]
    assert first.create("tickets/new", {"ticket_id": "new"})
    assert not first.create("tickets/new", {"ticket_id": "again"})

    def update(tx: Any) -> None:
        doc = tx.get("tickets/other")
        tx.set("tickets/other", {**doc, "status": "closed"})
        tx.delete("tickets/gone")

    first.run_transaction(update)
    assert store.get("tickets/new") is None
    assert store.get("tickets/other") == {"ticket_id": "other", "opened_by": "X9:1:open_ticket"}
    later = HeldDocuments(store, journal, "L1-shadow", 2, None, "L1")
    assert later.get("tickets/new") == {"ticket_id": "new"}
    assert later.get(
        "tickets/other",
    ) == {
        "ticket_id": "other",
        "opened_by": "X9:1:open_ticket",
        "status": "closed",
    }
    for index in range(12):  # the last of a step's writes is the one read back (write-11)
        later.set("tickets/many", {"n": index})
    assert HeldDocuments(store, journal, "L1-shadow", 3, None, "L1").get("tickets/many") == {
        "n": 11
    }
    held = [doc for _, doc in store.list("effects") if doc["held_path"] != "tickets/many"]
    assert [doc["would"]["op"] for doc in held] == ["create", "set", "delete"]
    assert {doc["status"] for doc in held} == {HELD}


def test_a_held_effect_is_never_performed_and_a_store_only_one_writes_to_the_held_store(
    tmp_path: Path,
) -> None:
    w = world(tmp_path, None)
    journal = HeldJournal(w.store, w.runtime.clock)
    performed: list[str] = []

    def perform(key: str) -> dict[str, Any]:
        performed.append(key)
        return {"id": "m1"}

    intent = {"tool": "send_email", "arguments": {"to": "a@example.com"}}
    result = journal.run("T-shadow", 4, "send", perform, intent=intent)
    assert result == {"held": True, "effect": "send"} and performed == []
    assert journal.run("T-shadow", 4, "send", perform) == result
    held = w.store.get("effects/T-shadow:4:send")
    assert held is not None and held["would"] == intent and held["status"] == HELD
    kept = journal.run("T-shadow", 4, "ticket", perform, store_only=True)
    assert kept == {"id": "m1", "held": True} and performed == ["T-shadow:4:ticket"]
    assert journal.run("T-shadow", 4, "ticket", perform, store_only=True) == kept
    assert performed == ["T-shadow:4:ticket"]


@pytest.mark.parametrize(
    ("shadow", "error"),
    [
        ({"share": 0, "model": "offline"}, "shadow.share"),
        ({"share": 1.5, "model": "offline"}, "shadow.share"),
        ({"share": 0.1}, "name a model"),
        ({"share": 0.1, "model": "claude"}, "shadow.model"),
        ({"share": 0.1, "model": "offline", "gemini": {"task": {"model": "x"}}}, "not offline"),
        ({"share": 0.1, "profile": "nope"}, "unknown profile 'nope'"),
        ({"share": 0.1, "model": "offline", "graphs": ["nope"]}, "unknown graph 'nope'"),
    ],
)
def test_a_bad_shadow_is_refused_at_start_up(shadow: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        parse_config({"shadow": shadow}, graph_registry())


def test_a_shadow_of_gemini_roles_is_gemini() -> None:
    config = parse_config(
        {"shadow": {"share": 0.2, "gemini": {"task": {"model": "gemini-3.5-flash"}}}},
        graph_registry(),
    )
    assert config.shadow is not None and config.shadow.model_choice() == "gemini"


def _clock() -> Any:
    from inboxflow.clock import FakeClock

    return FakeClock()


def test_a_shadow_is_no_email_and_its_needs_review_no_alert(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    w = world(tmp_path, OFFLINE)
    with caplog.at_level("INFO"):
        live = w.start("planner", samples("planner", 2)[1])
    shadow = w.store.get_trace(shadow_trace_id(live))
    assert shadow is not None and shadow.status == "needs_review"  # the quote session is held
    started = [r for r in caplog.records if r.getMessage() == "trace started"]
    assert [r.trace_id for r in started] == [live]  # type: ignore[attr-defined]
    outcomes = [
        (r.getMessage().split()[1], getattr(r, "outcome", None))
        for r in caplog.records
        if getattr(r, "outcome", None)
    ]
    assert (shadow.trace_id, "shadow:needs_review") in outcomes
    assert not [o for t, o in outcomes if t == shadow.trace_id and not o.startswith("shadow:")]


def test_a_fork_of_a_shadow_is_a_shadow(tmp_path: Path) -> None:
    from inboxflow.dev.ops.repair import fork

    w = world(tmp_path, OFFLINE)
    live = w.start("pipeline", samples("pipeline", 1)[0])
    forked = fork(w.runtime, shadow_trace_id(live), 2)
    w.bus.drain()
    checkpoint = w.store.get_trace(forked)
    assert checkpoint is not None and checkpoint.shadow and checkpoint.shadow_of == live
    effects = _effects_of(w, forked)
    assert effects and all(doc["status"] == HELD for _, doc in effects)

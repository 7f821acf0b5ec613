"""Every graph declares its outcome fields (docs/evaluating.md, "Outcome fields") and its
projection gives exactly those, on a trace that got nowhere as on one that ran (the eval tests
run every graph)."""

from __future__ import annotations

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.eval.outcomes import COMMON_FIELDS, effect_label, recipients, trace_outcome
from inboxflow.graphs import graph_registry
from inboxflow.ports.checkpoint import Checkpoint, TraceRoute

DOCUMENTED = {
    "pipeline": ("category", "confidence", "tools", "tone"),
    "agent": ("run_status", "tools", "escalated", "reservations"),
    "support": ("language", "urgency", "issue_type", "action", "ticket", "customer_known", "queue"),
    "assistant": ("triage", "tools"),
    "planner": ("action", "asked", "quote"),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_each_graph_gives_its_documented_fields(tmp_path, name):
    graph = graph_registry()[name]
    assert set(DOCUMENTED[name]) <= set(graph.outcome_fields)
    store = SqliteCheckpointStore(tmp_path / "db.sqlite")
    try:
        blocked = Checkpoint(
            trace_id="t1",
            graph=name,
            status="done",
            step=1,
            node="__end__",
            state={},
            route=TraceRoute(rule="r", blocked="loop protection: List-Id"),
            created_at=1.0,
            updated_at=1.0,
            expire_at=2.0,
        )
        outcome = trace_outcome(store, graph_registry(), blocked)
    finally:
        store.close()
    assert tuple(outcome) == COMMON_FIELDS + graph.outcome_fields
    assert outcome["loop_protected"] is True and outcome["rule"] == "r"
    assert outcome["end_reason"] == "loop protection: List-Id"
    assert outcome["sent"] == outcome["drafted"] == outcome["wrote"] == []
    assert outcome["reviewed"] is False


def test_recipients_and_effect_labels():
    assert recipients("A <A@X.example>, b@y.example") == ["a@x.example", "b@y.example"]
    assert recipients(["c@z.example"]) == ["c@z.example"]
    assert [effect_label(n) for n in ("reservation#0", "escalation_notice_1", "open_ticket")] == [
        "reservation",
        "escalation_notice",
        "open_ticket",
    ]

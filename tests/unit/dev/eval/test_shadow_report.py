"""``inboxflow eval shadow`` (``dev/eval/shadow.py``) on a few pipeline cases: agreement
with the live graph and with its reviewers, the differing cases by trace id, the cost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from inboxflow.config import ShadowConfig
from inboxflow.dev.cli import app
from inboxflow.dev.eval.shadow import Cost, checkout_prices, shadow_report
from inboxflow.dev.eval.spans import parse_since
from inboxflow.engine.shadow import shadow_trace_id
from inboxflow.ports.checkpoint import StepLog
from tests.harness.shadow import World, samples, world

REVIEWER = "maya.chen@brightlane.io"


def _approval_of(w: World, trace_id: str) -> dict[str, Any]:
    [(_, doc)] = w.store.list("approvals", where=[("trace_id", "==", trace_id)])
    return doc


def _decide(w: World, trace_id: str, decision: str, edit: dict[str, Any] | None = None) -> None:
    approval = _approval_of(w, trace_id)
    w.runtime.ports.approvals.decisions.decide_as(
        approval["approval_id"], approval["reviewers"][0], decision, edit
    )
    w.bus.drain()


@pytest.fixture
def decided(tmp_path: Path) -> tuple[World, dict[str, str]]:
    """Pipeline samples with a shadow beside each; three reviews decided three ways."""
    w = world(tmp_path, ShadowConfig(share=1.0, model="offline"))
    ids = [w.start("pipeline", email) for email in samples("pipeline", 10)]
    paused = [t for t in ids if w.store.get_trace(t).status == "waiting"]  # type: ignore[union-attr]
    assert len(paused) >= 3, "the samples pause for review at least three times"
    approved, edited, rejected = paused[:3]
    _decide(w, approved, "approve")
    body = _approval_of(w, edited)["payload"]["draft"]
    _decide(w, edited, "approve", {"draft": body + "\n\nP.S. Edited by a reviewer."})
    _decide(w, rejected, "reject")
    done = next(t for t in ids if t not in paused)
    return w, {"approved": approved, "edited": edited, "rejected": rejected, "done": done}


def test_the_report_compares_each_shadow_with_its_live_trace_and_reviewer(decided: Any) -> None:
    w, ids = decided
    report = shadow_report(w.store, w.store, w.runtime.graphs)
    by_live = {case.live.trace_id: case for case in report.cases if case.live}
    # ten samples, one of them bulk mail that loop protection ends at once: no shadow of it
    assert len(report.cases) == 9 and all(case.agrees for case in report.cases)
    assert by_live[ids["approved"]].reviewer == "approved"
    assert by_live[ids["approved"]].agrees_with_reviewer is True
    assert by_live[ids["edited"]].reviewer == "edited"
    assert by_live[ids["edited"]].agrees_with_reviewer is False
    assert by_live[ids["rejected"]].reviewer == "rejected"
    assert by_live[ids["rejected"]].agrees_with_reviewer is False
    assert by_live[ids["done"]].reviewer is None
    row = report.by_graph()["pipeline"]
    assert row["traces"] == 9 and row["agree"] == 9 and row["agreement"] == 1.0
    assert (row["decided"], row["agree_with_reviewers"]) == (3, 1)
    assert row["differing"] == []
    assert report.shadow_cost.calls > 0 and report.shadow_cost.models == {
        "offline-heuristics": report.shadow_cost.calls
    }


def test_a_shadow_that_came_elsewhere_is_listed_with_what_differs(decided: Any) -> None:
    w, ids = decided
    shadow_id = shadow_trace_id(ids["approved"])
    checkpoint = w.store.get_trace(shadow_id)
    assert checkpoint is not None
    w.store.set(
        f"traces/{shadow_id}",
        {
            **checkpoint.model_dump(mode="json"),
            "status": "needs_review",
            "pause": None,
            "state": {**checkpoint.state, "classification": {"category": "spam"}},
        },
    )
    report = shadow_report(w.store, w.store, w.runtime.graphs)
    [case] = [case for case in report.cases if not case.agrees]
    assert case.shadow.trace_id == shadow_id
    assert case.differs["decision"] == {"live": "ask:approve_draft", "shadow": "needs_review"}
    assert case.differs["category"]["shadow"] == "spam"
    assert case.agrees_with_reviewer is False
    assert report.by_graph()["pipeline"]["differing"] == [shadow_id]


def test_the_report_takes_only_shadows_since_the_time_given(decided: Any) -> None:
    w, _ = decided
    later = w.runtime.clock.now() + 1
    assert shadow_report(w.store, w.store, w.runtime.graphs, since=later).cases == []


def test_the_cost_counts_calls_and_tokens_at_the_bench_prices() -> None:
    price = checkout_prices()
    assert price is not None
    logs = [
        StepLog(
            step_name="classify",
            step_order=1,
            started_at=0,
            llm_calls=[
                {"model": "gemini-3.5-flash", "input_tokens": 1000, "output_tokens": 200},
                {"model": "offline-heuristics"},
            ],
        )
    ]
    cost = Cost()
    cost.add(logs, price)
    assert (cost.calls, cost.input_tokens, cost.output_tokens) == (2, 1000, 200)
    assert cost.usd == pytest.approx(price("gemini-3.5-flash", 1000, 200)) and cost.usd > 0
    unpriced = Cost()
    unpriced.add(logs, None)
    assert unpriced.usd is None


def test_durations() -> None:
    assert parse_since("7d") == 7 * 86400 and parse_since("12h") == 43200
    with pytest.raises(ValueError, match="no duration"):
        parse_since("soon")


def test_the_command_prints_the_report_as_json(decided: Any, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["eval", "shadow", "--home", str(tmp_path), "--json", "--since", "3650d"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["graphs"]["pipeline"]["traces"] == 9
    assert report["priced"] is True

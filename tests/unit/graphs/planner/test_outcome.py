"""The planner's eval fields: ``asked`` follows ``action`` (the question waiting for the
agency's review, else the last one sent)."""

from __future__ import annotations

from inboxflow.graphs.planner.outcome import outcome
from inboxflow.ports.checkpoint import Checkpoint


def _ended(state: dict) -> Checkpoint:
    return Checkpoint(
        trace_id="t1",
        graph="planner",
        status="waiting",
        step=3,
        node="review",
        state=state,
        created_at=1.0,
        updated_at=1.0,
        expire_at=2.0,
    )


def test_a_question_waiting_for_review_is_what_was_asked():
    state = {
        "planned_tool_inputs": {"tool_name": "ask_customer", "args": {"fields": ["vin"]}},
        "agent_scratchpad": {"asked": ["date_of_birth", "vin"]},  # the question before
    }
    fields = outcome(_ended(state))
    assert fields["action"] == "ask_customer"
    assert fields["asked"] == ["vin"]


def test_without_a_question_planned_the_last_one_sent_counts():
    state = {
        "planned_tool_inputs": {"tool_name": "get_rate", "args": {}},
        "last_tool_outputs": {"tool": "add_vehicle", "status": "success"},
        "agent_scratchpad": {"asked": ["vin"]},
    }
    assert outcome(_ended(state))["asked"] == ["vin"]
    assert outcome(_ended({}))["asked"] == []

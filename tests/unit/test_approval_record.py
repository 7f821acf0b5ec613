"""``Approval.decided``: the one way a pending approval record becomes a decided one."""

from __future__ import annotations

from inboxflow.engine.waits import TIMEOUT_REVIEWER, Approval


def pending() -> Approval:
    return Approval(
        approval_id="a1",
        trace_id="t1",
        graph="support",
        step=3,
        resume_node="send",
        kind="approve_draft",
        payload={"body": "hi"},
        payload_hash="h",
        reviewers=["kim@example.com"],
        deadline=100.0,
        window_s=60.0,
        created_at=40.0,
        expire_at=1000.0,
    )


def test_decided_sets_status_decision_who_and_when_and_the_extra_fields_only() -> None:
    approval = pending()
    decided = approval.decided("reject", TIMEOUT_REVIEWER, 101.0, timed_out_at=101.0)
    assert (decided.status, decided.decision, decided.decided_by, decided.decided_at) == (
        "decided",
        "reject",
        TIMEOUT_REVIEWER,
        101.0,
    )
    assert decided.timed_out_at == 101.0
    assert decided.model_dump(
        exclude={"status", "decision", "decided_by", "decided_at", "timed_out_at"}
    ) == (
        approval.model_dump(
            exclude={"status", "decision", "decided_by", "decided_at", "timed_out_at"}
        )
    )
    assert approval.status == "pending" and approval.decision is None

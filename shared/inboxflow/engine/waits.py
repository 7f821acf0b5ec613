"""The approval record a pausing step commits (docs/architecture.md §6).

``approvals/{approval_id}`` is written by the runtime in the commit of the step
that paused, so its shape belongs to the step protocol, below the approval
service (``inboxflow.approvals``) that notifies, decides and times it out.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from ..schema import APPROVALS

ApprovalStatus = Literal["pending", "decided", "timed_out"]


def approval_id_for(trace_id: str, step: int) -> str:
    """The approval of the pause committed at ``step`` (also the deadline task's name)."""
    return f"{trace_id}-{step}"


def approval_path(approval_id: str) -> str:
    """Document path of an approval."""
    return APPROVALS.path(approval_id)


class Approval(BaseModel):
    """One pending or decided human decision.

    ``payload`` is what was put up for approval and ``payload_hash`` binds
    the decision to it; ``applied_payload`` is what the reviewer approved
    (their edit, or the payload itself) and ``applied_payload_hash`` is what
    the resumed node must execute.
    """

    approval_id: str
    trace_id: str
    graph: str
    step: int
    """The step that paused; the resume envelope is for ``step + 1``."""
    resume_node: str
    kind: str
    payload: dict[str, Any]
    payload_hash: str
    reviewers: list[str]
    escalate_to: list[str] = Field(default_factory=list)
    context: dict[str, Any] = Field(default_factory=dict)
    status: ApprovalStatus = "pending"
    deadline: float
    window_s: float
    on_timeout: str = "needs_review"
    round: int = 0
    """0 for the first notification; +1 per escalation."""
    decision: str | None = None
    decided_by: str | None = None
    decided_at: float | None = None
    comment: str | None = None
    """The reviewer's comment (feedback, an instruction), for choices that take one."""
    edited: bool = False
    applied_payload: dict[str, Any] | None = None
    applied_payload_hash: str | None = None
    resumed_at: float | None = None
    timed_out_at: float | None = None
    created_at: float
    expire_at: float
    notify_errors: dict[str, str] = Field(default_factory=dict)
    """Reviewers whose channel refused their notification for good, with what it said."""

    # Stored with the record (computed fields are dumped) for the reviewer's inbox to
    # query by (schema.APPROVALS's indexes); validating a stored record ignores them.
    @computed_field  # type: ignore[prop-decorator]
    @property
    def may_decide(self) -> list[str]:
        """Everyone who may decide it: the reviewers, then those it escalates to."""
        return list(dict.fromkeys([*self.reviewers, *self.escalate_to]))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mailbox(self) -> str:
        """The mailbox the email came to, when the pause's context names it."""
        return str(self.context.get("mailbox") or "")

    @property
    def resume_step(self) -> int:
        """The step number of the envelope that resumes the trace."""
        return self.step + 1

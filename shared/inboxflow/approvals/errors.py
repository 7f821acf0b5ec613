"""What the approval function refuses, as HTTP statuses with a title and a message."""

from __future__ import annotations

from ..engine.waits import TIMEOUT_REVIEWER, Approval

INVALID_LINK = "this link is not valid"
"""The one message for every token that does not open this approval (no oracle)."""


class ApprovalError(Exception):
    """A request the approval function refuses; ``status`` is its HTTP status code."""

    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message


class AlreadyDecided(ApprovalError):
    """The approval was decided (or timed out) before this request."""

    def __init__(self, approval: Approval) -> None:
        who = approval.decided_by or TIMEOUT_REVIEWER
        super().__init__(409, "Already decided", f"already decided: {approval.decision} by {who}")
        self.approval = approval


def invalid_link() -> ApprovalError:
    """The refusal of a token that does not open the approval (the same for every cause)."""
    return ApprovalError(403, "Link not valid", INVALID_LINK)

"""The planner graph's settings (``inboxflow.yaml`` ``graphs: planner:``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ...field_defaults import empty_list

if TYPE_CHECKING:
    from ...ports.wired import Ports

DAY_S = 86400.0


class PlannerSettings(BaseModel):
    """How the planner works with the agency and waits for the customer.

    Attributes:
        reviewers: the agency's reviewers (plans to approve, human review requests);
            empty: the mailbox the email arrived in.
        review_tools: tools whose plans the agency reviews, besides those the policy
            always puts up for review (``ask_customer``, ``get_rate``).
        review_deadline_s: how long a plan waits for the agency (then ``needs_review``).
        reminder_after_days: a customer who has not answered is reminded after this.
        give_up_after_days: a customer who has not answered by then: ``needs_review``.
        max_tool_attempts: failed calls of one tool in a row before human review.
        max_plans: planning steps in one trace before human review (a loop guard).
    """

    model_config = ConfigDict(extra="forbid")

    reviewers: list[str] = Field(default_factory=empty_list)
    review_tools: list[str] = Field(
        default_factory=lambda: ["add_vehicle", "prepare_final_summary"]
    )
    review_deadline_s: float = Field(default=2 * DAY_S, gt=0)
    reminder_after_days: float = Field(default=3, gt=0)
    give_up_after_days: float = Field(default=7, gt=0)
    max_tool_attempts: int = Field(default=3, ge=1, le=10)
    max_plans: int = Field(default=40, ge=5)

    @model_validator(mode="after")
    def _reminder_first(self) -> PlannerSettings:
        if self.give_up_after_days <= self.reminder_after_days:
            raise ValueError(
                f"give_up_after_days ({self.give_up_after_days:g}) must be later than "
                f"reminder_after_days ({self.reminder_after_days:g})"
            )
        from .state import TOOL_NAMES

        unknown = [name for name in self.review_tools if name not in TOOL_NAMES]
        if unknown:
            raise ValueError(f"review_tools: unknown tools {unknown}; tools: {list(TOOL_NAMES)}")
        return self


def planner_settings(ports: Ports) -> PlannerSettings:
    """The planner's settings among ``ports.graph_settings``."""
    return ports.graph_settings.of("planner", PlannerSettings)

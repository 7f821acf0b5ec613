"""The planner's LLM task: its prompt and output schema.

| task                  | node    | output schema     |
|-----------------------|---------|-------------------|
| ``planner_next_action`` | planner | ``PlannerDecision`` |

The offline model plays it with the deterministic policy in :mod:`.offline`
(``task.offline``), imported on the first offline call only: a deployment on
Gemini never loads it. What holds whatever the model says is in
:mod:`.review_policy`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from ...ports.llm import LLMTask, offline_heuristic
from .state import CustomerFacts

QUOTING_TOOLS = ("quote_initiate", "add_driver", "add_vehicle", "get_rate")


class PlannerDecision(BaseModel):
    """The planner's structured answer.

    Attributes:
        reasoning: why, in one or two sentences.
        customer_info: everything known of the customer after reading the messages.
        action: ``call_tool`` (``tool_name`` with ``args_json``), ``wait_customer`` or ``finish``.
        tool_name: the tool to call.
        args_json: its arguments, a JSON object.
        request_review: the model wants the agency to review this plan.
    """

    reasoning: str
    customer_info: CustomerFacts
    action: Literal["call_tool", "wait_customer", "finish"]
    tool_name: str | None = None
    args_json: str = "{}"
    request_review: bool = False

    def args(self) -> dict[str, Any]:
        """The arguments as an object (an unreadable ``args_json`` gives none)."""
        try:
            value = json.loads(self.args_json or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


PLAN_SYSTEM = (
    "You are the planner of an insurance agency's quoting assistant. You build a personal "
    "auto (PPA) quote for a customer who wrote by email: open the quote (quote_initiate), "
    "add the driver (add_driver), add the vehicle (add_vehicle), rate it (get_rate), then "
    "send the summary (prepare_final_summary). When information is missing, ask the customer "
    "(ask_customer with the missing fields) and then wait for their reply (wait_customer). "
    "If the agency rejected or edited your last plan (human_feedback), replan from its "
    "feedback first. Tool results follow a status contract: success with data, or error "
    "with a message, a code and the field at fault. Retry transient errors, ask the customer "
    "for a field the service refused, and call request_human_review when you cannot go on."
)
PLAN_TEMPLATE = """The trace so far, as JSON (messages, customer_info, quote_session,
last_tool_outputs, human_feedback, failures by tool, limits):
$state

Tools and their arguments (JSON Schema): $tools

Answer with your reasoning, the customer_info you read from the messages, and one action."""


_offline_plan = offline_heuristic(f"{__package__}.offline:offline_plan")


PLAN_TASK = LLMTask(
    name="planner_next_action",
    output_model=PlannerDecision,
    system=PLAN_SYSTEM,
    template=PLAN_TEMPLATE,
    offline=_offline_plan,
)


__all__ = ["PLAN_TASK", "PlannerDecision"]

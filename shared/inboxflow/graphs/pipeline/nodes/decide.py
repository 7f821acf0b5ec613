"""decide: which tools does answering this email need?

| node     | decide                                                                 |
|----------|------------------------------------------------------------------------|
| inputs   | email, classification, context.sender_known                            |
| outputs  | tool_plan [{name, arguments, reason}]                                  |
| LLM task | ``decide_tools`` -> ``ToolDecision``                                    |
| routes   | no tools -> generate; otherwise -> execute_tools                       |

Tool rules (the offline model applies them exactly; a real model is given them):

| category        | tools                                                       |
|-----------------|-------------------------------------------------------------|
| meeting_request | check_calendar, create_draft                                |
| complaint       | get_contact, create_draft (never auto-sent)                 |
| inquiry         | get_contact (only when the sender is a contact), create_draft |
| follow_up       | get_contact, create_draft                                   |
| other           | create_draft                                                |
| spam            | none                                                        |

The model picks tools; the node fills in their arguments from the email
(who to look up, which thread to answer) and drops any tool it does not know.
"""

from __future__ import annotations

from typing import Any, get_args

from ....engine.context import NodeContext
from ....engine.step import Step
from ....errors import NodeFailed
from ....mail import prompt_fields, reply_subject
from ..settings import pipeline_settings
from ..state import PipelineState, ToolCall
from ..tasks import DECIDE_TOOLS, ToolName
from ..tools import pipeline_tools

DECIDABLE_TOOLS = frozenset(get_args(ToolName))
"""The tools this node may plan; the others (send_email, mark_as_read, schedule_meeting) are
for graphs whose agents act on their own, and for reviewers' decisions."""


def decide(state: PipelineState, ctx: NodeContext) -> Step:
    """Choose the tools and their arguments."""
    if state.classification is None or state.context is None:
        raise NodeFailed("decide needs classification and context")
    email = state.email
    inputs = {
        **prompt_fields(email),
        "category": state.classification.category,
        "confidence": f"{state.classification.confidence:.2f}",
        "sender_known": "yes" if state.context.sender_known else "no",
        "tools": "\n".join(
            f"- {t.name}: {t.description}" for t in pipeline_tools() if t.name in DECIDABLE_TOOLS
        ),
    }
    decision = ctx.generate(DECIDE_TOOLS, inputs)
    settings = pipeline_settings(ctx.ports)
    reply_to = email.reply_address()  # a forward's writer, else Reply-To, else the sender
    arguments: dict[str, dict[str, Any]] = {
        "get_contact": {"email": email.sender.address},
        "check_calendar": {
            "days": settings.calendar_days,
            "duration_minutes": decision.meeting_minutes or 30,
            "preferred_weekdays": list(decision.preferred_weekdays),
            "part_of_day": decision.part_of_day,
        },
        "create_draft": {
            "to": reply_to,
            "subject": reply_subject(email.subject),
            "thread_id": email.thread_id,
        },
    }
    plan: list[ToolCall] = []
    for choice in decision.tools:
        if choice.name in arguments and all(call.name != choice.name for call in plan):
            plan.append(
                ToolCall(name=choice.name, arguments=arguments[choice.name], reason=choice.reason)
            )
    return Step(update={"tool_plan": plan}, goto="execute_tools" if plan else "generate")


__all__ = ["DECIDABLE_TOOLS", "decide"]

"""execute_tools: run the read tools now, keep the action tools for dispatch.

| node     | execute_tools                                                          |
|----------|------------------------------------------------------------------------|
| inputs   | tool_plan, context                                                     |
| outputs  | tool_results, planned_actions, context {contact, calendar}             |
| LLM task | none                                                                   |
| routes   | -> generate                                                            |

Each read tool runs through ``ctx.call_tool`` (recorded on the step log with
its arguments and result); a failing tool becomes ``{"error": ...}`` for
that tool alone and the rest still run. Action tools (``create_draft``)
change the world, so they are only planned here and performed once, by
dispatch, through the effect journal.
"""

from __future__ import annotations

from ....engine.context import NodeContext
from ....engine.step import Step
from ..state import CalendarAvailability, Context, PipelineState, ToolCall, ToolResult


def execute_tools(state: PipelineState, ctx: NodeContext) -> Step:
    """Run the planned read tools; record the planned actions."""
    context = state.context.model_copy() if state.context else Context()
    results: list[ToolResult] = []
    actions: list[ToolCall] = []
    for call in state.tool_plan:
        if call.name in ctx.tools and ctx.tools.get(call.name).action:
            actions.append(call)
            continue
        outcome = ctx.call_tool(call.name, call.arguments)
        error = outcome.get("error")
        results.append(ToolResult(name=call.name, ok=error is None, error=error))
        if error is not None:
            continue
        if call.name == "get_contact" and outcome.get("found"):
            context.contact = outcome.get("contact")
        elif call.name == "check_calendar":
            context.calendar = CalendarAvailability.model_validate(outcome)
    return Step(
        update={"tool_results": results, "planned_actions": actions, "context": context},
        goto="generate",
    )

"""agent_turn: one LLM call with the profile's tools.

| node     | agent_turn                                                                |
|----------|---------------------------------------------------------------------------|
| inputs   | messages, profile, iteration                                              |
| outputs  | messages (+ the assistant turn), pending_calls, iteration, status, ...    |
| LLM      | ``LanguageModel.chat`` (function calling), recorded as ``call_type=agent`` |
| routes   | -> agent_tools (tool calls) ; -> finish (no calls, error, max turns)      |

No tool calls: ``completed`` with the text as ``final_message``. The model
failing after its retries: ``error`` with the message (the trace then ends
``needs_review``; every earlier turn stays checkpointed). ``max_iterations``
turns taken: ``max_iterations``.
"""

from __future__ import annotations

import json
import time
from functools import cache
from typing import Any

from ....engine.context import NodeContext
from ....engine.step import Step
from ....errors import NodeFailed, RetryableError
from ....ports.llm import AgentTurn, ChatSettings, LLMFailed, LLMUsage
from ..audit import record_llm_call
from ..state import AgentState
from ..tasks import OFFLINE_POLICIES
from ..tools import AGENT_TOOLS


def agent_turn(state: AgentState, ctx: NodeContext) -> Step:
    """Ask the model for the next turn."""
    profile = state.profile
    if state.iteration >= profile.max_iterations:
        return Step(update={"status": "max_iterations"}, goto="finish")
    if not ctx.uses_llm:
        raise NodeFailed("agent_turn asks the model but does not declare uses_llm=True")
    settings = ChatSettings(
        model=profile.model or "",
        temperature=profile.temperature,
        max_tokens=profile.max_tokens,
        profile=profile.name,
        offline=OFFLINE_POLICIES.get(profile.name),
        role="agent",
    )
    specs = tool_specs(tuple(profile.tools))
    iteration = state.iteration + 1
    started = time.perf_counter()
    try:
        turn = ctx.llm.chat(list(state.messages), specs, settings)
    except (LLMFailed, RetryableError) as exc:
        usage = exc.usage if isinstance(exc, LLMFailed) else LLMUsage(model=ctx.llm.name)
        record_llm_call(ctx, profile, iteration, usage, started, error=str(exc))
        return Step(
            update={"status": "error", "error": f"turn {iteration}: {exc}", "iteration": iteration},
            goto="finish",
        )
    record_llm_call(ctx, profile, iteration, turn.usage, started)
    return _after(state, turn, iteration)


@cache
def _specs(tools: tuple[str, ...]) -> str:
    return json.dumps(AGENT_TOOLS.only([t for t in tools if t in AGENT_TOOLS]).openai_specs())


def tool_specs(tools: tuple[str, ...]) -> list[dict[str, Any]]:
    """The profile's tools in the OpenAI function-calling format (built once per tool list)."""
    return list(json.loads(_specs(tools)))


def _after(state: AgentState, turn: AgentTurn, iteration: int) -> Step:
    calls = [call.as_dict() for call in turn.tool_calls]
    message: dict[str, object] = {"role": "assistant", "content": turn.text}
    if calls:
        message["tool_calls"] = calls
    update: dict[str, object] = {
        "messages": [*state.messages, message],
        "pending_calls": calls,
        "iteration": iteration,
    }
    if not calls:
        update.update(status="completed", final_message=turn.text)
        return Step(update=update, goto="finish")
    return Step(update=update, goto="agent_tools")

"""Audit records of agent runs, in the checkpoint store (the same documents on SQLite and Firestore).

- ``agent_runs/{run_id}`` (the run id is the trace id): trace_id, profile, status,
  tool_calls_log (JSON list of ``{tool, arguments, result, iteration}``),
  final_message, iterations, error, created_at.
- ``llm_calls/{trace_id}-{step}``: one per turn: call_type ``agent``, model,
  input/output tokens when reported, latency_ms, outcome, error.
- ``email_events/{trace_id}``: one summary per processed email: graph, rule,
  profile, status.

Each is written with a deterministic id, so a re-run step rewrites the same document.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ...engine.context import NodeContext
from ...ports.llm import LLMUsage
from ...schema import AGENT_RUNS, EMAIL_EVENTS, LLM_CALLS
from .state import AgentState, ProfileSnapshot


def record_llm_call(
    ctx: NodeContext,
    profile: ProfileSnapshot,
    iteration: int,
    usage: LLMUsage,
    started: float,
    error: str | None = None,
) -> None:
    """One ``llm_calls`` record for this turn (and the same on the step log)."""
    record: dict[str, Any] = {
        "call_type": "agent",
        "trace_id": ctx.trace_id,
        "step": ctx.step,
        "iteration": iteration,
        "profile": profile.name,
        "model": usage.model,
        "requested_model": profile.model,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "latency_ms": round((time.perf_counter() - started) * 1000, 3),
        "attempts": usage.attempts,
        "outcome": "failed" if error is not None else usage.outcome,
        "error": error,
        "at": ctx.clock.now(),
        "expire_at": ctx.expire_at,
    }
    ctx.llm_calls.append(
        {"task": "agent_turn", **{k: v for k, v in record.items() if v is not None}}
    )
    ctx.store.set(LLM_CALLS.path(f"{ctx.trace_id}-{ctx.step:04d}"), record)


def record_run(ctx: NodeContext, state: AgentState) -> None:
    """The run's ``agent_runs`` record and the email's ``email_events`` summary."""
    now = ctx.clock.now()
    log = [entry.model_dump(mode="json", exclude={"call_id"}) for entry in state.tool_log]
    run = {
        "run_id": ctx.trace_id,
        "trace_id": ctx.trace_id,
        "profile": state.profile.name,
        "status": state.status,
        "tool_calls_log": json.dumps(log, ensure_ascii=False, default=str),
        "final_message": state.final_message,
        "iterations": state.iteration,
        "error": state.error or state.escalation,
        "reply": state.reply,
        "created_at": now,
        "expire_at": ctx.expire_at,
    }
    ctx.store.set(AGENT_RUNS.path(ctx.trace_id), run)
    ctx.store.set(
        EMAIL_EVENTS.path(ctx.trace_id),
        {
            "trace_id": ctx.trace_id,
            "graph": ctx.graph,
            "rule": state.rule,
            "profile": state.profile.name,
            "status": state.status,
            "subject": str(state.email.get("subject", "")),
            "at": now,
            "expire_at": ctx.expire_at,
        },
    )

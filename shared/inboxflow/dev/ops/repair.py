"""Repairing traces without a database console: fork one from a step, retry a failed step.

``fork`` starts a new trace from the state a trace's step log holds after step
K (e.g. after a prompt fix), at the node step K routed to. The fork's
checkpoint names its origin (``forked_from``) and the origin lists its forks
(``forks``); the fork's first span links to the origin's trace.

``retry`` re-runs the step a ``needs_review`` trace failed at, under the same
step number: the effect journal is keyed by step, so an effect the failed
attempt completed is not repeated. The failed attempt's step log entry is
kept under ``traces/{trace_id}/retried``. It also re-publishes the step of a
stuck ``running`` trace (``stuck.py``: no live lease, quiet for longer than its
node's timeout): should the first delivery come back after all, the step
protocol drops the duplicate (docs/architecture.md §5).
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from ... import telemetry
from ...engine.runtime import Runtime, fold, start_log
from ...engine.step import END
from ...envelope import Envelope
from ...naming import step_path, trace_path
from ...ports import inline_log
from ...ports.checkpoint import Checkpoint, TraceLink
from ...ports.documents import Transaction
from ...schema import RETRIED
from ...stuck import stuck

log = logging.getLogger("inboxflow.repair")


class RepairRefused(Exception):
    """The repair asked for cannot be done to this trace; the message says why and what to do."""


def fork(runtime: Runtime, trace_id: str, from_step: int) -> str:
    """Start a new trace from the stored state after ``from_step`` of ``trace_id``.

    Returns:
        The fork's trace id (its first envelope is published).

    Raises:
        RepairRefused: no such trace or step, or nothing runs after that step
            (it failed, paused or ended the trace), or the trace is mid-step.
    """
    store, now = runtime.store, runtime.clock.now()
    original = _trace(runtime, trace_id)
    if original.lease is not None and original.lease.expires_at > now:
        raise RepairRefused(
            f"trace {trace_id} is running step {original.lease.step}: fork it after"
        )
    logs = store.step_logs(trace_id)
    if not 0 <= from_step <= logs[-1].step_order:
        raise RepairRefused(f"trace {trace_id} has steps 0..{logs[-1].step_order}")
    entry = logs[from_step]
    target = entry.routed_to
    earlier = f"fork from step {from_step - 1} to run it again"
    if target is None:
        raise RepairRefused(f"step {from_step} ({entry.step_name}) failed: {earlier}")
    if target == END:
        raise RepairRefused(f"step {from_step} ({entry.step_name}) ended the trace: {earlier}")
    if target.startswith("pause:"):
        raise RepairRefused(f"step {from_step} ({entry.step_name}) paused: {earlier}")
    graph = runtime.graphs[original.graph]
    state = graph.state_model.model_validate(
        fold(logs, upto=from_step, checkpoint_state=original.state)
    ).model_dump(mode="json")
    fork_id = secrets.token_hex(8)
    link = TraceLink(trace_id=trace_id, step=from_step, at=now)
    with telemetry.span(
        f"fork {graph.name}", root=True, trace_id=fork_id, forked_from=trace_id, step=from_step
    ):
        telemetry.link(original.traceparent)
        traceparent = telemetry.traceparent()
    envelope = Envelope(
        trace_id=fork_id,
        graph=graph.name,
        node=target,
        step=1,
        sent_at=now,
        traceparent=traceparent,
    )
    expire_at = now + runtime.options.retention_days * 86400
    checkpoint = Checkpoint(
        trace_id=fork_id,
        graph=graph.name,
        status="running",
        step=1,
        node=target,
        state=state,
        next=[envelope.model_dump(exclude_none=True)],
        route=original.route,
        traceparent=traceparent,
        forked_from=link,
        shadow=original.shadow,  # a shadow's fork holds its effects too
        shadow_of=original.shadow_of,
        created_at=now,
        updated_at=now,
        expire_at=expire_at,
    )
    start = start_log(
        graph, state, at=now, routed_to=target, route=original.route, expire_at=expire_at
    )
    if not store.create_trace(checkpoint, start):
        raise RepairRefused(f"trace id {fork_id} is taken; try again")

    def note_fork(tx: Transaction) -> None:
        doc = tx.get(trace_path(trace_id))
        if doc is not None:
            forks = [*doc.get("forks", []), {**link.model_dump(), "trace_id": fork_id}]
            tx.set(trace_path(trace_id), {**doc, "forks": forks})

    store.run_transaction(note_fork)
    log.info(
        "trace %s forked from step %s of %s",
        fork_id,
        from_step,
        trace_id,
        extra={"trace_id": fork_id, "graph": graph.name, "node": target},
    )
    runtime.bus.publish([envelope])
    return fork_id


def retry(runtime: Runtime, trace_id: str) -> Envelope:
    """Re-run the failed step of a ``needs_review`` trace, or the step of a stuck one.

    The envelope is published; the node functions run it.

    Returns:
        The published envelope.

    Raises:
        RepairRefused: no such trace; it is running and not stuck (a delivery may
            still be under way); it is neither running nor ``needs_review``; or its
            last step did not fail (a node decided needs_review, or an approval
            timed out: nothing failed that running again would fix).
    """
    store, now = runtime.store, runtime.clock.now()
    checkpoint = _trace(runtime, trace_id)
    if checkpoint.status == "running":
        return _republish_stuck(runtime, checkpoint, now)
    last = store.step_logs(trace_id)[-1]
    if checkpoint.status != "needs_review":
        raise RepairRefused(
            f"trace {trace_id} is {checkpoint.status}: only a needs_review trace is retried"
        )
    if last.error is None or last.step_order != checkpoint.step - 1:
        reason = checkpoint.error or f"step {last.step_order} ({last.step_name}) decided so"
        raise RepairRefused(
            f"trace {trace_id} has no failed step to run again ({reason}); "
            f"fork it instead: inboxflow replay {trace_id} --from-step N"
        )
    step, node = last.step_order, last.step_name
    with telemetry.span(
        f"retry {checkpoint.graph}.{node}",
        parent=checkpoint.traceparent,
        trace_id=trace_id,
        node=node,
        step=step,
    ):
        envelope = Envelope(
            trace_id=trace_id,
            graph=checkpoint.graph,
            node=node,
            step=step,
            sent_at=now,
            traceparent=telemetry.traceparent(),
        )

    def reopen(tx: Transaction) -> None:
        doc = tx.get(trace_path(trace_id))
        if doc is None or doc.get("status") != "needs_review" or doc.get("step") != step + 1:
            raise RepairRefused(f"trace {trace_id} changed while retrying it: look again")
        inline = inline_log.entries(doc).get(step)  # the entry in the checkpoint, if there
        failed: dict[str, Any] = tx.get(step_path(trace_id, step)) or inline or {}
        tx.set(f"{trace_path(trace_id)}/{RETRIED.name}/{step:06d}-{int(now * 1000):013d}", failed)
        tx.set(
            trace_path(trace_id),
            {
                **doc,
                "status": "running",
                "step": step,
                "node": node,
                "error": None,
                "lease": None,
                "next": [envelope.model_dump(exclude_none=True)],
                "traceparent": envelope.traceparent or doc.get("traceparent"),
                "updated_at": now,
            },
        )

    store.run_transaction(reopen)
    log.info(
        "trace %s: retrying step %s (%s)",
        trace_id,
        step,
        node,
        extra={
            "trace_id": trace_id,
            "graph": checkpoint.graph,
            "node": node,
            "step": step,
            "outcome": "running",
        },
    )
    runtime.bus.publish([envelope])
    return envelope


def _republish_stuck(runtime: Runtime, checkpoint: Checkpoint, now: float) -> Envelope:
    """Publish again the step a stuck trace waits on (the envelope its last commit recorded)."""
    trace_id = checkpoint.trace_id
    if stuck(checkpoint, runtime.graphs, now) is None:
        lease = checkpoint.lease
        doing = (
            f"step {lease.step} is leased until {lease.expires_at:.0f}"
            if lease is not None and lease.expires_at > now
            else f"it changed {now - checkpoint.updated_at:.0f} s ago"
        )
        raise RepairRefused(
            f"trace {trace_id} is running and not stuck ({doing}): a delivery may still be "
            "under way; `inboxflow traces --stuck` lists the stuck ones"
        )
    recorded = [Envelope.model_validate(doc) for doc in checkpoint.next]
    envelope = next(
        (e for e in recorded if e.step == checkpoint.step and e.node == checkpoint.node),
        Envelope(
            trace_id=trace_id,
            graph=checkpoint.graph,
            node=checkpoint.node,
            step=checkpoint.step,
            sent_at=now,
            traceparent=checkpoint.traceparent,
        ),
    )
    log.warning(
        "trace %s: re-publishing stuck step %s (%s)",
        trace_id,
        envelope.step,
        envelope.node,
        extra={
            "trace_id": trace_id,
            "graph": checkpoint.graph,
            "node": envelope.node,
            "step": envelope.step,
        },
    )
    runtime.bus.publish([envelope])
    return envelope


def _trace(runtime: Runtime, trace_id: str) -> Checkpoint:
    checkpoint = runtime.checkpoints.get_trace(trace_id)
    if checkpoint is None:
        raise RepairRefused(f"no trace {trace_id}")
    if checkpoint.graph not in runtime.graphs:
        raise RepairRefused(f"trace {trace_id} runs graph {checkpoint.graph!r}, not deployed here")
    return checkpoint


__all__ = ["RepairRefused", "fork", "retry"]

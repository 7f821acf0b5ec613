"""Stuck traces (``stuck.py``) are found and ``repair.retry`` publishes their step again.

A node server killed mid-step whose message then never comes back (the emulator
lost its subscription, the message was dead-lettered) leaves its trace
``running`` with nothing to run it: found once its lease ran out and it has been
quiet for longer than the node's timeout, re-published by ``retry``, run to the
end with its effect done once; the first delivery, should it come back, is a
duplicate the step protocol drops.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.dev.ops.repair import RepairRefused, retry
from inboxflow.ports.checkpoint import Lease
from inboxflow.stuck import GRACE_S, stuck, stuck_traces
from tests.harness.toy_graph import OUTBOXES, make_runtime


def _killed_in_act(tmp_path: Path) -> tuple[Any, Any, Any, str]:
    """A toy trace whose ``act`` server died mid-effect; its message was dead-lettered."""
    runtime, bus, outbox = make_runtime(tmp_path, max_attempts=1)
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain(limit=1)  # count
    send = outbox.send

    def die(key: str, text: str) -> Any:
        raise SimulatedCrash("SIGKILL in act")

    OUTBOXES[runtime.store].send = die
    bus.drain(limit=1)
    OUTBOXES[runtime.store].send = send
    assert len(bus.dead_letters) == 1 and len(bus) == 0
    return runtime, bus, outbox, trace_id


def test_a_killed_step_is_stuck_once_its_lease_ran_out_and_its_node_timeout_passed(
    tmp_path: Path,
) -> None:
    runtime, _, _, trace_id = _killed_in_act(tmp_path)
    store, graphs, clock = runtime.store, runtime.graphs, runtime.clock
    checkpoint = store.get_trace(trace_id)
    assert checkpoint.status == "running" and checkpoint.node == "act"
    assert checkpoint.lease is not None and checkpoint.lease.step == 2  # taken, never released
    assert stuck_traces(store, graphs, clock.now()) == []  # the lease is live
    clock.advance(checkpoint.lease.expires_at - clock.now() + 1)
    timeout = graphs["toy"].nodes["act"].timeout_s
    assert clock.now() - checkpoint.updated_at > timeout + GRACE_S
    [found] = stuck_traces(store, graphs, clock.now())
    assert found.checkpoint.trace_id == trace_id and found.timeout_s == timeout
    assert found.lease_expired_at == checkpoint.lease.expires_at


def test_a_step_nobody_took_is_stuck_only_after_its_node_timeout(tmp_path: Path) -> None:
    runtime, _, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})  # its first message is never delivered
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.lease is None
    timeout = runtime.graphs["toy"].nodes["count"].timeout_s
    just_in_time = checkpoint.updated_at + timeout + GRACE_S
    assert stuck(checkpoint, runtime.graphs, just_in_time) is None
    found = stuck(checkpoint, runtime.graphs, just_in_time + 1)
    assert found is not None and found.lease_expired_at is None
    done = checkpoint.model_copy(update={"status": "done"})
    assert stuck(done, runtime.graphs, just_in_time + 1) is None
    late = Lease(step=1, owner="a-late-delivery", expires_at=just_in_time + 30)
    taken_late = checkpoint.model_copy(update={"lease": late})  # a redelivery runs it now
    assert stuck(taken_late, runtime.graphs, just_in_time + 1) is None


def test_retry_runs_a_stuck_trace_to_the_end_once_and_drops_the_late_duplicate(
    tmp_path: Path,
) -> None:
    runtime, bus, outbox, trace_id = _killed_in_act(tmp_path)
    with pytest.raises(RepairRefused, match="running and not stuck"):
        retry(runtime, trace_id)  # its lease is live: a delivery may be under way
    runtime.clock.advance(3600)
    envelope = retry(runtime, trace_id)
    assert (envelope.step, envelope.node) == (2, "act")
    bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done"
    assert len(outbox.sent) == 1  # the effect the killed step started is done once
    steps = [entry.step_name for entry in runtime.store.step_logs(trace_id)]
    assert steps == ["__start__", "count", "act", "finish"]

    [(late, _)] = bus.dead_letters  # the killed delivery comes back after all
    bus.push_raw(late)
    bus.drain()
    assert [e.step_name for e in runtime.store.step_logs(trace_id)] == steps
    assert len(outbox.sent) == 1
    assert runtime.store.get_trace(trace_id).status == "done"
    with pytest.raises(RepairRefused, match="is done"):
        retry(runtime, trace_id)

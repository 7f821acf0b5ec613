"""One write transaction per hop on the in-process bus: a commit hands the next step's lease over.

``Runtime._handoff``: when the next delivery comes back to the same runtime, the
commit of step k writes the lease of step k+1 for the owner that delivery then
uses, and ``take_lease`` finds it already taken (nothing written). Everywhere
else the step protocol is unchanged.
"""

from __future__ import annotations

import pytest

from inboxflow.engine.runtime import HANDOFF_S
from inboxflow.errors import LeaseHeld
from tests.harness.toy_graph import make_runtime


def _changes(runtime) -> int:
    """Rows written through the store's connection so far."""
    return runtime.store._conn.total_changes


def test_a_commit_hands_the_next_steps_lease_to_its_delivery(tmp_path):
    runtime, bus, outbox = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})
    assert bus.drain(limit=1) == 1  # count (step 1) ran
    after_count = runtime.store.get_trace(trace_id)
    assert after_count.step == 2 and after_count.lease is not None
    handed = after_count.lease
    assert handed.step == 2 and handed.expires_at == runtime.clock.now() + 10 + 30 + HANDOFF_S
    with pytest.raises(LeaseHeld):  # nobody else runs step 2 meanwhile
        runtime.store.take_lease(trace_id, 2, "other-worker", runtime.clock.now(), ttl_s=60)

    assert bus.drain(limit=1) == 1  # act (step 2), on the handed-over lease
    before = _changes(runtime)
    assert bus.drain() == 1  # finish (step 3): its commit is the only write
    assert _changes(runtime) - before == 2  # the checkpoint and the step log entry

    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done" and checkpoint.lease is None
    logs = runtime.store.step_logs(trace_id)
    assert logs[2].worker == handed.owner
    assert [entry.step_order for entry in logs] == [0, 1, 2, 3]
    assert len(outbox.sent) == 1


def test_a_delivery_that_waited_too_long_takes_the_lease_again(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain(limit=1)
    handed = runtime.store.get_trace(trace_id).lease
    runtime.clock.advance(HANDOFF_S + 1)  # less than the node's timeout + 30 s is left
    before = _changes(runtime)
    bus.drain(limit=1)
    assert _changes(runtime) - before > 2 + 2  # effect journal (2) + commit (2) + the lease
    bus.drain()
    assert runtime.store.get_trace(trace_id).status == "done"
    assert runtime.store.step_logs(trace_id)[2].worker == handed.owner


def test_no_handoff_when_the_next_delivery_goes_elsewhere(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    bus.handler = lambda message: runtime.handle_message(message)  # another consumer
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain(limit=1)
    assert runtime.store.get_trace(trace_id).lease is None
    bus.drain()
    assert runtime.store.get_trace(trace_id).status == "done"


def test_a_lease_that_already_covers_the_request_is_not_written_again(tmp_path):
    runtime, _, _ = make_runtime(tmp_path)
    store = runtime.store
    trace_id = runtime.start("toy", {"text": "hello"})
    store.take_lease(trace_id, 1, "worker-a", now=1000.0, ttl_s=100)
    again = store.take_lease(trace_id, 1, "worker-a", now=1010.0, ttl_s=60)
    assert again.step == 1
    assert store.get_trace(trace_id).lease.expires_at == 1100.0  # not shortened: not written
    with pytest.raises(LeaseHeld):
        store.take_lease(trace_id, 1, "worker-b", now=1010.0, ttl_s=60)
    store.take_lease(trace_id, 1, "worker-a", now=1050.0, ttl_s=60)  # needs 1110: written
    assert store.get_trace(trace_id).lease.expires_at == 1110.0

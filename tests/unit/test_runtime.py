"""The step protocol (docs/architecture.md §5) on the embedded default."""

from __future__ import annotations

import base64
import itertools

import pytest

from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.engine.runtime import fold
from inboxflow.envelope import Envelope
from inboxflow.errors import EarlyArrival, LeaseHeld, RejectedEnvelope
from tests.harness.toy_graph import ToyState, make_runtime


def test_trace_runs_to_end_with_one_step_log_entry_per_node(tmp_path):
    runtime, bus, outbox = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done"
    assert checkpoint.step == 4
    assert checkpoint.next == []
    assert checkpoint.state["count"] == 2
    assert checkpoint.state["receipt"] == {"id": 1}
    logs = runtime.store.step_logs(trace_id)
    assert [entry.step_name for entry in logs] == ["__start__", "count", "act", "finish"]
    assert logs[1].output_delta == {"count": 1}
    assert logs[2].output_delta == {"receipt": {"id": 1}}
    assert outbox.sent == [{"key": f"{trace_id}:2:send", "text": "hello"}]


def test_step_log_stores_deltas_and_fold_rebuilds_every_snapshot(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain()
    logs = runtime.store.step_logs(trace_id)
    state = runtime.store.get_trace(trace_id).state
    assert "text" not in logs[1].output_delta
    assert "text" not in logs[0].output_delta  # a frozen input is stored once, in the checkpoint
    assert logs[0].inputs_in_checkpoint == ["text"]
    assert fold(logs, upto=0, checkpoint_state=state) == {**ToyState(text="hello").model_dump()}
    assert fold(logs, upto=1, checkpoint_state=state)["count"] == 1
    assert fold(logs, upto=1, checkpoint_state=state)["receipt"] is None
    assert fold(logs, checkpoint_state=state) == state
    with pytest.raises(ValueError, match="checkpoint_state"):
        fold(logs)


def test_a_node_that_changes_a_frozen_input_makes_the_trace_need_review(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "original", "mutate_input": True})
    bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "needs_review"
    assert "frozen input fields: ['text']" in checkpoint.error
    assert checkpoint.state["text"] == "original"


def test_duplicate_delivery_is_a_no_op_that_republishes_next(tmp_path):
    runtime, bus, outbox = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain(limit=1)  # step 1 (count) ran; step 2 envelope is queued
    assert len(bus) == 1
    published = bus.published
    first = Envelope(trace_id=trace_id, graph="toy", node="count", step=1)
    assert runtime.handle(first) == "duplicate"
    assert bus.published == published + 1  # the recorded next envelope went out again
    bus.drain()
    assert runtime.store.get_trace(trace_id).status == "done"
    assert len(outbox.sent) == 1
    assert len(runtime.store.step_logs(trace_id)) == 4


def test_early_arrival_is_retryable(tmp_path):
    runtime, _, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})
    with pytest.raises(EarlyArrival):
        runtime.handle(Envelope(trace_id=trace_id, graph="toy", node="act", step=2))


def test_live_lease_of_another_worker_is_retryable_until_it_expires(tmp_path):
    runtime, _, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})
    runtime.store.take_lease(trace_id, 1, "other-worker", runtime.clock.now(), ttl_s=60)
    envelope = Envelope(trace_id=trace_id, graph="toy", node="count", step=1)
    with pytest.raises(LeaseHeld):
        runtime.handle(envelope)
    assert runtime.store.get_trace(trace_id).step == 1
    runtime.clock.advance(61)
    assert runtime.handle(envelope) == "ran"
    assert runtime.store.get_trace(trace_id).step == 2


def test_crash_after_commit_before_publish_is_repaired_by_redelivery(tmp_path):
    runtime, bus, outbox = make_runtime(tmp_path)
    crashed = []

    def fault(point: str) -> None:
        if point == "after_commit:count" and not crashed:
            crashed.append(point)
            raise SimulatedCrash(point)

    runtime.fault = fault
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain()
    assert crashed
    assert bus.redeliveries == 1
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done"
    assert len(outbox.sent) == 1


def test_crash_inside_side_effect_after_it_happened_does_not_repeat_it(tmp_path):
    runtime, bus, outbox = make_runtime(tmp_path)
    crashed = []

    def fault(point: str) -> None:
        if point == "after_effect:send" and not crashed:
            crashed.append(point)
            raise SimulatedCrash(point)

    runtime.fault = fault
    trace_id = runtime.start("toy", {"text": "hello"})
    bus.drain()  # the crashed worker kept its lease: redelivery waits for it to expire
    assert crashed
    assert runtime.store.get_trace(trace_id).status == "done"
    assert len(outbox.sent) == 1
    effect = runtime.store.get(f"effects/{trace_id}:2:send")
    assert effect["status"] == "done" and effect["reconciled"] is True


def test_node_retries_then_succeeds(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "x", "flaky": 2})
    bus.drain()
    assert runtime.store.get_trace(trace_id).status == "done"
    assert runtime.store.step_logs(trace_id)[1].attempt == 3


def test_exhausted_retries_make_the_trace_need_review_with_the_reason(tmp_path):
    runtime, bus, outbox = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "x", "flaky": 5})
    bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "needs_review"
    assert "retries exhausted after 3 attempts" in checkpoint.error
    assert "upstream 503" in checkpoint.error
    assert runtime.store.step_logs(trace_id)[1].error == checkpoint.error
    assert outbox.sent == []


def test_undeclared_route_makes_the_trace_need_review(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "x", "bad_route": True})
    bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "needs_review"
    assert "'nowhere'" in checkpoint.error
    assert checkpoint.state["count"] == 0  # nothing of the refused step was applied


def test_pause_waits_and_resume_carries_the_decision(tmp_path):
    runtime, bus, outbox = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "draft", "pause": True})
    bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "waiting"
    assert checkpoint.node == "finish"
    assert checkpoint.pause["payload"] == {"text": "draft"}
    assert len(checkpoint.pause["payload_hash"]) == 64
    stray = Envelope(trace_id=trace_id, graph="toy", node="finish", step=checkpoint.step)
    assert runtime.handle(stray) == "rejected"  # waiting traces only move on a decision
    runtime.resume(trace_id, {"decision": "reject", "reviewer": "r@example.com"})
    bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "rejected"
    assert checkpoint.state["decision"] == "reject"
    assert outbox.sent == []


def test_start_is_idempotent_per_trace_id(tmp_path):
    runtime, bus, outbox = make_runtime(tmp_path)
    runtime.start("toy", {"text": "a"}, trace_id="fixed")
    runtime.start("toy", {"text": "b"}, trace_id="fixed")
    bus.drain()
    assert runtime.store.get_trace("fixed").state["text"] == "a"
    assert len(outbox.sent) == 1


def _raw(data: bytes) -> dict:
    return {"data": base64.b64encode(data).decode(), "messageId": "m"}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"data": "%%% not base64 %%%"}, "not valid base64"),
        (_raw(b"not json"), "not JSON"),
        (_raw(b"[1, 2]"), "expected an object"),
        (_raw(b'{"trace_id": "t"}'), "graph: Field required"),
        (_raw(b'{"trace_id": "t", "graph": "toy", "node": "count", "step": -1}'), "step"),
        (_raw(b"x" * (10 * 1024 * 1024)), "exceeds"),
        ({"attributes": {}}, "no data"),
        ("just a string", "expected an object"),
    ],
)
def test_non_envelopes_are_acknowledged_recorded_and_dead_lettered(tmp_path, message, expected):
    runtime, bus, _ = make_runtime(tmp_path)
    bus.push_raw(message)
    bus.drain()
    assert bus.redeliveries == 0  # no crash loop
    failures = runtime.store.list("failures")
    assert len(failures) == 1
    assert failures[0][1]["status"] == "failed"
    assert expected in failures[0][1]["reason"]
    assert len(bus.dead_letters) == 1


@pytest.mark.parametrize(
    ("envelope", "expected"),
    [
        ({"node": "nope"}, "has no node 'nope'"),
        ({"graph": "other"}, "unknown graph 'other'"),
        ({"trace_id": "missing"}, "no trace missing"),
        ({"node": "act"}, "belongs to node 'count'"),
    ],
)
def test_envelopes_no_trace_can_accept_are_refused_and_recorded(tmp_path, envelope, expected):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "x"})
    bus._heap.clear()
    fields = {"trace_id": trace_id, "graph": "toy", "node": "count", "step": 1, **envelope}
    assert runtime.handle(Envelope(**fields)) == "rejected"
    ((_, failure),) = runtime.store.list("failures")
    assert expected in failure["reason"]
    assert runtime.store.get_trace(trace_id).status == "running"


def test_envelope_for_a_finished_trace_is_refused_not_retried(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "x"})
    bus.drain()
    late = Envelope(trace_id=trace_id, graph="toy", node="finish", step=9)
    assert runtime.handle(late) == "rejected"
    replay = Envelope(trace_id=trace_id, graph="toy", node="count", step=1)
    assert runtime.handle(replay) == "duplicate"
    assert runtime.store.get_trace(trace_id).status == "done"


def test_a_decision_for_a_running_trace_is_refused(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "x"})
    bus._heap.clear()
    forged = Envelope(
        trace_id=trace_id, graph="toy", node="count", step=1, resume={"decision": "approve"}
    )
    assert runtime.handle(forged) == "rejected"
    assert runtime.store.get_trace(trace_id).step == 1


@pytest.mark.parametrize(
    ("resume", "expected"),
    [
        (
            {"decision": "maybe", "reviewer": "r@example.com"},
            "approve pauses take approve or reject",
        ),
        ({"reviewer": "r@example.com"}, "resume None by r@example.com"),
        ({"decision": "reply", "kind": "customer_reply"}, "answers a customer_reply pause"),
        ({"decision": "approve", "kind": "customer_reply"}, "but it waits on approve pause"),
    ],
)
def test_a_resume_that_does_not_answer_the_pause_is_refused_recorded_and_changes_nothing(
    tmp_path, resume, expected
):
    runtime, bus, outbox = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "draft", "pause": True})
    bus.drain()
    before = runtime.store.get_trace(trace_id)
    steps_before = len(runtime.store.step_logs(trace_id))
    runtime.resume(trace_id, resume)
    bus.drain()
    assert bus.redeliveries == 0  # acknowledged: retrying cannot help
    ((_, failure),) = runtime.store.list("failures")
    assert expected in failure["reason"] and failure["trace_id"] == trace_id
    assert failure["step"] == before.step
    after = runtime.store.get_trace(trace_id)
    assert (after.status, after.step, after.pause, after.state) == (
        "waiting",
        before.step,
        before.pause,
        before.state,
    )
    assert len(runtime.store.step_logs(trace_id)) == steps_before
    runtime.resume(trace_id, {"decision": "approve", "kind": "approve"})  # the right one still goes
    bus.drain()
    assert runtime.store.get_trace(trace_id).status == "done" and outbox.sent == []


def test_a_resume_for_another_pause_of_the_trace_is_refused(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "draft", "pause": True})
    bus.drain()
    waiting = runtime.store.get_trace(trace_id)
    earlier = f"{trace_id}-{waiting.step - 2}"  # the id a pause one step earlier would have had
    decision = {"decision": "approve", "approval_id": earlier}
    with pytest.raises(RejectedEnvelope, match="waits on"):  # not even published
        runtime.resume(trace_id, decision)
    assert len(bus) == 0
    resume = Envelope(  # as a replayed dead letter comes: the runtime refuses it at delivery
        trace_id=trace_id,
        graph=waiting.graph,
        node=waiting.node,
        step=waiting.step,
        sent_at=0.0,
        resume=decision,
    )
    bus.publish([resume])
    bus.drain()
    ((_, failure),) = runtime.store.list("failures")
    assert earlier in failure["reason"] and "waits on" in failure["reason"]
    assert runtime.store.get_trace(trace_id).status == "waiting"


def test_object_fields_changed_in_part_are_stored_as_patches_and_fold_back():
    from inboxflow.engine.runtime import _delta
    from inboxflow.ports.checkpoint import StepLog

    before = {"a": 1, "ctx": {"x": 1, "y": 2, "z": 3, "w": 4}, "gone": True}
    after = {"a": 1, "ctx": {"x": 1, "y": 20, "z": 3}, "new": [1]}
    delta, patch, removed = _delta(before, after)
    assert delta == {"new": [1]}
    assert patch == {"ctx": {"set": {"y": 20}, "unset": ["w"]}}
    assert removed == ["gone"]
    logs = [
        StepLog(step_name="__start__", step_order=0, output_delta=before, started_at=0),
        StepLog(
            step_name="n",
            step_order=1,
            output_delta=delta,
            output_patch=patch,
            removed=removed,
            started_at=0,
        ),
    ]
    assert fold(logs) == after


def test_a_list_that_only_grew_stores_its_new_items_and_folds_back():
    from inboxflow.engine.runtime import _delta
    from inboxflow.ports.checkpoint import StepLog

    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    states = [{"messages": turns[:1], "tags": ["a", "b"]}]
    states.append({"messages": turns, "tags": ["a", "b"]})
    states.append({"messages": [*turns, {"role": "user", "content": "more"}], "tags": ["b"]})
    states.append({"messages": [], "tags": ["b"]})
    logs = [StepLog(step_name="__start__", step_order=0, output_delta=states[0], started_at=0)]
    for order, (before, after) in enumerate(itertools.pairwise(states), start=1):
        delta, patch, removed = _delta(before, after)
        logs.append(
            StepLog(
                step_name="n",
                step_order=order,
                output_delta=delta,
                output_patch=patch,
                removed=removed,
                started_at=0,
            )
        )
    assert logs[1].output_patch == {"messages": {"append": [turns[1]]}}
    assert logs[2].output_patch == {"messages": {"append": [{"role": "user", "content": "more"}]}}
    assert logs[2].output_delta == {"tags": ["b"]}  # shrunk: replaced, never patched
    assert logs[3].output_delta == {"messages": []} and not logs[3].output_patch
    for order, state in enumerate(states):
        assert fold(logs, upto=order) == state


def test_a_state_too_large_for_a_checkpoint_is_refused_with_a_clear_error(tmp_path):
    from inboxflow.engine.runtime import StateTooLarge

    runtime, _, _ = make_runtime(tmp_path)
    with pytest.raises(
        StateTooLarge, match=r"initial state is \d+ KB; a checkpoint holds at most 900 KB"
    ):
        runtime.start("toy", {"text": "x" * (10 * 1024 * 1024)})
    assert runtime.store.list("traces") == []


def test_the_runtime_s_ports_are_its_ports_members_and_only_the_model_may_be_replaced(tmp_path):
    runtime, bus, _ = make_runtime(tmp_path)
    ports = runtime.ports
    assert runtime.bus is bus is ports.bus and runtime.clock is ports.clock
    assert runtime.store is ports.store and runtime.documents is ports.documents
    assert runtime.checkpoints is ports.checkpoints
    model = object()
    runtime.llm = model  # type: ignore[assignment]
    assert ports.llm is model and runtime.llm is model
    with pytest.raises(AttributeError, match=r"Runtime\.clock is the port"):
        runtime.clock = ports.clock

"""The production topology on one machine: the Pub/Sub emulator pushes each node's topic to
its own functions-framework process; state lands in the Firestore emulator."""

from __future__ import annotations

import time

import pytest

from inboxflow.dev.cli.local import sample_inbox
from inboxflow.envelope import Envelope
from inboxflow.mail import load_email_file
from inboxflow.workspace import seed_workspace
from tests.harness.emulated_cloud import graph_functions

pytestmark = [pytest.mark.emulator, pytest.mark.slow]


def _sample(prefix: str) -> dict:
    path = next(p for p in sample_inbox() if p.name.startswith(prefix))
    return load_email_file(path).model_dump(mode="json")


def _wait(store, trace_ids, until, timeout_s: float = 120.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        checkpoints = {t: store.get_trace(t) for t in trace_ids}
        if all(until(cp) for cp in checkpoints.values()):
            return checkpoints
        time.sleep(0.25)
    raise AssertionError({t: (cp.status, cp.node, cp.step) for t, cp in checkpoints.items()})


@pytest.fixture
def cloud(firestore_emulator, pubsub_emulator, monkeypatch):
    with graph_functions("pipeline", firestore_emulator, pubsub_emulator, monkeypatch) as pair:
        seed_workspace(pair[1].store, pair[1].clock.now())
        yield pair


def test_three_emails_take_three_routes_through_separate_function_processes(cloud):
    devcloud, runtime = cloud
    assert len(devcloud.servers) == 7
    emails = {"spam": _sample("08-"), "inquiry": _sample("01-"), "complaint": _sample("04-")}
    traces = {name: runtime.start("pipeline", {"email": email}) for name, email in emails.items()}
    done = _wait(runtime.store, traces.values(), lambda cp: cp.status != "running")

    spam, inquiry, complaint = (done[traces[n]] for n in ("spam", "inquiry", "complaint"))
    assert spam.status == "done" and spam.state["classification"]["category"] == "spam"
    assert [e.step_name for e in runtime.store.step_logs(traces["spam"])] == [
        "__start__",
        "classify",
    ]

    assert inquiry.status == "done"
    inquiry_logs = runtime.store.step_logs(traces["inquiry"])
    assert [e.step_name for e in inquiry_logs][1:] == [
        "classify",
        "retrieve",
        "decide",
        "execute_tools",
        "generate",
        "review",
        "dispatch",
    ]
    workers = {e.step_name: e.worker.rsplit(":", 1)[0] for e in inquiry_logs[1:]}
    assert len(set(workers.values())) == 7, f"each node runs in its own process: {workers}"
    drafts = runtime.store.list("mailbox_drafts")
    assert len([d for _, d in drafts if d["trace_key"].startswith(traces["inquiry"])]) == 1

    assert complaint.status == "waiting"
    assert complaint.pause["kind"] == "approve_draft"
    assert "draft" in complaint.pause["payload"]


def test_redelivered_and_resumed_envelopes_give_one_outcome(cloud):
    _, runtime = cloud
    trace_id = runtime.start("pipeline", {"email": _sample("04-")})
    waiting = _wait(runtime.store, [trace_id], lambda cp: cp.status != "running")[trace_id]
    assert waiting.status == "waiting"

    payload = dict(waiting.pause["payload"])
    payload["draft"] = payload["draft"] + "\n\nP.S. Edited by a reviewer."
    decision = {"decision": "approve", "payload": payload, "reviewer": "maya.chen@brightlane.io"}
    runtime.resume(trace_id, decision)
    runtime.resume(trace_id, decision)  # a double click: same step, one outcome
    runtime.bus.publish([Envelope(trace_id=trace_id, graph="pipeline", node="classify", step=1)])
    final = _wait(runtime.store, [trace_id], lambda cp: cp.status not in ("running", "waiting"))[
        trace_id
    ]
    time.sleep(2)  # let the stray duplicates be delivered too

    assert final.status == "done"
    drafts = [
        d for _, d in runtime.store.list("mailbox_drafts") if d["trace_key"].startswith(trace_id)
    ]
    assert len(drafts) == 1
    assert drafts[0]["body"].endswith("P.S. Edited by a reviewer.")
    assert runtime.store.get_trace(trace_id).step == final.step

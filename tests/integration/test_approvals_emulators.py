"""Human approval on the emulators: records and transactions on Firestore, the deadline task on
gcloud-tasks-emulator, the resume publish on Pub/Sub."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.clock import FakeClock
from inboxflow.engine.waits import payload_hash
from inboxflow.envelope import Envelope
from tests.harness.approval import REVIEWERS, Harness
from tests.harness.pipeline import mailbox_writes
from tests.harness.runtimes import runtime_for

pytestmark = pytest.mark.emulator


def _firestore_harness(tmp_path: Path) -> Harness:
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    return Harness(tmp_path, store=FirestoreCheckpointStore.from_env(os.environ))


def test_approve_with_edit_on_firestore(firestore_env: object, tmp_path: Path) -> None:
    h = _firestore_harness(tmp_path)
    trace_id = h.start()
    approval = h.approval_of(trace_id)
    links = h.links(approval.approval_id)
    assert {link.to for link in links} == set(REVIEWERS)
    stored_tokens = h.store.list("approval_tokens")
    assert len(stored_tokens) == 2 and all(
        links[0].token not in json.dumps(doc) for _, doc in stored_tokens
    )
    before = h.snapshot(trace_id)
    assert h.client.get(links[0].path).status_code == 200
    assert h.snapshot(trace_id) == before
    edited = "Hello Sofia - refunded today. Maya"
    late = h.form(links[1], "reject")  # the other reviewer's page, open meanwhile
    response = h.client.post(
        f"/a/{approval.approval_id}", data=h.form(links[0], "approve", draft=edited)
    )
    assert response.status_code == 200
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done"
    (draft,) = mailbox_writes(h.store, trace_id)
    assert draft["body"] == edited
    replay = h.client.post(f"/a/{approval.approval_id}", data=late)
    assert replay.status_code == 409


def test_fifty_concurrent_decisions_on_firestore(firestore_env: object, tmp_path: Path) -> None:
    h = _firestore_harness(tmp_path)
    trace_id = h.start()
    links = h.links(h.approval_of(trace_id).approval_id)
    barrier = threading.Barrier(50)
    statuses: list[int] = []
    lock = threading.Lock()
    forms = [h.form(links[n % 2], "approve" if n % 3 else "reject") for n in range(50)]

    def decide(n: int) -> None:
        link = links[n % 2]
        client = h.app.test_client()
        barrier.wait()
        response = client.post(f"/a/{link.approval_id}", data=forms[n])
        with lock:
            statuses.append(response.status_code)

    threads = [threading.Thread(target=decide, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] + [409] * 49
    approval = h.approval_of(trace_id)
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None
    assert checkpoint.status == ("done" if approval.decision == "approve" else "rejected")
    assert len(mailbox_writes(h.store, trace_id)) == (1 if approval.decision == "approve" else 0)
    assert len([d for _, d in h.store.list("approval_tokens") if d.get("used_at")]) == 1


def test_deadline_task_on_the_cloud_tasks_emulator(tasks_env: str, tmp_path: Path) -> None:
    from inboxflow.adapters.cloud_tasks import CloudTasksQueue

    queue = CloudTasksQueue.from_env(os.environ)
    queue.ensure_queue()
    clock = FakeClock(time.time())
    h = Harness(tmp_path, tasks=queue, bus=InProcessBus(clock=clock))
    trace_id = h.start()
    approval = h.approval_of(trace_id)
    tasks = list(queue.client.list_tasks(parent=queue.queue_path))
    assert [t.name.rsplit("/", 1)[1] for t in tasks] == [f"{approval.approval_id}-d0"]
    task = tasks[0]
    assert abs(task.schedule_time.timestamp() - approval.deadline) < 1e-3
    assert task.http_request.url == "http://approvals.test/timeout"
    assert json.loads(task.http_request.body) == {
        "approval_id": approval.approval_id,
        "round": 0,
        "hop": 0,
    }
    # A redelivered pausing step schedules nothing more (the journal, and the name).
    h.service.after_pause(approval)
    assert len(list(queue.client.list_tasks(parent=queue.queue_path))) == 1
    queue.close()


def test_resume_is_published_on_pubsub(pubsub_env: str, tmp_path: Path) -> None:
    from inboxflow.adapters.pubsub_bus import PubSubAdmin, PubSubBus
    from inboxflow.naming import topic_name

    h = Harness(tmp_path)
    trace_id = h.start()
    approval = h.approval_of(trace_id)
    links = h.links(approval.approval_id)
    admin = PubSubAdmin(os.environ["GOOGLE_CLOUD_PROJECT"])
    topic = topic_name("pipeline", "dispatch")
    admin.ensure_pull_subscription("dispatch-test", topic, ordered=True)
    cloud = runtime_for(
        tmp_path, store=h.store, bus=PubSubBus(os.environ["GOOGLE_CLOUD_PROJECT"]), clock=h.clock
    )
    h.service.resume = cloud.resume
    edited = "Refund done. Maya"
    h.service.decisions.decide(approval.approval_id, links[0].token, "approve", {"draft": edited})
    messages = admin.pull("dispatch-test", timeout_s=10)
    assert len(messages) == 1
    message = messages[0]
    assert message["ordering_key"] == trace_id
    envelope = Envelope.model_validate_json(message["data"])
    assert (envelope.node, envelope.step) == ("dispatch", approval.resume_step)
    assert envelope.resume is not None
    assert envelope.resume["approval_id"] == approval.approval_id
    assert envelope.resume["reviewer"] == links[0].to
    assert envelope.resume["payload"]["draft"] == edited
    assert envelope.resume["payload_hash"] == payload_hash(envelope.resume["payload"])
    # Delivered to the dispatch node, it drafts exactly the edited text.
    h.runtime.handle(envelope)
    (draft,) = mailbox_writes(h.store, trace_id)
    assert draft["body"] == edited
    admin.close()


def test_decisions_through_separate_firestore_clients_record_one_and_draft_once(
    firestore_env: object, tmp_path: Path
) -> None:
    """Eight approval-function instances (each its own Firestore client, transactions not
    serialised in this process) decide the same approval at once: one decision wins."""
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
    from inboxflow.approvals.errors import AlreadyDecided
    from inboxflow.approvals.service import ApprovalService
    from inboxflow.errors import RetryableError

    h = _firestore_harness(tmp_path)
    trace_id = h.start()
    approval = h.approval_of(trace_id)
    links = h.links(approval.approval_id)
    workers = 8
    resumes: list[tuple[str, dict]] = []
    outcomes: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(workers)

    def publish(trace: str, decision: dict) -> None:
        with lock:
            resumes.append((trace, dict(decision)))

    def instance(n: int) -> None:
        store = FirestoreCheckpointStore.from_env(os.environ, serialize_transactions=False)
        service = ApprovalService(
            store=store,
            tasks=h.tasks,
            notifier=h.outbox,
            resume=publish,
            clock=h.clock,
            config=h.service.config,
            graphs=h.runtime.graphs,
        )
        link = links[n % 2]
        barrier.wait()
        # A decision is one write conditioned on the version its check read, no
        # transaction: nothing holds a lock while the others decide, so no instance is
        # left busy (a transaction per decision livelocked the emulator's lock manager:
        # 2 s lock waits, aborted together, retried together).
        try:
            service.decisions.decide(
                approval.approval_id, link.token, "approve" if n % 2 else "reject"
            )
            outcome = "decided"
        except AlreadyDecided:
            outcome = "409"
        except RetryableError:
            outcome = "busy"
        finally:
            store.close()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=instance, args=(n,)) for n in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(outcomes) == ["409"] * (workers - 1) + ["decided"], outcomes
    decided = h.approval_of(trace_id)
    assert decided.status != "pending" and decided.decided_by in REVIEWERS
    assert len([d for _, d in h.store.list("approval_tokens") if d.get("used_at")]) == 1
    # Every resume published carries the one recorded decision (a repeat is harmless).
    assert resumes and {r[1]["decision"] for r in resumes} == {decided.decision}
    for trace, decision in resumes:
        h.runtime.resume(trace, decision)
    h.drain()
    final = h.store.get_trace(trace_id)
    assert final is not None
    assert final.status == ("done" if decided.decision == "approve" else "rejected")
    assert len(mailbox_writes(h.store, trace_id)) == (1 if decided.decision == "approve" else 0)

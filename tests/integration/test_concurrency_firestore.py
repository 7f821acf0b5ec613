"""Real concurrency on the Firestore emulator: one message delivered by N threads at once.

Each thread is its own worker, as N function instances would be: its own
``FirestoreCheckpointStore`` (its own Firestore client) with transactions NOT
serialised in-process, its own Runtime and bus. A ``threading.Barrier``
releases them together. What must hold (docs/architecture.md §5, rules 1-4):
every node of the trace runs once (counted at the model and at the Gmail
double, not only in our own step log), one step-log entry per step, one draft.
Retryable refusals (a live lease, contention) are redelivered afterwards, as
Pub/Sub would, and must then find the step done.

Mutation tried: the ``LeaseHeld`` check in ``CheckpointStore.take_lease``
removed -> every thread runs the node and the model/Gmail counts go red.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.clock import SystemClock
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.engine.runtime import Runtime, RuntimeOptions
from inboxflow.envelope import Envelope
from inboxflow.errors import RetryableError
from inboxflow.graphs import graph_registry
from inboxflow.ports.bus import MessageBus
from inboxflow.ports.llm import LanguageModel, LLMTask, LLMUsage, Out
from inboxflow.workspace import seed_workspace
from tests.harness.pipeline import sample_emails
from tests.harness.runtimes import ports_for, runtime_for

pytestmark = [pytest.mark.emulator, pytest.mark.slow]

MAILBOX = "maya.chen@brightlane.io"
WORKERS = 4


class CollectingBus(MessageBus):
    """Keeps what a worker publishes; the test delivers it (to every worker at once)."""

    def __init__(self) -> None:
        self.published: list[Envelope] = []
        self.dead: list[str] = []
        self._lock = threading.Lock()

    def publish(self, envelopes: Sequence[Envelope]) -> None:
        with self._lock:
            self.published.extend(envelopes)

    def dead_letter(self, message: dict[str, Any], reason: str, node_id: str | None) -> None:
        with self._lock:
            self.dead.append(reason)


class CountingModel(LanguageModel):
    """The offline model, counting calls per task.

    Slower than the emulator's ~2 s lock wait, so the other workers' lease
    transactions finish while the winner is still in the node.
    """

    name = "offline-counted"

    def __init__(self, delay_s: float = 2.5) -> None:
        self.offline = OfflineModel()
        self.delay_s = delay_s
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        with self._lock:
            self.calls[task.name] += 1
        time.sleep(self.delay_s)
        return self.offline.generate(task, inputs)


def _firestore(project: str) -> Any:
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    return FirestoreCheckpointStore.from_env(
        os.environ, project=project, serialize_transactions=False
    )


def all_at_once(workers: int, act: Callable[[int], Any]) -> list[Any]:
    """Run ``act(i)`` on ``workers`` threads released together; results (or exceptions) by i."""
    barrier = threading.Barrier(workers)
    results: list[Any] = [None] * workers

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = act(index)
        except Exception as exc:
            results[index] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


@pytest.fixture
def project(firestore_emulator: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", firestore_emulator.address)
    return f"conc-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def gmail() -> Iterator[GoogleApiDouble]:
    clock = SystemClock()
    with GoogleApiDouble(clock=clock) as double:
        double.seed_from_workspace_json(mailbox=MAILBOX, now=clock.now())
        yield double


def test_every_step_delivered_by_four_workers_at_once_runs_once(
    project: str, gmail: GoogleApiDouble, tmp_path: Any
) -> None:
    model = CountingModel()
    clock = SystemClock()
    stores = [_firestore(project) for _ in range(WORKERS)]
    buses = [CollectingBus() for _ in range(WORKERS)]
    seed_workspace(stores[0], clock.now())
    runtimes = [
        Runtime(
            graphs=graph_registry(),
            ports=ports_for(
                tmp_path,
                store=store,
                bus=bus,
                llm=model,
                clock=clock,
                workspace=GoogleWorkspace(MAILBOX, store, api_url=gmail.url, sleep=lambda s: None),
            ),
            options=RuntimeOptions(retry_base_s=0.01),
        )
        for store, bus in zip(stores, buses, strict=True)
    ]
    email = next(e for e in sample_emails() if e["subject"].startswith("Pricing"))
    trace_id = runtimes[0].start("pipeline", {"email": {**email, "mailbox": MAILBOX}})

    delivered: set[tuple[str, int]] = set()
    outcomes: dict[str, list[str]] = {}
    while True:
        pending = [
            e
            for bus in buses
            for e in bus.published
            if (e.node, e.step) not in delivered and e.trace_id == trace_id
        ]
        if not pending:
            break
        envelope = pending[0]
        delivered.add((envelope.node, envelope.step))
        results = all_at_once(WORKERS, lambda i, e=envelope: runtimes[i].handle(e))
        unexpected = [r for r in results if isinstance(r, Exception)]
        unexpected = [r for r in unexpected if not isinstance(r, RetryableError)]
        assert unexpected == [], unexpected
        # Pub/Sub redelivers the refused copies later: each finds the step done.
        for index, result in enumerate(results):
            for _ in range(3):
                if not isinstance(result, RetryableError):
                    break
                try:
                    result = runtimes[index].handle(envelope)
                except RetryableError as exc:
                    result = exc
            results[index] = result
        outcomes[envelope.node] = sorted(str(r) for r in results)

    checkpoint = stores[0].get_trace(trace_id)
    assert checkpoint is not None
    assert checkpoint.status == "done" and checkpoint.error is None, checkpoint.error
    logs = stores[0].step_logs(trace_id)
    assert [entry.step_order for entry in logs] == list(range(len(logs)))
    nodes = [entry.step_name for entry in logs[1:]]
    assert len(nodes) == len(set(nodes)) and nodes[-1] == "dispatch"
    for node in nodes:  # one worker ran it, the others found it done
        assert outcomes[node] == ["duplicate"] * (WORKERS - 1) + ["ran"], (node, outcomes)
    # The node bodies ran once each, counted outside our store.
    # classify's safety screen is a model call of its step: once too.
    assert model.calls == Counter(
        {"classify_intent": 1, "screen": 1, "decide_tools": 1, "generate_response": 1}
    )
    creates = [call for call in gmail.calls if call[0] == "gmail.users.drafts.create"]
    assert len(creates) == 1
    assert len(gmail.drafts(MAILBOX)) == 1
    assert checkpoint.state["dispatch"]["status"] == "drafted"
    assert all(bus.dead == [] for bus in buses)
    for store in stores:
        store.close()


def test_one_notification_delivered_to_four_ingest_workers_at_once_starts_each_mail_once(
    project: str, tmp_path: Any
) -> None:
    from inboxflow.dev.adapters.memory_gmail_reader import InMemoryGmailReader
    from inboxflow.ingest.claims import message_trace_id
    from inboxflow.ingest.mailboxes import MailboxRegistry
    from inboxflow.ingest.notification import GmailNotification
    from inboxflow.ingest.sync import IngestIncomplete, IngestOptions, Ingestor
    from inboxflow.ingest.watch import renew_watches
    from tests.unit.ingest.test_ingest import eml

    clock = SystemClock()
    gmail = InMemoryGmailReader()  # one mailbox; every worker reads it (thread-safe)
    stores = [_firestore(project) for _ in range(WORKERS)]
    buses = [CollectingBus() for _ in range(WORKERS)]
    seed_workspace(stores[0], clock.now())
    MailboxRegistry(stores[0]).add(MAILBOX, clock.now(), graph="pipeline")
    renew_watches(stores[0], gmail, clock, topic="projects/p/topics/t")
    ingestors = [
        Ingestor(
            runtime_for(tmp_path, store=store, bus=bus, clock=clock),
            gmail,
            IngestOptions(backoff_base_s=0.01),
            sleep=lambda s: None,
        )
        for store, bus in zip(stores, buses, strict=True)
    ]
    gmail_ids = [gmail.deliver(MAILBOX, eml(n), notify=False) for n in range(12)]
    notification = GmailNotification(MAILBOX, gmail.history_id(MAILBOX))

    results = all_at_once(WORKERS, lambda i: ingestors[i].ingest(notification))
    reports = []
    for index, result in enumerate(results):
        for _ in range(3):  # a retryable refusal: Pub/Sub redelivers the notification
            if not isinstance(result, RetryableError):
                break
            if isinstance(result, IngestIncomplete):
                reports.append(result.report)
            try:
                result = ingestors[index].ingest(notification)
            except RetryableError as exc:
                result = exc
        assert not isinstance(result, Exception), result
        reports.append(result)

    expected = {message_trace_id(MAILBOX, g) for g in gmail_ids}
    started = [trace_id for report in reports for trace_id in report.started]
    assert sorted(started) == sorted(expected)  # each mail started by exactly one worker
    assert {trace_id for trace_id, _ in stores[0].list("traces")} == expected
    first_steps = [e.trace_id for bus in buses for e in bus.published if e.step == 1]
    assert sorted(first_steps) == sorted(expected)  # one first envelope per trace
    claims = stores[0].list("mail_claims")
    assert len(claims) == len(expected) and {c["state"] for _, c in claims} == {"started"}
    for store in stores:
        store.close()

"""Promises the README makes that no other fast test pins down.

Each test here was checked against the mutation named in its docstring (the
code changed by hand, the test seen red, the change reverted):

- the auto-dispatch threshold is 0.8, inclusive, through the real review node;
- the production wiring picks Gemini from ``GEMINI_API_KEY`` (requests reach the
  Gemini double, whose answers carry a marker the offline model never writes);
- ``K_SERVICE`` alone (a deployed function) selects Firestore, Pub/Sub and Cloud Tasks.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from inboxflow import llm_selection, services
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.dev.doubles.gemini_api import TaskOracle, gemini_double_environment
from inboxflow.graphs.pipeline.settings import AUTO_DISPATCH_CONFIDENCE
from inboxflow.ports.llm import LanguageModel, LLMTask, LLMUsage, Out
from inboxflow.settings import Settings
from tests.harness.pipeline import build, sample_emails


def _inquiry() -> dict[str, Any]:
    """A plain pricing inquiry: no flags, no failing tool, offline confidence well above 0.8."""
    return next(e for e in sample_emails() if e["subject"].startswith("Pricing"))


class ConfidenceModel(LanguageModel):
    """The offline model, except that the classifier reports a chosen confidence.

    A double of the language model (an external service), so the real
    classify, generate and review nodes decide on an exact confidence.
    """

    name = "offline-fixed-confidence"

    def __init__(self, confidence: float) -> None:
        self.confidence = confidence
        self.offline = OfflineModel()

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> tuple[Out, LLMUsage]:
        answer, usage = self.offline.generate(task, inputs)
        if task.name == "classify_intent":
            answer = answer.model_copy(update={"confidence": self.confidence})
        return answer, usage


# --- the auto-dispatch threshold (README: "confidence ≥ 0.8 and not a complaint") ----------


def test_the_threshold_is_the_documented_point_eight() -> None:
    """Mutation: AUTO_DISPATCH_CONFIDENCE = 0.75 or 0.84 -> red."""
    assert AUTO_DISPATCH_CONFIDENCE == 0.8


@pytest.mark.parametrize(
    ("confidence", "status", "auto"),
    [
        (0.8, "done", True),  # exactly at the threshold: dispatched (>=, not >)
        (0.801, "done", True),
        (0.799, "waiting", False),
        (0.76, "waiting", False),  # kills a threshold lowered to 0.75
        (0.83, "done", True),  # kills a threshold raised to 0.84
    ],
)
def test_review_dispatches_at_and_above_point_eight_only(
    tmp_path: Path, confidence: float, status: str, auto: bool
) -> None:
    """Mutations: threshold 0.75 / 0.84, ``<`` turned into ``<=`` in review -> red."""
    runtime = build(tmp_path)
    runtime.llm = ConfidenceModel(confidence)
    trace_id = runtime.start("pipeline", {"email": _inquiry()})
    runtime.bus.drain()  # type: ignore[attr-defined]

    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.error is None
    assert checkpoint.state["classification"]["confidence"] == confidence
    assert checkpoint.state["review"]["auto_dispatch"] is auto
    assert checkpoint.status == status
    assert (checkpoint.state.get("dispatch") is not None) is auto
    if not auto:
        assert checkpoint.state["review"]["reasons"] == [
            f"confidence {confidence:.2f} is below 0.80"
        ]


# --- the production wiring chooses its model from the environment ---------------------------

MARK = "[answered-by-the-gemini-double]"


@pytest.fixture
def fresh_announcements() -> Any:
    llm_selection._reset_announcements()
    yield
    llm_selection._reset_announcements()


def test_gemini_api_key_in_the_environment_sends_the_pipeline_to_gemini(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_announcements: Any
) -> None:
    """Mutation: the composition root choosing ``OfflineModel()`` whatever the environment -> red.

    Nothing is patched: ``build_runtime(Settings.from_env(os.environ))`` reads
    ``GEMINI_API_KEY`` and ``INBOXFLOW_GEMINI_BASE_URL`` the way a deployed
    function does. The double's answers carry ``MARK``, which the offline model
    never writes, so an offline run cannot pass for a Gemini run.
    """
    monkeypatch.setenv("INBOXFLOW_HOME", str(tmp_path))
    with gemini_double_environment(TaskOracle(mark=MARK)) as double:
        runtime = services.build_runtime(Settings.from_env(os.environ))
        trace_id = runtime.start("pipeline", {"email": _inquiry()})
        runtime.bus.drain()  # type: ignore[attr-defined]

    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.error is None
    assert checkpoint.status == "done"
    assert MARK in checkpoint.state["classification"]["evidence"]
    assert checkpoint.state["draft"]["body"].endswith(MARK)
    tasks = [
        call["task"]
        for entry in runtime.store.step_logs(trace_id)
        for call in entry.llm_calls
        if call["model"] == "gemini-3.5-flash-lite"
    ]
    assert "classify_intent" in tasks and "generate_response" in tasks
    generated = double.calls("generateContent")
    assert len(generated) == len(tasks)
    assert all(r.status == 200 and r.headers["x-goog-api-key"] for r in generated)


def test_the_offline_model_never_writes_the_mark(tmp_path: Path) -> None:
    """The control for the test above: the same email offline carries no mark."""
    runtime = build(tmp_path)
    trace_id = runtime.start("pipeline", {"email": _inquiry()})
    runtime.bus.drain()  # type: ignore[attr-defined]
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done"
    assert MARK not in repr(checkpoint.state)


# --- K_SERVICE means "deployed": the cloud adapters ------------------------------------------


def test_k_service_alone_selects_the_cloud_adapters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation: ``Settings.from_env`` ignoring ``K_SERVICE`` (production on SQLite) -> red.

    The settings are read from ``K_SERVICE`` alone. Only then are emulator
    hosts set, so the Google clients build without credentials; none of them
    is contacted.
    """
    settings = Settings.from_env({"K_SERVICE": "pipeline-classify", "GOOGLE_CLOUD_PROJECT": "p1"})
    assert (settings.store, settings.bus, settings.tasks) == ("firestore", "pubsub", "cloudtasks")

    for variable in (
        "FIRESTORE_EMULATOR_HOST",
        "PUBSUB_EMULATOR_HOST",
        "CLOUD_TASKS_EMULATOR_HOST",
    ):
        monkeypatch.setenv(variable, "127.0.0.1:9")
    # The adapters read the environment the settings carry (the Google libraries, the process's).
    settings = dataclasses.replace(
        settings, environ={**settings.environ, "CLOUD_TASKS_EMULATOR_HOST": "127.0.0.1:9"}
    )
    from inboxflow.adapters.cloud_tasks import CloudTasksQueue
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
    from inboxflow.adapters.pubsub_bus import PubSubBus
    from inboxflow.clock import SystemClock

    store = services.make_store(settings)
    assert isinstance(store, FirestoreCheckpointStore) and store.client.project == "p1"
    bus = services.make_bus(settings, SystemClock())
    assert isinstance(bus, PubSubBus) and bus.project == "p1"
    queue = services.make_task_queue(settings, store)
    assert isinstance(queue, CloudTasksQueue) and queue.project == "p1"


@pytest.mark.parametrize(
    "environ",
    [{}, {"K_SERVICE": ""}, {"K_SERVICE": "x", "INBOXFLOW_STORE": "sqlite"}],
)
def test_without_k_service_or_with_an_override_the_store_is_sqlite(
    environ: dict[str, str],
) -> None:
    assert Settings.from_env(environ).store == "sqlite"


# --- what the README and docs/architecture.md say about the samples and retries -------------

README = Path(__file__).resolve().parents[2] / "README.md"
ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
_NUMBERS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]


def test_the_readme_counts_the_bundled_samples() -> None:
    """Mutation: a sample added or removed without the README -> red."""
    from inboxflow.dev.cli.local import sample_inbox

    match = re.search(r"(\w+) realistic emails", README.read_text(encoding="utf-8"))
    assert match is not None
    assert _NUMBERS.index(match.group(1).lower()) == len(sample_inbox())


def test_the_design_document_states_the_retry_rule_the_runtime_applies() -> None:
    """Three attempts inside the step, then ``needs_review`` (docs/architecture.md §5, errors);
    tests/unit/test_runtime.py shows the trace becoming ``needs_review``."""
    from inboxflow.engine.runtime import RuntimeOptions

    text = " ".join(ARCHITECTURE.read_text(encoding="utf-8").split())
    assert RuntimeOptions().node_attempts == 3
    assert "get three attempts inside the step" in text
    assert '("retries exhausted after 3 attempts: ...")' in text
    assert "after the node's own three attempts" not in text


# --- a worker that fails gives its lease back ------------------------------------------------


def test_a_step_that_fails_releases_its_lease_so_the_redelivery_runs_at_once(
    tmp_path: Path,
) -> None:
    """Mutations (found surviving by ``make mutate``): ``Runtime._release`` releasing
    another trace's lease, or not at all -> the redelivery meets LeaseHeld -> red."""
    from inboxflow.envelope import Envelope
    from tests.harness.toy_graph import make_runtime

    runtime, _, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "hello"})
    failures: list[str] = []

    def fault(point: str) -> None:
        if point == "before_commit:count" and not failures:
            failures.append(point)
            raise RuntimeError("the worker failed before its commit")

    runtime.fault = fault
    envelope = Envelope(trace_id=trace_id, graph="toy", node="count", step=1)
    with pytest.raises(RuntimeError, match="before its commit"):
        runtime.handle(envelope)
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.step == 1 and checkpoint.lease is None
    assert runtime.handle(envelope) == "ran"  # no clock advance: the lease was given back
    assert failures == ["before_commit:count"]

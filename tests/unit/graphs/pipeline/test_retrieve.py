"""The retrieve node on the real pipeline: KB chunks, similar emails, contact, calendar."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.offline_embedder import OfflineEmbedder
from inboxflow.adapters.sqlite_vectors import SqliteVectorIndex
from inboxflow.engine.runtime import Runtime
from inboxflow.errors import RetryableError
from inboxflow.graphs.pipeline import initial_state
from inboxflow.knowledge import KnowledgeBase, seed_knowledge
from inboxflow.mail import load_email_file, sample_inbox_dir
from inboxflow.ports.embeddings import EmbeddingPurpose
from inboxflow.ports.vectors import Neighbor
from inboxflow.schema import EMAIL_VECTORS
from tests.harness.pipeline import build

# sample -> the knowledge-base document that answers it
EXPECTED_SOURCE = {
    "01-pricing-inquiry.eml": {"pricing-and-plans.md", "security-and-compliance.md"},
    "02-pdf-export-howto.json": {"exports-and-scheduled-delivery.md"},
    "03-meeting-request.eml": {"onboarding-and-rollout.md"},
    "04-complaint-double-charge.eml": {"billing-and-refunds.md"},
    "05-complaint-prompt-injection.json": {"exports-and-scheduled-delivery.md"},
    "06-follow-up-security-questionnaire.eml": {"security-and-compliance.md"},
    "10-ambiguous-hotel-group.eml": {"demos-and-meetings.md"},
    "11-html-only-nonprofit.eml": {"pricing-and-plans.md"},
    "12-latin1-follow-up.eml": {"renewals-and-contracts.md", "pricing-and-plans.md"},
    "14-meeting-demo-request.json": {"demos-and-meetings.md"},
    "15-complaint-exports-broken.eml": {"exports-and-scheduled-delivery.md"},
    "16-follow-up-renewal.json": {"renewals-and-contracts.md"},
}


class CountingEmbedder(OfflineEmbedder):
    """The offline embedder, counting calls; can fail transiently a number of times."""

    def __init__(self, transient_failures: int = 0) -> None:
        super().__init__()
        self.calls: list[tuple[int, str]] = []
        self.transient_failures = transient_failures

    def embed(
        self, texts: Sequence[str], purpose: EmbeddingPurpose = "document"
    ) -> list[list[float]]:
        if self.transient_failures:
            self.transient_failures -= 1
            raise RetryableError("embedding API answered 503")
        self.calls.append((len(texts), purpose))
        return super().embed(texts, purpose)


class BrokenVectors(SqliteVectorIndex):
    def nearest(self, *args: Any, **kwargs: Any) -> list[Neighbor]:
        raise RuntimeError("vector index missing (FAILED_PRECONDITION)")


def runtime_with_kb(tmp_path: Path, embedder: OfflineEmbedder | None = None) -> Runtime:
    runtime = build(tmp_path)
    embedder = embedder or OfflineEmbedder()
    vectors = SqliteVectorIndex(tmp_path / "vectors.sqlite")
    seed_knowledge(KnowledgeBase(OfflineEmbedder(), vectors))
    runtime.ports.embedder, runtime.ports.vectors = embedder, vectors
    return runtime


def run(runtime: Runtime, name: str) -> str:
    email = load_email_file(sample_inbox_dir() / name)
    trace_id = runtime.start("pipeline", initial_state(email).model_dump(mode="json"))
    runtime.bus.drain()  # type: ignore[attr-defined]
    return trace_id


def context_of(runtime: Runtime, trace_id: str) -> dict[str, Any]:
    """The context as the retrieve step wrote it (later steps may add to it)."""
    for entry in runtime.store.step_logs(trace_id):
        if entry.step_name == "retrieve":
            return dict(entry.output_delta["context"])
    raise AssertionError(f"trace {trace_id} has no retrieve step")


@pytest.fixture(scope="module")
def sample_contexts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every non-spam sample through one pipeline, in order: name -> retrieve's context."""
    runtime = runtime_with_kb(tmp_path_factory.mktemp("samples"))
    contexts = {}
    for path in sorted(sample_inbox_dir().iterdir()):
        trace_id = run(runtime, path.name)
        checkpoint = runtime.store.get_trace(trace_id)
        assert checkpoint is not None and checkpoint.error is None
        if any(e.step_name == "retrieve" for e in runtime.store.step_logs(trace_id)):
            contexts[path.name] = context_of(runtime, trace_id)
    return contexts


@pytest.mark.parametrize("name", sorted(EXPECTED_SOURCE))
def test_each_sample_finds_the_kb_document_that_answers_it(sample_contexts, name):
    knowledge = sample_contexts[name]["knowledge"]
    assert knowledge, f"{name}: no knowledge found"
    assert knowledge[0]["source"] in EXPECTED_SOURCE[name]
    distances = [hit["distance"] for hit in knowledge]
    assert distances == sorted(distances) and distances[0] < 0.8


def test_a_refund_question_gets_the_refunds_policy(sample_contexts):
    best = sample_contexts["04-complaint-double-charge.eml"]["knowledge"][0]
    assert best["id"] == "billing-and-refunds.md#001"
    assert best["section"] == "Duplicate or incorrect charges"
    assert best["excerpt"].startswith("If a customer was charged twice")


def test_similar_past_emails_are_found_and_never_the_email_itself(sample_contexts):
    broken = sample_contexts["15-complaint-exports-broken.eml"]["similar_emails"]
    assert broken[0]["subject"] == "Your update broke our weekly franchise report"
    assert broken[0]["category"] == "complaint"
    for name, context in sample_contexts.items():
        email = load_email_file(sample_inbox_dir() / name)
        assert email.message_id not in {s["message_id"] for s in context["similar_emails"]}
    first = next(iter(sample_contexts.values()))
    assert first["similar_emails"] == []  # nothing was indexed before the first email


def test_every_field_of_a_hit_is_filled_from_the_fields_the_search_returns(sample_contexts):
    hits = [hit for context in sample_contexts.values() for hit in context["knowledge"]]
    emails = [hit for context in sample_contexts.values() for hit in context["similar_emails"]]
    assert hits and emails
    for hit in hits:
        assert all(hit[key] for key in ("id", "title", "section", "source", "excerpt")), hit
    for email in emails:
        keys = ("message_id", "subject", "sender", "category", "received_at", "excerpt")
        assert all(email[key] for key in keys), email


def test_the_state_keeps_pointers_and_excerpts_not_documents(sample_contexts):
    for context in sample_contexts.values():
        assert len(context["knowledge"]) <= 3 and len(context["similar_emails"]) <= 3
        assert all(len(hit["excerpt"]) <= 400 for hit in context["knowledge"])
        assert all(len(s["excerpt"]) <= 240 for s in context["similar_emails"])
        assert len(json.dumps(context)) < 6000


def test_contact_and_upcoming_events(sample_contexts):
    meeting = sample_contexts["03-meeting-request.eml"]
    assert meeting["contact"]["company"] == "Alder & Finch Architects"
    assert "seeded" not in meeting["contact"]
    events = meeting["upcoming_events"]
    assert len(events) >= 10
    assert [e["start"] for e in events] == sorted(e["start"] for e in events)
    assert {"id", "summary", "start", "end", "attendees"} <= set(events[0])
    assert sample_contexts["14-meeting-demo-request.json"]["contact"] is None  # unknown sender
    assert sample_contexts["04-complaint-double-charge.eml"]["upcoming_events"] == []
    assert all(not c["retrieval_errors"] for c in sample_contexts.values())


def test_every_email_that_reached_retrieve_is_indexed_with_its_category(tmp_path: Path):
    runtime = runtime_with_kb(tmp_path)
    for name in (
        "04-complaint-double-charge.eml",
        "08-obvious-spam.eml",
        "02-pdf-export-howto.json",
    ):
        run(runtime, name)
    vectors = runtime.ports.vectors
    indexed = {
        fields["subject"]: fields.get("category")
        for _, fields in vectors.documents(EMAIL_VECTORS.name)
    }
    assert indexed == {  # spam ends at classify, before retrieve
        "Charged twice for January - please refund": "complaint",
        "How do I export a dashboard to PDF?": "inquiry",
    }


def test_one_embedding_call_per_email(tmp_path: Path):
    embedder = CountingEmbedder()
    runtime = runtime_with_kb(tmp_path, embedder)
    run(runtime, "01-pricing-inquiry.eml")
    assert embedder.calls == [(1, "query")]


def test_a_transient_embedding_failure_retries_the_step(tmp_path: Path):
    embedder = CountingEmbedder(transient_failures=1)
    runtime = runtime_with_kb(tmp_path, embedder)
    trace_id = run(runtime, "04-complaint-double-charge.eml")
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "waiting"
    assert context_of(runtime, trace_id)["knowledge"][0]["source"] == "billing-and-refunds.md"
    assert embedder.calls == [(1, "query")]  # the failed attempt, then one success


def test_a_broken_vector_index_degrades_to_no_knowledge(tmp_path: Path):
    runtime = runtime_with_kb(tmp_path)
    runtime.ports.vectors = BrokenVectors(tmp_path / "broken.sqlite")
    trace_id = run(runtime, "01-pricing-inquiry.eml")
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done" and checkpoint.error is None
    context = context_of(runtime, trace_id)
    assert context["knowledge"] == [] and context["similar_emails"] == []
    assert context["retrieval_errors"] == [
        "vector search: RuntimeError: vector index missing (FAILED_PRECONDITION)"
    ]
    assert [r["id"] for r in context["similar"]] == ["pricing", "sso"]  # saved replies still work


def test_a_failing_calendar_is_noted_and_the_email_goes_on(tmp_path: Path):
    from inboxflow.adapters.store_workspace import StoreWorkspace

    class NoCalendar(StoreWorkspace):
        def list_events(self, start: datetime, end: datetime) -> list[dict[str, Any]]:
            raise ConnectionError("calendar backend unavailable")

    runtime = runtime_with_kb(tmp_path)
    runtime.ports.workspace = NoCalendar(runtime.store, runtime.clock)
    trace_id = run(runtime, "03-meeting-request.eml")
    context = context_of(runtime, trace_id)
    assert context["upcoming_events"] == []
    assert context["retrieval_errors"] == [
        "calendar: ConnectionError: calendar backend unavailable"
    ]
    assert context["knowledge"]


def test_without_services_the_index_beside_the_store_is_used(tmp_path: Path):
    runtime = build(tmp_path)
    store_path = runtime.store.path  # type: ignore[attr-defined]
    seed_knowledge(KnowledgeBase(OfflineEmbedder(), SqliteVectorIndex(store_path)))
    trace_id = run(runtime, "11-html-only-nonprofit.eml")
    best = context_of(runtime, trace_id)["knowledge"][0]
    assert best["id"] == "pricing-and-plans.md#004"  # Nonprofit and education discount
    indexed = SqliteVectorIndex(store_path).documents(EMAIL_VECTORS.name)
    assert [fields["subject"] for _, fields in indexed] == ["Nonprofit discount?"]


def test_events_window_covers_the_business_days_offered(tmp_path: Path):
    runtime = runtime_with_kb(tmp_path)
    trace_id = run(runtime, "03-meeting-request.eml")
    events = context_of(runtime, trace_id)["upcoming_events"]
    now = datetime.fromtimestamp(runtime.clock.now(), UTC)
    starts = [datetime.fromisoformat(e["start"]) for e in events]
    assert min(starts) > now and max(starts) < now + timedelta(days=10)
    assert "seed-d5-offsite" in {e["id"] for e in events}  # the fifth business day is included


@pytest.mark.emulator
def test_retrieve_on_firestore_uses_find_nearest_beside_the_store(firestore_env, tmp_path: Path):
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore
    from inboxflow.adapters.firestore_vectors import FirestoreVectorIndex

    store = FirestoreCheckpointStore.from_env(os.environ)
    runtime = build(tmp_path, store=store)
    seed_knowledge(KnowledgeBase(OfflineEmbedder(), FirestoreVectorIndex(client=store.client)))
    first = run(runtime, "05-complaint-prompt-injection.json")
    second = run(runtime, "15-complaint-exports-broken.eml")
    assert context_of(runtime, first)["knowledge"][0]["source"] == (
        "exports-and-scheduled-delivery.md"
    )
    context = context_of(runtime, second)
    assert context["knowledge"][0]["id"] == "exports-and-scheduled-delivery.md#002"
    assert context["similar_emails"][0]["category"] == "complaint"
    indexed = FirestoreVectorIndex(client=store.client).documents(EMAIL_VECTORS.name)
    assert len(indexed) == 2
    store.close()

"""GeminiEmbedder through the real google-genai client against the local Gemini double."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from inboxflow.adapters.gemini_embedder import EmbeddingFailed, GeminiEmbedder
from inboxflow.adapters.gemini_llm import GeminiSettings, RetryPolicy
from inboxflow.dev.doubles.gemini_api import GeminiDouble, Reply, start_gemini_double
from inboxflow.ports.embeddings import EMBEDDING_DIMENSIONS


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double() as running:
        yield running


@pytest.fixture
def sleeps() -> list[float]:
    return []


def embedder(double: GeminiDouble, sleeps: list[float], **options) -> GeminiEmbedder:
    settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
    return GeminiEmbedder(settings, retry=RetryPolicy(sleep=sleeps.append), **options)


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_have_the_shared_dimension_and_unit_length(double, sleeps):
    vectors = embedder(double, sleeps).embed(["How much does the team plan cost?", ""])

    assert len(vectors) == 2
    for vector in vectors:
        assert len(vector) == EMBEDDING_DIMENSIONS == 768
        assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, rel_tol=1e-6)
    (request,) = double.calls("batchEmbedContents")
    assert request.model == "gemini-embedding-001"
    sent = request.body["requests"]
    assert [r["outputDimensionality"] for r in sent] == [768, 768]
    assert sent[1]["content"]["parts"][0]["text"] == " "  # an empty text is still embedded


def test_purpose_selects_the_task_type(double, sleeps):
    model = embedder(double, sleeps)
    model.embed(["stored answer"], purpose="document")
    model.embed(["user question"], purpose="query")
    task_types = [r.body["requests"][0]["taskType"] for r in double.calls("batchEmbedContents")]
    assert task_types == ["RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY"]


def test_batches_keep_order(double, sleeps):
    texts = [f"text number {i}" for i in range(7)]
    batched = embedder(double, sleeps, batch_size=3).embed(texts)
    single = [embedder(double, sleeps).embed([t])[0] for t in texts]

    assert [len(r.body["requests"]) for r in double.calls("batchEmbedContents")[:3]] == [3, 3, 1]
    assert batched == single


def test_texts_sharing_words_are_closer(double, sleeps):
    query, near, far = embedder(double, sleeps).embed(
        ["export the report as pdf", "how to export a pdf report", "lunch on friday at noon"],
        purpose="query",
    )
    assert cosine(query, near) > cosine(query, far)


def test_429_then_success(double, sleeps):
    double.script(Reply.error(429), action="embed")
    vectors = embedder(double, sleeps).embed(["hello"])
    assert len(vectors) == 1 and len(sleeps) == 1
    assert [r.status for r in double.calls("batchEmbedContents")] == [429, 200]


def test_503_three_times_fails_for_good(double, sleeps):
    double.script(Reply.error(503), Reply.error(503), Reply.error(503), action="embed")
    with pytest.raises(EmbeddingFailed, match="unavailable after 3 attempts: 503 UNAVAILABLE"):
        embedder(double, sleeps).embed(["hello"])
    assert len(double.calls("batchEmbedContents")) == 3 and len(sleeps) == 2


def test_model_override(double, sleeps):
    embedder(double, sleeps, model="gemini-embedding-2").embed(["hello"])
    assert double.calls("batchEmbedContents")[0].model == "gemini-embedding-2"

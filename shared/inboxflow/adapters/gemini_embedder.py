"""Gemini embeddings (``gemini-embedding-001``) through ``google-genai``'s ``embed_content``.

Vectors have ``EMBEDDING_DIMENSIONS`` (768) entries (``output_dimensionality``)
and are L2-normalised (Gemini normalises only its full 3072-d output).
Stored documents and search queries are embedded with the task types
``RETRIEVAL_DOCUMENT`` and ``RETRIEVAL_QUERY``. Same connection settings and
retry policy as ``GeminiModel``; the ``embedding`` role (``gemini_roles``) names
the model, the Vertex location (a region: embedding models are not served at
``global``), the timeout and the deadline (``INBOXFLOW_GEMINI_EMBEDDING_MODEL``,
``INBOXFLOW_GEMINI_EMBEDDING_LOCATION``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import NodeFailed
from ..ports.embeddings import EMBEDDING_DIMENSIONS, Embedder, EmbeddingPurpose
from .gemini_llm import (
    ClientPool,
    GeminiCallFailed,
    GeminiSettings,
    RetryPolicy,
    request_options,
    send_with_retries,
)
from .gemini_roles import EMBEDDING_MODEL

DEFAULT_EMBEDDING_MODEL = EMBEDDING_MODEL
BATCH_SIZE = 100
"""Texts per request: the most ``batchEmbedContents`` takes at once."""

TASK_TYPES: dict[str, str] = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}


class EmbeddingFailed(NodeFailed):
    """Embeddings could not be had: Gemini refused, stayed unavailable, or answered malformed."""


def embedding_model(environ: Mapping[str, str]) -> str:
    """The embedding model ``environ`` names (default ``gemini-embedding-001``)."""
    return (
        environ.get("INBOXFLOW_GEMINI_EMBEDDING_MODEL") or ""
    ).strip() or DEFAULT_EMBEDDING_MODEL


@dataclass
class GeminiEmbedder(Embedder):
    """Embeds texts with Gemini, in batches, retrying transient failures.

    Attributes:
        settings: where to connect (the same as the language model's).
        model: embedding model id (None: the ``embedding`` role's).
        retry: the transient-failure policy.
        batch_size: texts per request.
        credentials: Vertex mode only (default: Application Default Credentials).
        client: a ready ``google.genai.Client`` (default: built from ``settings``).
    """

    settings: GeminiSettings
    model: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    batch_size: int = BATCH_SIZE
    credentials: Any = None
    client: Any = None

    def __post_init__(self) -> None:
        self.role = self.settings.role("embedding")
        self.model = self.model or self.role.model
        self.client = ClientPool(self.settings, self.credentials, self.client).for_role(self.role)
        self.name = self.model
        self.dimensions = EMBEDDING_DIMENSIONS

    def embed(
        self, texts: Sequence[str], purpose: EmbeddingPurpose = "document"
    ) -> list[list[float]]:
        """One unit-length vector of ``dimensions`` floats per text, in order.

        Raises:
            EmbeddingFailed: Gemini refused the request, stayed unavailable through
                the retries, or returned the wrong number or size of vectors.
        """
        from google.genai import types

        config = types.EmbedContentConfig(
            task_type=TASK_TYPES[purpose],
            output_dimensionality=self.dimensions,
            http_options=request_options(self.role),
        )
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [
                text if text.strip() else " " for text in texts[start : start + self.batch_size]
            ]
            errors: list[str] = []

            def once(batch: list[str] = batch) -> Any:
                return self.client.models.embed_content(
                    model=self.model, contents=batch, config=config
                )

            try:
                response = send_with_retries(
                    once, self.retry, errors, self.role.deadline_s, self.model
                )
            except GeminiCallFailed as exc:
                raise EmbeddingFailed(f"embeddings ({self.model}): {exc}") from exc
            vectors.extend(self._vectors(response, len(batch)))
        return vectors

    def _vectors(self, response: Any, expected: int) -> list[list[float]]:
        embeddings = response.embeddings or []
        if len(embeddings) != expected:
            raise EmbeddingFailed(
                f"embeddings ({self.model}): {len(embeddings)} vectors for {expected} texts"
            )
        vectors = []
        for embedding in embeddings:
            values = list(embedding.values or [])
            if len(values) != self.dimensions:
                raise EmbeddingFailed(
                    f"embeddings ({self.model}): a vector of {len(values)} values, "
                    f"expected {self.dimensions}"
                )
            vectors.append(_unit(values))
        return vectors


def _unit(values: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values] if norm else values


__all__ = ["DEFAULT_EMBEDDING_MODEL", "EmbeddingFailed", "GeminiEmbedder", "embedding_model"]

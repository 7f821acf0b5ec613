"""The embeddings port: text in, fixed-length vectors out (for vector search)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Literal

from ..schema import EMBEDDING_DIMENSIONS

EmbeddingPurpose = Literal["document", "query"]


class Embedder(ABC):
    """Turns texts into vectors of ``dimensions`` floats, comparable by cosine distance.

    Attributes:
        name: model name as logged (``gemini-embedding-001``, ``offline-hash-256``...).
        dimensions: length of every vector this embedder returns.
    """

    name: str = "embedder"
    dimensions: int = EMBEDDING_DIMENSIONS

    @abstractmethod
    def embed(
        self, texts: Sequence[str], purpose: EmbeddingPurpose = "document"
    ) -> list[list[float]]:
        """One vector per text, in order.

        ``purpose`` lets models that distinguish them embed stored documents
        and search queries differently (Gemini's RETRIEVAL_DOCUMENT / RETRIEVAL_QUERY).

        Raises:
            RetryableError: a transient failure (timeout, 429, 5xx).
        """

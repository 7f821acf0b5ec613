"""Knowledge-base categories of the support desk: which articles each specialist searches.

A document's category is a field of the knowledge base (``knowledge.py``: its
front matter, ``inboxflow kb add --category`` or ``inboxflow kb category``);
a specialist searches its own category and uncategorised documents, which
serve every specialist. The filter runs in the vector index.
"""

from __future__ import annotations

from typing import Any

from ...knowledge import UNCATEGORISED, KnowledgeBase
from .tasks import IssueType


def kb_search(
    kb: KnowledgeBase, text: str, category: IssueType, limit: int
) -> list[dict[str, Any]]:
    """The ``limit`` nearest articles of ``category`` (and uncategorised ones), nearest first.

    Returns:
        ``{"source", "title", "text", "category", "relevance"}`` for each chunk found;
        ``relevance`` is the cosine similarity of the chunk to ``text`` (1 - distance).
    """
    return [
        {
            "source": str(neighbor.fields.get("source", neighbor.doc_id)),
            "title": neighbor.fields.get("title", ""),
            "text": neighbor.fields.get("text", ""),
            "category": str(neighbor.fields.get("category") or UNCATEGORISED),
            "relevance": round(1.0 - neighbor.distance, 4),
        }
        for neighbor in kb.search(text, limit=limit, categories=[category, UNCATEGORISED])
    ]

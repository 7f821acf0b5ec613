"""``web_search`` offline: the knowledge base's nearest chunks as search results."""

from __future__ import annotations

from typing import Any

from ..graphs.agent.web_search import WebSearch
from ..knowledge import KnowledgeBase, excerpt


class KnowledgeBaseSearch(WebSearch):
    """Searches the knowledge base; each chunk is a result with a ``kb://`` address."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def search(self, query: str, limit: int = 3) -> list[dict[str, Any]]:
        results = []
        for neighbor in self.kb.search(query, limit):
            doc = neighbor.fields
            source = str(doc.get("source", ""))
            results.append(
                {
                    "title": str(doc.get("title") or source),
                    "url": f"kb://{source}",
                    "snippet": excerpt(str(doc.get("text", "")), 300),
                }
            )
        return results

"""The web search service the agent's ``web_search`` tool asks.

Adapter: ``KnowledgeBaseSearch`` (``adapters/kb_web_search.py``): offline,
over the knowledge base (``inboxflow kb``), so the demo and the tests need no network.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ...ports.wired import Service


class WebSearch(ABC):
    """Finds pages for a query."""

    @abstractmethod
    def search(self, query: str, limit: int = 3) -> list[dict[str, Any]]:
        """Results for ``query``, best first: ``[{title, url, snippet}]``."""


WEB_SEARCH = Service[WebSearch]("web_search", WebSearch)
"""The agent's declaration of the service (``Graph(services=...)``, ``ctx.ports.service``)."""

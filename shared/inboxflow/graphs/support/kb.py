"""Knowledge-base categories of the support desk: which articles each specialist searches.

A document's category comes from its source name (its file name without the
suffix), by ``KB_CATEGORIES``; a document the table does not name serves
every specialist.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from ...knowledge import KnowledgeBase
from .triage import IssueType

KB_CATEGORIES: dict[str, IssueType] = {
    "billing-and-refunds": "billing",
    "pricing-and-plans": "billing",
    "renewals-and-contracts": "billing",
    "exports-and-scheduled-delivery": "technical",
    "incidents-and-status": "technical",
    "security-and-compliance": "technical",
    "onboarding-and-rollout": "general",
    "demos-and-meetings": "general",
}
SEARCH_WIDTH = 20
"""Nearest chunks fetched before the category filter keeps the specialist's."""


def category_of(source: str) -> IssueType | None:
    """The category of a KB document, or None (it serves every specialist)."""
    return KB_CATEGORIES.get(PurePath(source).stem)


def kb_search(
    kb: KnowledgeBase, text: str, category: IssueType, limit: int
) -> list[dict[str, Any]]:
    """The ``limit`` nearest articles of ``category`` (and uncategorised ones), nearest first.

    Returns:
        ``{"source", "title", "text"}`` for each chunk found.
    """
    found = []
    for neighbor in kb.search(text, limit=SEARCH_WIDTH):
        source = str(neighbor.fields.get("source", neighbor.doc_id))
        if category_of(source) in (category, None):
            found.append(
                {
                    "source": source,
                    "title": neighbor.fields.get("title", ""),
                    "text": neighbor.fields.get("text", ""),
                }
            )
    return found[:limit]

"""``DocumentStore.list``: what the callers write, handed to the adapter as one ``Listing``."""

from __future__ import annotations

from typing import Any

from inboxflow.ports.documents import DocumentStore, Listing


class _Recording(DocumentStore):
    """Keeps the listings it is asked for."""

    def __init__(self) -> None:
        self.asked: list[Listing] = []

    def get(self, path: str) -> dict[str, Any] | None:
        return None

    def create(self, path: str, doc: dict[str, Any]) -> bool:
        return True

    def set(self, path: str, doc: dict[str, Any]) -> None:
        return None

    def select(self, listing: Listing) -> list[tuple[str, dict[str, Any]]]:
        self.asked.append(listing)
        return [("a", {"n": 1}), ("b", {"n": 2})]

    def run_transaction(self, fn: Any) -> Any:
        raise NotImplementedError


def test_list_hands_the_adapter_the_collection_without_slashes_and_the_filters_as_a_tuple() -> None:
    store = _Recording()
    filters = iter([("status", "==", "open")])  # an iterable read once
    rows = store.list("/tickets/", filters, order_by="at", descending=True, limit=5)
    assert rows == [("a", {"n": 1}), ("b", {"n": 2})]
    assert store.asked == [Listing("tickets", (("status", "==", "open"),), "at", True, 5)]


def test_list_defaults_ask_for_everything_in_id_order() -> None:
    store = _Recording()
    store.list("tickets")
    assert store.asked == [Listing("tickets")]


def test_count_counts_what_list_returns() -> None:
    store = _Recording()
    assert store.count("tickets", [("status", "==", "open")]) == 2
    assert store.asked == [Listing("tickets", (("status", "==", "open"),))]

"""bench/cost.py's deployed figure: the embedded adapters' records priced as the real services."""

from __future__ import annotations

import pytest

from tests.unit.bench.test_tokens import BENCH, cost

FIGURES = {
    "graph": "assistant",
    "firestore_per_email": {"reads": 10.0, "writes": 20.0, "transactions": 0.0},
    "firestore_writes_by_collection_per_email": {"traces": 15.0, "tasks": 2.0, "outbox": 3.0},
    "node_hops_per_email": {},
    "node_handler_ms_p50": {},
    "messages_per_email": 5.0,
    "message_bytes_mean": 800.0,
    "deliveries_per_email": 5.0,
    "stored_docs_per_email": 10.0,
    "stored_bytes_per_email": 20_000.0,
    "index_bytes_exempt_per_email": 30_000.0,
    "embedded_stored_docs_per_email": 5.0,
    "embedded_stored_bytes_per_email": 4_000.0,
    "embedded_index_bytes_exempt_per_email": 6_000.0,
}


def test_the_deployed_figure_takes_the_embedded_records_out_and_prices_cloud_tasks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    items = cost.cost_per_email(FIGURES, handler_ms=100)
    deployed = cost.deployed_per_email(FIGURES, items, handler_ms=100)
    write, read = cost.PRICES["firestore_write"], cost.PRICES["firestore_read"]
    assert deployed["firestore writes"] == pytest.approx(15.0 * write)  # tasks and outbox out
    assert deployed["firestore storage"] == pytest.approx(cost.storage_usd(40_000.0))
    assert deployed["firestore TTL deletes"] == pytest.approx(5.0 * cost.PRICES["firestore_delete"])
    # each deadline task: created and delivered (two operations), then a request that reads twice
    assert deployed["cloud tasks"] == pytest.approx(2.0 * 2 * cost.PRICES["cloud_tasks_operation"])
    request = cost.PRICES["run_request"] + 2 * read
    assert deployed["deadline deliveries"] > 2.0 * request
    assert deployed["firestore reads"] == items["firestore reads"]  # nothing else moves
    assert list(deployed)[-1] == "llm tokens"


def test_a_deleted_deadline_task_costs_its_two_operations_and_no_delivery(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Of 2 tasks, 1 deleted by its decision: 3 writes to ``tasks`` (2 created, 1 deleted) and
    the embedded queue's read of the deleted one."""
    monkeypatch.syspath_prepend(str(BENCH))
    figures = {
        **FIGURES,
        "firestore_per_email": {"reads": 11.0, "writes": 21.0, "transactions": 0.0},
        "firestore_writes_by_collection_per_email": {"traces": 15.0, "tasks": 3.0, "outbox": 3.0},
        "firestore_deletes_by_collection_per_email": {"tasks": 1.0},
    }
    items = cost.cost_per_email(figures, handler_ms=100)
    deployed = cost.deployed_per_email(figures, items, handler_ms=100)
    kept = cost.deployed_per_email(FIGURES, cost.cost_per_email(FIGURES, handler_ms=100), 100)
    read = cost.PRICES["firestore_read"]
    assert deployed["firestore writes"] == pytest.approx(15.0 * cost.PRICES["firestore_write"])
    # two created: each created and then delivered or deleted (two operations)
    assert deployed["cloud tasks"] == pytest.approx(2.0 * 2 * cost.PRICES["cloud_tasks_operation"])
    assert deployed["deadline deliveries"] == pytest.approx(kept["deadline deliveries"] / 2)
    assert deployed["firestore reads"] == pytest.approx(items["firestore reads"] - read)

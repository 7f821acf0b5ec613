"""bench/firestore_ops.py: writes counted by collection, at the RPC layer."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from google.cloud.firestore_v1.types import CommitRequest, Document, Write

from tests.unit.bench.test_tokens import _load

ops = _load("firestore_ops")
DOCS = "projects/p/databases/(default)/documents"


class _Api:
    """The Firestore API client's methods the counter wraps, answering nothing."""

    def commit(self, request: Any = None) -> str:
        return "committed"

    def batch_write(self, request: Any = None) -> str:
        return "written"

    def begin_transaction(self, request: Any = None) -> None:
        return None

    def rollback(self, request: Any = None) -> None:
        return None

    def batch_get_documents(self, request: Any = None) -> list[Any]:
        return []

    def run_query(self, request: Any = None) -> list[Any]:
        return []


def test_each_write_of_a_commit_counts_for_the_collection_ids_of_its_path() -> None:
    api = _Api()
    counter = ops.count_operations(SimpleNamespace(client=SimpleNamespace(_firestore_api=api)))
    before = counter.snapshot()
    batch = CommitRequest(
        writes=[
            Write(update=Document(name=f"{DOCS}/traces/t1")),
            Write(update=Document(name=f"{DOCS}/traces/t1/steps/000001")),
            Write(delete=f"{DOCS}/effects/t1:1:notify"),
        ]
    )
    assert api.commit(request=batch) == "committed"
    api.commit(request={"writes": [Write(update=Document(name=f"{DOCS}/traces/t2"))]})
    done = counter.since(before)
    assert (done["writes"], done["commits"], done["reads"]) == (4, 2, 0)
    assert ops.writes_by_collection(done) == {"traces": 2, "effects": 1, "traces/steps": 1}
    assert ops.deletes_by_collection(done) == {"effects": 1}  # the delete is also a write


def test_the_embedded_adapters_records_are_the_schemas() -> None:
    assert {"tasks", "outbox", "mailbox_sent"} <= ops.EMBEDDED_RECORDS
    assert not {"traces", "effects", "approvals"} & ops.EMBEDDED_RECORDS


def test_a_commit_with_the_step_log_inline_is_one_write_to_traces() -> None:
    """The commit's update names ``log.{step}`` as a field path: one write, to ``traces``."""
    from google.cloud.firestore_v1.types import DocumentMask

    api = _Api()
    counter = ops.count_operations(SimpleNamespace(client=SimpleNamespace(_firestore_api=api)))
    before = counter.snapshot()
    mask = DocumentMask(field_paths=["state", "step", "log.`000003`", "log_bytes"])
    api.commit(
        request=CommitRequest(
            writes=[Write(update=Document(name=f"{DOCS}/traces/t1"), update_mask=mask)]
        )
    )
    done = counter.since(before)
    assert done["writes"] == 1
    assert ops.writes_by_collection(done) == {"traces": 1}

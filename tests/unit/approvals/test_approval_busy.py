"""A decision that meets contention answers 503 with Retry-After, decides nothing, and a retry works."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inboxflow.errors import Contention
from tests.harness.approval import Harness


def test_contention_is_a_503_with_retry_after_and_the_retry_decides(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    trace_id = h.start()
    approval = h.approval_of(trace_id)
    link = h.links(approval.approval_id)[0]
    form = h.form(link, "reject")
    real = h.store.run_transaction
    failures = [Contention("Firestore transaction aborted 12 times by concurrent writers")]

    def contended(fn: Any) -> Any:
        if failures:
            raise failures.pop()
        return real(fn)

    h.store.run_transaction = contended  # type: ignore[method-assign]
    busy = h.client.post(f"/a/{approval.approval_id}", data=form)
    assert busy.status_code == 503
    assert busy.headers["Retry-After"] == "2"
    assert "try again in a moment" in busy.get_data(as_text=True)
    assert h.approval_of(trace_id).status == "pending"

    retried = h.client.post(f"/a/{approval.approval_id}", data=form)
    assert retried.status_code == 200
    assert h.approval_of(trace_id).decision == "reject"

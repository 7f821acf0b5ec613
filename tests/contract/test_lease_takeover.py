"""A lease taken over after it expired: the first owner's late commit must not land.

Each store adapter may write leases and commits its own way (Firestore: writes
preconditioned on the checkpoint's update time, no transactions); these cases
pin what the precondition has to catch, on every adapter.
"""

from __future__ import annotations

import pytest
from tests.contract.conftest import StoreFactory
from tests.contract.test_checkpoint_store import _checkpoint, _start_log

from inboxflow.errors import StepMoved
from inboxflow.ports.checkpoint import Checkpoint, StepLog


def _log(now: float, label: str) -> StepLog:
    return StepLog(
        step_name="classify", step_order=1, output_delta={"label": label}, started_at=now
    )


def _advanced(checkpoint: Checkpoint, label: str, now: float) -> Checkpoint:
    return checkpoint.model_copy(
        update={
            "step": 2,
            "node": "draft",
            "state": {**checkpoint.state, "label": label},
            "updated_at": now,
            "lease": None,
        }
    )


@pytest.mark.parametrize("same_instance", [True, False])
def test_a_late_commit_after_a_takeover_is_refused(
    make_store: StoreFactory,
    same_instance: bool,
) -> None:
    first = make_store()
    second = first if same_instance else make_store()
    first.create_trace(_checkpoint(), _start_log())
    a = first.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    b = second.take_lease("tr1", 1, "worker-b", now=1061.0, ttl_s=60)  # a's lease expired
    with pytest.raises(StepMoved):
        first.commit_step(_advanced(a, "from-a", 1070.0), "worker-a", _log(1070.0, "from-a"))
    second.commit_step(_advanced(b, "from-b", 1071.0), "worker-b", _log(1071.0, "from-b"))
    stored = first.get_trace("tr1")
    assert stored is not None and stored.step == 2 and stored.state["label"] == "from-b"
    assert [log.output_delta.get("label") for log in first.step_logs("tr1")] == [None, "from-b"]


def test_a_commit_lands_when_another_field_changed_under_the_lease(
    make_store: StoreFactory,
) -> None:
    """A write to the checkpoint that keeps step and owner does not cost the step its commit."""
    store = make_store()
    store.create_trace(_checkpoint(), _start_log())
    leased = store.take_lease("tr1", 1, "worker-a", now=1000.0, ttl_s=60)
    other = make_store()
    other.take_lease("tr1", 1, "worker-a", now=1001.0, ttl_s=60)  # the same owner renews
    store.commit_step(_advanced(leased, "x", 1002.0), "worker-a", _log(1002.0, "x"))
    stored = store.get_trace("tr1")
    assert stored is not None and stored.step == 2 and stored.lease is None

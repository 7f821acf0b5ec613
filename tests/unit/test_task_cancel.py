"""``TaskQueue.cancel`` on the adapters: the embedded queue deletes a pending task's record;
Cloud Tasks sends ``DeleteTask`` and takes "gone" or "cannot" as False."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from google.api_core import exceptions as gexc

from inboxflow.adapters.cloud_tasks import CloudTasksQueue, CloudTasksUnavailable
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.sqlite_tasks import SqliteTaskQueue
from inboxflow.ports.tasks import ScheduledTask


def _task(name: str, run_at: float) -> ScheduledTask:
    return ScheduledTask(name=name, url="http://approvals.test/timeout", run_at=run_at)


def test_the_embedded_queue_deletes_a_pending_task_once(tmp_path: Path) -> None:
    store = SqliteCheckpointStore(tmp_path / "t.sqlite")
    queue = SqliteTaskQueue(store)
    now = time.time()
    assert queue.schedule(_task("ap-1-d0", now + 10))
    assert queue.schedule(_task("ap-2-d0", now + 20))
    assert queue.cancel("ap-1-d0") is True
    assert [t.name for t in queue.pending()] == ["ap-2-d0"]
    assert queue.cancel("ap-1-d0") is False
    assert queue.cancel("never") is False
    ran: list[str] = []
    assert queue.run_due(now + 30, lambda task: ran.append(task.name)) == 1
    assert ran == ["ap-2-d0"]
    assert queue.cancel("ap-2-d0") is False  # run already: its record is kept
    store.close()


class FakeClient:
    """The part of ``CloudTasksClient`` that ``cancel`` uses."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.deleted: list[str] = []

    def queue_path(self, project: str, location: str, queue: str) -> str:
        return f"projects/{project}/locations/{location}/queues/{queue}"

    def delete_task(self, name: str, **_: Any) -> None:
        self.deleted.append(name)
        if self.error is not None:
            raise self.error


def test_cloud_tasks_cancel_deletes_the_named_task() -> None:
    client = FakeClient()
    queue = CloudTasksQueue(project="p", location="l", queue="q", client=client)  # type: ignore[arg-type]
    assert queue.cancel("ap-1-d0") is True
    assert client.deleted == ["projects/p/locations/l/queues/q/tasks/ap-1-d0"]


@pytest.mark.parametrize(
    "error", [gexc.NotFound("gone"), gexc.MethodNotImplemented("the emulator")]
)
def test_cloud_tasks_cancel_of_a_task_gone_or_undeletable_is_false(error: Exception) -> None:
    queue = CloudTasksQueue(client=FakeClient(error))  # type: ignore[arg-type]
    assert queue.cancel("ap-1-d0") is False


def test_cloud_tasks_cancel_raises_a_transient_error_as_retryable() -> None:
    queue = CloudTasksQueue(client=FakeClient(gexc.ServiceUnavailable("down")))  # type: ignore[arg-type]
    with pytest.raises(CloudTasksUnavailable):
        queue.cancel("ap-1-d0")

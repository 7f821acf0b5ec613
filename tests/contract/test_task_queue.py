"""The task queue contract, run against every adapter (SQLite, Cloud Tasks emulator).

Tasks POST to a small HTTP server the test runs; for Cloud Tasks the emulator
itself makes the call (for ``http_request`` tasks it POSTs to the absolute URL;
``--target-host/--target-port`` only apply to App Engine tasks).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.sqlite_tasks import SqliteTaskQueue
from inboxflow.ports.tasks import ScheduledTask, TaskQueue


class Receiver:
    """An HTTP endpoint that records every request it gets."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.requests.append(
                    {
                        "at": time.time(),
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class QueueHarness:
    """An adapter plus ``fire_due``: what makes due tasks run (a no-op where the service does)."""

    def __init__(self, queue: TaskQueue, fire_due: Any = None) -> None:
        self.queue = queue
        self._fire_due = fire_due

    def wait_for(
        self, receiver: Receiver, count: int, timeout_s: float = 15
    ) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while len(receiver.requests) < count and time.monotonic() < deadline:
            if self._fire_due is not None:
                self._fire_due()
            time.sleep(0.05)
        return receiver.requests


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    endpoint = Receiver()
    yield endpoint
    endpoint.close()


@pytest.fixture(params=["sqlite", pytest.param("cloud_tasks", marks=pytest.mark.emulator)])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[QueueHarness]:
    if request.param == "sqlite":
        store = SqliteCheckpointStore(tmp_path / "tasks.sqlite")
        sqlite_queue = SqliteTaskQueue(store)
        yield QueueHarness(sqlite_queue, lambda: sqlite_queue.run_due(time.time()))
        store.close()
        return
    request.getfixturevalue("tasks_env")
    from inboxflow.adapters.cloud_tasks import CloudTasksQueue

    cloud_queue = CloudTasksQueue.from_env(os.environ)
    cloud_queue.ensure_queue()
    yield QueueHarness(cloud_queue)
    cloud_queue.close()


def _task(receiver: Receiver, name: str, run_at: float, **payload: Any) -> ScheduledTask:
    return ScheduledTask(name=name, url=f"{receiver.url}/timeout", payload=payload, run_at=run_at)


def test_due_task_posts_its_json_payload(harness: QueueHarness, receiver: Receiver) -> None:
    payload = {"approval_id": "ap-1", "reviewers": ["a@example.com"], "note": "Grüße"}
    assert harness.queue.schedule(_task(receiver, "ap-1-deadline", time.time(), **payload))
    [request] = harness.wait_for(receiver, 1)
    assert request["path"] == "/timeout"
    assert request["headers"]["content-type"] == "application/json"
    assert request["headers"]["x-cloudtasks-taskname"] == "ap-1-deadline"
    assert json.loads(request["body"]) == payload


def test_schedule_is_idempotent_by_name(harness: QueueHarness, receiver: Receiver) -> None:
    later = time.time() + 1.0
    assert harness.queue.schedule(_task(receiver, "ap-2-deadline", later, attempt=1)) is True
    assert harness.queue.schedule(_task(receiver, "ap-2-deadline", later, attempt=2)) is False
    assert harness.queue.schedule(_task(receiver, "ap-3-deadline", later, attempt=3)) is True
    requests = harness.wait_for(receiver, 2)
    time.sleep(0.5)  # a duplicate would arrive right behind the others
    bodies = sorted(json.loads(r["body"])["attempt"] for r in requests)
    assert bodies == [1, 3]


def test_future_task_waits_for_its_time(harness: QueueHarness, receiver: Receiver) -> None:
    run_at = time.time() + 2.0
    assert harness.queue.schedule(_task(receiver, "ap-4-deadline", run_at, approval_id="ap-4"))
    harness.wait_for(receiver, 1, timeout_s=1.0)
    assert receiver.requests == [], "ran before its schedule time"
    [request] = harness.wait_for(receiver, 1, timeout_s=10)
    assert request["at"] >= run_at - 0.05
    assert json.loads(request["body"]) == {"approval_id": "ap-4"}


def test_cancel_deletes_a_pending_task_or_says_it_did_not(
    harness: QueueHarness, receiver: Receiver
) -> None:
    """``cancel`` True: the task never runs; False (gcloud-tasks-emulator cannot delete):
    it runs as scheduled. Never an error, also for a name never scheduled."""
    run_at = time.time() + 1.5
    assert harness.queue.schedule(_task(receiver, "ap-5-deadline", run_at, approval_id="ap-5"))
    cancelled = harness.queue.cancel("ap-5-deadline")
    requests = harness.wait_for(receiver, 1, timeout_s=5)
    assert len(requests) == (0 if cancelled else 1)
    assert harness.queue.cancel("ap-never-scheduled") is False


# --- Cloud Tasks specifics ------------------------------------------------------------------


@pytest.mark.emulator
def test_cloud_task_request_shape(
    tasks_env: str, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The created task carries name, schedule time, body and an OIDC token for the audience."""
    from inboxflow.adapters.cloud_tasks import CloudTasksQueue

    monkeypatch.setenv("INBOXFLOW_TASKS_SA", "tasks@inboxflow-local.iam.gserviceaccount.com")
    queue = CloudTasksQueue.from_env(os.environ)
    queue.ensure_queue()
    run_at = time.time() + 600
    task = ScheduledTask(
        name="ap-5-deadline",
        url=f"{receiver.url}/timeout",
        payload={"approval_id": "ap-5"},
        run_at=run_at,
        audience="https://approve.example.com",
    )
    assert queue.schedule(task) is True
    [stored] = [t for t in queue.client.list_tasks(parent=queue.queue_path)]
    assert stored.name == f"{queue.queue_path}/tasks/ap-5-deadline"
    assert stored.name.startswith(
        f"projects/inboxflow-local/locations/us-central1/queues/{tasks_env}"
    )
    assert abs(stored.schedule_time.timestamp() - run_at) < 1e-3
    assert stored.http_request.url == task.url
    assert json.loads(stored.http_request.body) == {"approval_id": "ap-5"}
    assert stored.http_request.oidc_token.audience == "https://approve.example.com"
    assert stored.http_request.oidc_token.service_account_email.startswith("tasks@")
    # Another process (a new client) scheduling the same name while it is pending.
    assert CloudTasksQueue.from_env(os.environ).schedule(task) is False
    queue.close()


@pytest.mark.emulator
def test_cloud_tasks_refuses_more_than_30_days_ahead(tasks_env: str, receiver: Receiver) -> None:
    from inboxflow.adapters.cloud_tasks import CloudTasksQueue

    queue = CloudTasksQueue.from_env(os.environ)
    with pytest.raises(ValueError, match="30 days"):
        queue.schedule(_task(receiver, "ap-6-deadline", time.time() + 31 * 86400))
    queue.close()

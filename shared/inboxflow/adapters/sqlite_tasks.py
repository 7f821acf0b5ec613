"""Embedded task queue: tasks stored as documents, fired by the local runner."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

from ..ports.documents import DocumentStore, Transaction
from ..ports.tasks import ScheduledTask, TaskQueue
from ..schema import TASKS

TaskRunner = Callable[[ScheduledTask], None]


def post_json(task: ScheduledTask, bearer: str | None = None) -> None:
    """Run a task the way Cloud Tasks does: POST its JSON payload to its URL.

    Args:
        task: the task.
        bearer: sent as ``Authorization: Bearer`` (the local task token the approval
            function checks where no OIDC is verified).
    """
    headers = {"Content-Type": "application/json", "X-CloudTasks-TaskName": task.name}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    request = urllib.request.Request(
        task.url, data=json.dumps(task.payload).encode(), headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()


class SqliteTaskQueue(TaskQueue):
    """Tasks in ``tasks/{name}`` of an embedded store; ``run_due`` fires them."""

    def __init__(self, store: DocumentStore) -> None:
        self.store = store

    def schedule(self, task: ScheduledTask) -> bool:
        doc: dict[str, Any] = {**task.model_dump(), "status": "pending", "attempts": 0}
        return self.store.create(TASKS.path(task.name), doc)

    def cancel(self, name: str) -> bool:
        """Delete ``tasks/{name}`` while it is pending (a task run or failed is kept)."""
        path = TASKS.path(name)

        def delete(tx: Transaction) -> bool:
            doc = tx.get(path)
            if doc is None or doc.get("status") != "pending":
                return False
            tx.delete(path)
            return True

        return self.store.run_transaction(delete)

    def pending(self) -> list[ScheduledTask]:
        """Tasks not yet run, soonest first."""
        rows = self.store.list(TASKS.name, where=[("status", "==", "pending")], order_by="run_at")
        return [ScheduledTask.model_validate(doc) for _, doc in rows]

    def run_due(self, now: float, runner: TaskRunner = post_json, max_attempts: int = 5) -> int:
        """Run every pending task whose time has come. Returns how many succeeded."""
        done = 0
        for task in self.pending():
            if task.run_at > now:
                break
            path = TASKS.path(task.name)
            doc = self.store.get(path) or {}
            try:
                runner(task)
            except Exception as exc:
                doc["attempts"] = doc.get("attempts", 0) + 1
                doc["last_error"] = f"{type(exc).__name__}: {exc}"
                if doc["attempts"] >= max_attempts:
                    doc["status"] = "failed"
                self.store.set(path, doc)
                continue
            doc["status"] = "done"
            self.store.set(path, doc)
            done += 1
        return done

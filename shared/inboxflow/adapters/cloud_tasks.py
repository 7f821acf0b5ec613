"""Cloud Tasks task queue: HTTP tasks with OIDC tokens, named for idempotency.

Only this module imports ``google.cloud.tasks_v2``. Against
``gcloud-tasks-emulator`` (``CLOUD_TASKS_EMULATOR_HOST``) the client talks
plain gRPC; that emulator neither rejects duplicate task names nor deletes
tasks (``DeleteTask`` answers ``UNIMPLEMENTED``: ``cancel`` returns False and the
task runs), so in emulator mode the queue checks the pending tasks (and the
names it created itself) before creating one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import tasks_v2

from ..errors import RetryableError
from ..ports.tasks import ScheduledTask, TaskQueue

MAX_SCHEDULE_AHEAD_S = 30 * 86400
"""Cloud Tasks refuses a schedule_time more than 30 days ahead; longer waits re-schedule."""

_TRANSIENT: tuple[type[Exception], ...] = (
    gexc.ServiceUnavailable,
    gexc.DeadlineExceeded,
    gexc.ResourceExhausted,
    gexc.InternalServerError,
    gexc.Aborted,
    gexc.RetryError,
)


class CloudTasksUnavailable(RetryableError):
    """Cloud Tasks answered with a transient error (UNAVAILABLE, DEADLINE_EXCEEDED, ...)."""


@contextlib.contextmanager
def _translated(what: str) -> Iterator[None]:
    try:
        yield
    except _TRANSIENT as exc:
        raise CloudTasksUnavailable(f"Cloud Tasks {what}: {exc}") from exc


def _client(emulator_host: str | None) -> tasks_v2.CloudTasksClient:
    if not emulator_host:
        return tasks_v2.CloudTasksClient()
    import grpc
    from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

    channel = grpc.insecure_channel(emulator_host)
    return tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))


class CloudTasksQueue(TaskQueue):
    """Schedules ``ScheduledTask`` as Cloud Tasks HTTP tasks.

    Args:
        project: default ``inboxflow-local`` (``from_env``: ``GOOGLE_CLOUD_PROJECT``).
        location: default ``us-central1`` (``from_env``: ``INBOXFLOW_REGION``).
        queue: default ``inboxflow-approvals`` (``from_env``: ``INBOXFLOW_TASKS_QUEUE``).
        service_account: email the OIDC token is minted for (``from_env``:
            ``INBOXFLOW_TASKS_SA``); without one, tasks carry no token.
        emulator_host: ``host:port`` of gcloud-tasks-emulator (``from_env``:
            ``CLOUD_TASKS_EMULATOR_HOST``).
        client: an existing client (overrides ``emulator_host``).
        local_token: sent as ``Authorization: Bearer`` by tasks without an OIDC token
            (no ``service_account``): the local task token the approval function
            checks where it verifies no OIDC (``approvals/task_auth.py``; the emulator).
    """

    def __init__(
        self,
        project: str | None = None,
        location: str | None = None,
        queue: str | None = None,
        service_account: str | None = None,
        emulator_host: str | None = None,
        client: tasks_v2.CloudTasksClient | None = None,
        local_token: str | None = None,
    ) -> None:
        self.project = project or "inboxflow-local"
        self.location = location or "us-central1"
        self.queue = queue or "inboxflow-approvals"
        self.service_account = service_account or None
        emulator_host = emulator_host or None
        self.emulated = client is None and emulator_host is not None
        self.client = client or _client(emulator_host)
        self.queue_path = self.client.queue_path(self.project, self.location, self.queue)
        self.local_token = local_token
        self._created: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **options: Any) -> CloudTasksQueue:
        """The queue ``environ`` (the entry point's environment) names, unless ``options`` do."""
        for name, variable in (
            ("project", "GOOGLE_CLOUD_PROJECT"),
            ("location", "INBOXFLOW_REGION"),
            ("queue", "INBOXFLOW_TASKS_QUEUE"),
            ("service_account", "INBOXFLOW_TASKS_SA"),
            ("emulator_host", "CLOUD_TASKS_EMULATOR_HOST"),
        ):
            if options.get(name) is None:
                options[name] = environ.get(variable) or None
        return cls(**options)

    def task_path(self, name: str) -> str:
        """``{queue_path}/tasks/{name}``."""
        return f"{self.queue_path}/tasks/{name}"

    def build(self, task: ScheduledTask) -> tasks_v2.Task:
        """The Cloud Tasks request for ``task`` (also what tests inspect)."""
        if task.run_at > time.time() + MAX_SCHEDULE_AHEAD_S:
            raise ValueError(
                f"task {task.name} is scheduled more than 30 days ahead; Cloud Tasks refuses "
                "that, schedule an intermediate task that re-schedules itself"
            )
        http_request: dict[str, Any] = {
            "http_method": tasks_v2.HttpMethod.POST,
            "url": task.url,
            "headers": {"Content-Type": "application/json"},
            "body": json.dumps(task.payload).encode(),
        }
        if self.service_account:
            http_request["oidc_token"] = {
                "service_account_email": self.service_account,
                "audience": task.audience or task.url,
            }
        elif self.local_token:
            http_request["headers"]["Authorization"] = f"Bearer {self.local_token}"
        return tasks_v2.Task(
            name=self.task_path(task.name),
            http_request=http_request,
            schedule_time=dt.datetime.fromtimestamp(task.run_at, tz=dt.UTC),
        )

    def schedule(self, task: ScheduledTask) -> bool:
        request = self.build(task)
        if self.emulated:
            with self._lock:
                if request.name in self._created or request.name in self.pending_names():
                    return False
                created = self._create(request)
                self._created.add(request.name)
                return created
        return self._create(request)

    def _create(self, request: tasks_v2.Task) -> bool:
        try:
            with _translated(f"create_task {request.name}"):
                self.client.create_task(parent=self.queue_path, task=request)
        except gexc.AlreadyExists:
            return False
        return True

    def cancel(self, name: str) -> bool:
        """``DeleteTask`` of ``name``: False when it is gone already (``NOT_FOUND``) or the
        server cannot delete (gcloud-tasks-emulator answers ``UNIMPLEMENTED``: the task runs)."""
        path = self.task_path(name)
        try:
            with _translated(f"delete_task {path}"):
                self.client.delete_task(name=path)
        except (gexc.NotFound, gexc.MethodNotImplemented):
            return False
        return True

    def pending_names(self) -> set[str]:
        """Full names of the tasks still in the queue (the emulator drops tasks once run)."""
        with _translated(f"list_tasks {self.queue_path}"):
            return {t.name for t in self.client.list_tasks(parent=self.queue_path)}

    def ensure_queue(self) -> str:
        """Create the queue unless it exists (local setups; Terraform owns it in production)."""
        parent = self.client.common_location_path(self.project, self.location)
        with contextlib.suppress(gexc.AlreadyExists), _translated("create_queue"):
            self.client.create_queue(parent=parent, queue=tasks_v2.Queue(name=self.queue_path))
        return str(self.queue_path)

    def close(self) -> None:
        transport = getattr(self.client, "transport", None)
        close = getattr(transport, "close", None)
        if close is not None:
            close()

"""Issue 38: behind a load balancer (``approval_access = "none"``) the deadline tasks
call the approval function's own URL, and their OIDC token is minted for it.

Cloud Run's invoker check accepts a token only for the service's own URL, so
``INBOXFLOW_TASKS_URL`` (set by infra/) moves the tasks' target and audience
off the reviewers' ``INBOXFLOW_APPROVAL_URL``; without it nothing changes.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

from inboxflow.adapters.cloud_tasks import CloudTasksQueue
from inboxflow.approvals import oidc
from inboxflow.approvals.deadlines import Deadlines
from inboxflow.approvals.grounds import Grounds
from inboxflow.approvals.settings import ApprovalConfig
from inboxflow.ports.tasks import ScheduledTask

LB = "https://approvals.example.com"
RUN = "https://inboxflow-approve-123456789012.europe-west1.run.app"


class RecordingQueue:
    """A task queue that keeps what it is asked to schedule (our own port)."""

    def __init__(self) -> None:
        self.tasks: list[ScheduledTask] = []

    def schedule(self, task: ScheduledTask) -> bool:
        self.tasks.append(task)
        return True


def _scheduled(environ: dict[str, str]) -> ScheduledTask:
    queue = RecordingQueue()
    clock = SimpleNamespace(now=lambda: 1_000.0)
    deadlines = Deadlines(
        grounds=Grounds(
            store=None,  # type: ignore[arg-type]
            clock=clock,  # type: ignore[arg-type]
            config=ApprovalConfig.from_env(environ),
        ),
        tasks=queue,  # type: ignore[arg-type]
        decisions=None,  # type: ignore[arg-type]
        announce=lambda approval: None,
    )
    approval: Any = SimpleNamespace(approval_id="ap-1", deadline=5_000.0)
    deadlines.schedule(approval, 0, 0)
    return queue.tasks[0]


def test_tasks_call_and_are_minted_for_the_tasks_url() -> None:
    environ = {"INBOXFLOW_APPROVAL_URL": LB, "INBOXFLOW_TASKS_URL": RUN + "/"}
    task = _scheduled(environ)
    assert task.url == f"{RUN}/timeout"
    assert task.audience == RUN
    # Reviewers' links still point at the load balancer.
    assert ApprovalConfig.from_env(environ).link("ap-1", "t") == f"{LB}/a/ap-1?t=t"
    # The function verifies the same audience the tasks are minted for.
    assert oidc.verifier_from_env(environ).audience == RUN
    # ... and Cloud Tasks gets it on the token.
    queue = CloudTasksQueue.from_env(  # an emulator address: a channel is opened lazily, never used here
        os.environ,
        project="p",
        location="europe-west1",
        queue="q",
        service_account="sa@p",
        emulator_host="127.0.0.1:9",
    )
    request = queue.build(task)
    assert request.http_request.url == f"{RUN}/timeout"
    assert request.http_request.oidc_token.audience == RUN


def test_without_a_tasks_url_nothing_moves() -> None:
    task = _scheduled({"INBOXFLOW_APPROVAL_URL": LB})
    assert task.url == f"{LB}/timeout" and task.audience == LB
    assert oidc.verifier_from_env({"INBOXFLOW_APPROVAL_URL": LB}).audience == LB


def test_an_explicit_audience_wins() -> None:
    environ = {
        "INBOXFLOW_APPROVAL_URL": LB,
        "INBOXFLOW_TASKS_URL": RUN,
        "INBOXFLOW_TASKS_AUDIENCE": "https://audience.example.com",
    }
    task = _scheduled(environ)
    assert task.url == f"{RUN}/timeout"
    assert task.audience == "https://audience.example.com"
    assert oidc.verifier_from_env(environ).audience == "https://audience.example.com"

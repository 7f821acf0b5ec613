"""The pipeline with the approval service and the approval function, for approval tests."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask, Request, Response, request

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.notifiers import OutboxNotifier
from inboxflow.adapters.sqlite_tasks import SqliteTaskQueue
from inboxflow.approvals.app import handle_http
from inboxflow.approvals.records import Approval
from inboxflow.approvals.service import ApprovalService
from inboxflow.approvals.settings import ApprovalConfig
from inboxflow.clock import FakeClock
from inboxflow.graphs.pipeline.settings import PipelineSettings
from inboxflow.ports.checkpoint import CheckpointStore
from inboxflow.ports.tasks import ScheduledTask, TaskQueue
from inboxflow.runtime import Runtime
from inboxflow.services import pause_kinds_of
from tests.harness.pipeline import build

LINK = re.compile(r"https?://[^\s\"'<>]+/a/([A-Za-z0-9_-]+)\?t=([A-Za-z0-9_-]+)")
FORM_TOKEN = re.compile(r'name="form" value="([^"]+)"')
COMPLAINT = "04-complaint-double-charge"
REVIEWERS = ("ana@brightlane.io", "ben@brightlane.io")
BACKUP = "lead@brightlane.io"


@dataclass
class Link:
    """A review link as a reviewer received it."""

    approval_id: str
    token: str
    to: str

    @property
    def path(self) -> str:
        return f"/a/{self.approval_id}?t={self.token}"


class Harness:
    """Runtime + approval service + a Flask app serving the approval function."""

    def __init__(
        self,
        tmp_path: Path,
        store: CheckpointStore | None = None,
        tasks: TaskQueue | None = None,
        bus: InProcessBus | None = None,
        config: ApprovalConfig | None = None,
        settings: PipelineSettings | None = None,
    ) -> None:
        self.runtime: Runtime = build(tmp_path, bus=bus, store=store)
        self.runtime.ports.graph_settings.use(
            "pipeline", settings or PipelineSettings(reviewers=REVIEWERS, approval_deadline_s=3600)
        )
        self.clock: FakeClock = self.runtime.clock  # type: ignore[assignment]
        self.store = self.runtime.store
        self.tasks = tasks or SqliteTaskQueue(self.store)
        self.inbox: list[dict[str, Any]] = []
        """Notifications as reviewers received them (the outbox keeps redacted copies)."""
        self.outbox = OutboxNotifier(self.store, self.clock, deliver=self.inbox.append)
        self.service = ApprovalService(
            store=self.store,
            tasks=self.tasks,
            notifier=self.outbox,
            resume=self.runtime.resume,
            clock=self.clock,
            config=config or ApprovalConfig(base_url="http://approvals.test", api_key="k" * 40),
            kinds=pause_kinds_of(self.runtime.graphs),
        )
        self.runtime.on_pause = self.service.after_pause
        self._draining = threading.Lock()
        self.app = _flask_app(self)
        self.client = self.app.test_client()

    # --- driving the pipeline ---------------------------------------------------------

    def start(self, email: dict[str, Any] | None = None, name: str = COMPLAINT) -> str:
        """Start one trace and run it to its pause (or end)."""
        if email is None:
            email = sample(name)
        trace_id = self.runtime.start("pipeline", {"email": email})
        self.drain()
        return trace_id

    def drain(self) -> None:
        """Deliver what the bus holds, one drainer at a time.

        Request threads drain after each request, as the embedded approval
        function does. Two concurrent drains would race for the same queue and
        both advance the fake clock by their redelivery backoff: a live lease
        then looks expired in fake time and a second worker runs the step
        while the first still does (two drafts once in ~8 runs of the
        fifty-decisions test). One drainer keeps the clock honest.
        """
        bus = self.runtime.bus
        assert isinstance(bus, InProcessBus)
        with self._draining:
            bus.drain()

    def approval_of(self, trace_id: str) -> Approval:
        rows = self.store.list("approvals", where=[("trace_id", "==", trace_id)])
        assert rows, f"trace {trace_id} did not pause"
        return Approval.model_validate(rows[-1][1])

    def links(self, approval_id: str | None = None) -> list[Link]:
        """Review links as the reviewers received them, oldest first."""
        found = []
        for message in self.inbox:
            for match in LINK.finditer(message["text"]):
                if approval_id is None or match.group(1) == approval_id:
                    found.append(Link(match.group(1), match.group(2), message["to"]))
        return found

    def form_token(self, link: Link) -> str:
        """Open ``link``'s review page and return its form's token."""
        page = self.client.get(link.path).get_data(as_text=True)
        match = FORM_TOKEN.search(page)
        assert match, "the review page has no form token"
        return match.group(1)

    def form(self, link: Link, decision: str, **fields: str) -> dict[str, str]:
        """The form a reviewer posts from ``link``'s review page."""
        return {"form": self.form_token(link), "decision": decision, **fields}

    def snapshot(self, trace_id: str) -> dict[str, Any]:
        """Everything a request must not change when it is refused."""
        checkpoint = self.store.get_trace(trace_id)
        assert checkpoint is not None
        approval = self.approval_of(trace_id)
        return {
            "trace": checkpoint.model_dump(),
            "approval": approval.model_dump(),
            "tokens": sorted(self.store.list("approval_tokens"), key=lambda row: row[0]),
            "drafts": self.store.list("mailbox_drafts"),
            "sent": self.store.list("mailbox_sent"),
        }

    def run_due_tasks(self) -> int:
        """Fire due deadline tasks through the approval function's /timeout endpoint."""
        assert isinstance(self.tasks, SqliteTaskQueue)

        def runner(task: ScheduledTask) -> None:
            path = "/" + task.url.split("://", 1)[1].split("/", 1)[1]
            response = self.client.post(path, json=task.payload)
            assert response.status_code == 200, response.data

        return self.tasks.run_due(self.clock.now(), runner)


def sample(name: str) -> dict[str, Any]:
    from inboxflow.dev.cli.local import sample_inbox
    from inboxflow.mail import load_email_file

    path = next(p for p in sample_inbox() if p.stem.startswith(name))
    return load_email_file(path).model_dump(mode="json")


def _flask_app(harness: Harness) -> Flask:
    app = Flask("approvals-test")

    @app.route("/", defaults={"path": ""}, methods=["GET", "POST", "HEAD", "PUT", "DELETE"])
    @app.route("/<path:path>", methods=["GET", "POST", "HEAD", "PUT", "DELETE"])
    def serve(path: str) -> Response:
        req: Request = request
        response = handle_http(req, harness.service, verify_task=lambda _r: None)
        harness.drain()
        return response

    return app

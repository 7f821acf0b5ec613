"""The pipeline's tools through the registry: specs, read tools, action tools exactly once,
and dispatch running the planned actions."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.engine.context import NodeContext
from inboxflow.engine.effects import EffectJournal
from inboxflow.engine.step import END
from inboxflow.engine.tools import ToolRegistry
from inboxflow.graphs.pipeline.nodes.dispatch import dispatch
from inboxflow.graphs.pipeline.settings import PipelineSettings
from inboxflow.graphs.pipeline.state import Draft, PipelineState, Review, ToolCall
from inboxflow.graphs.pipeline.tools import pipeline_tools
from inboxflow.mail import load_email_file, sample_inbox_dir
from inboxflow.mail_stamps import stamp_of
from inboxflow.ports.workspace import Interval
from inboxflow.workspace import seed_workspace
from tests.harness.mail_auth import gmail_pass
from tests.harness.runtimes import ports_for

MONDAY_8AM = datetime(2026, 3, 2, 8, 0, tzinfo=UTC).timestamp()


class RecordingWorkspace(StoreWorkspace):
    """StoreWorkspace that records free/busy questions and can be told to fail."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.free_busy_calls: list[Interval] = []
        self.busy: list[Interval] | None = None
        self.broken = False
        self.mailboxes: list[str] = []

    def free_busy(self, start: datetime, end: datetime) -> list[Interval]:
        self.free_busy_calls.append((start, end))
        return self.busy if self.busy is not None else super().free_busy(start, end)

    def list_events(self, start: datetime, end: datetime) -> list[dict[str, Any]]:
        if self.broken:
            raise ConnectionError("calendar unreachable")
        return super().list_events(start, end)

    def for_mailbox(self, mailbox: str) -> StoreWorkspace:
        self.mailboxes.append(mailbox)
        return self


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteCheckpointStore]:
    opened = SqliteCheckpointStore(tmp_path / "tools.db")
    seed_workspace(opened, MONDAY_8AM)
    yield opened
    opened.close()


@pytest.fixture
def workspace(store: SqliteCheckpointStore) -> RecordingWorkspace:
    return RecordingWorkspace(store)


PRIYA = "priya.raman@kestrel-logistics.com"
BOUND = {
    "correspondent": (PRIYA,),
    "people_on_the_email": (PRIYA,),
    "message_answered": ("q2@kestrel.example",),
}
"""What the action tools are bound to in these calls (dispatch binds them from the email)."""


def _ctx(
    store: SqliteCheckpointStore,
    workspace: Any,
    step: int = 6,
    settings: PipelineSettings | None = None,
) -> NodeContext:
    clock = FakeClock(MONDAY_8AM)
    ports = ports_for(Path(store.path).parent, store=store, clock=clock, workspace=workspace)
    if settings is not None:
        ports.graph_settings.use("pipeline", settings)
    return NodeContext(
        trace_id="trace-1",
        graph="pipeline",
        node="dispatch",
        step=step,
        clock=clock,
        store=store,
        tools=ToolRegistry(pipeline_tools()),
        journal=EffectJournal(store, clock),
        ports=ports,
        bound=BOUND,
    )


def test_every_tool_has_a_json_schema_spec_and_the_right_kind() -> None:
    registry = ToolRegistry(pipeline_tools())
    specs = {spec["name"]: spec for spec in registry.specs()}
    assert sorted(specs) == [
        "check_calendar",
        "create_draft",
        "get_contact",
        "mark_as_read",
        "schedule_meeting",
        "send_email",
    ]
    assert set(specs["send_email"]["parameters"]["required"]) == {"to", "subject", "thread_id"}
    assert specs["schedule_meeting"]["parameters"]["properties"]["start"]["format"] == "date-time"
    actions = {name for name in specs if registry.get(name).action}
    assert actions == {"create_draft", "send_email", "mark_as_read", "schedule_meeting"}


def test_check_calendar_offers_slots_outside_the_busy_intervals(store, workspace) -> None:
    ctx = _ctx(store, workspace)
    tuesday = datetime(2026, 3, 3, tzinfo=UTC)
    workspace.busy = [(tuesday + timedelta(hours=9), tuesday + timedelta(hours=16, minutes=30))]
    result = ctx.call_tool("check_calendar", {"days": 1, "duration_minutes": 30, "max_slots": 3})
    assert workspace.free_busy_calls == [
        (tuesday + timedelta(hours=9), tuesday + timedelta(hours=17))
    ]
    assert [slot["start"] for slot in result["slots"]] == ["2026-03-03T16:30:00+00:00"]
    assert result["busy_events"] == 1
    assert ctx.tool_calls[0]["name"] == "check_calendar" and "result" in ctx.tool_calls[0]


def test_check_calendar_on_the_seed_avoids_every_seeded_event(store, workspace) -> None:
    result = _ctx(store, workspace).call_tool("check_calendar", {"days": 5, "max_slots": 10})
    busy = workspace.free_busy(
        datetime(2026, 3, 3, 9, tzinfo=UTC), datetime(2026, 3, 9, 17, tzinfo=UTC)
    )
    assert len(result["slots"]) == 10
    for slot in result["slots"]:
        start, end = datetime.fromisoformat(slot["start"]), datetime.fromisoformat(slot["end"])
        assert all(end <= b_start or start >= b_end for b_start, b_end in busy), slot


def test_send_email_runs_once_per_step_and_is_recorded(store, workspace) -> None:
    arguments = {
        "to": "priya.raman@kestrel-logistics.com",
        "subject": "Pricing",
        "body": "Quote attached.",
        "thread_id": "first@kestrel.example",
        "in_reply_to": "<q2@kestrel.example>",
        "references": ["<first@kestrel.example>"],
    }
    first = _ctx(store, workspace).call_tool("send_email", arguments)
    rerun = _ctx(store, workspace).call_tool("send_email", arguments)  # the step re-run
    assert first == rerun
    [sent] = workspace.sent()
    assert sent["subject"] == "Re: Pricing"
    assert sent["headers"]["X-Inboxflow-Trace"] == stamp_of(store, "trace-1:6:send_email")
    assert sent["trace_key"] == "trace-1:6:send_email"
    assert sent["headers"]["References"] == "<first@kestrel.example> <q2@kestrel.example>"
    _ctx(store, workspace, step=7).call_tool("send_email", arguments)
    assert len(workspace.sent()) == 2  # another step is another effect


def test_schedule_meeting_inserts_one_event_even_when_rerun(store, workspace) -> None:
    arguments = {
        "summary": "Demo: Kestrel",
        "start": "2026-03-05T17:30:00Z",
        "duration_minutes": 45,
        "attendees": ["priya.raman@kestrel-logistics.com"],
    }
    first = _ctx(store, workspace).call_tool("schedule_meeting", arguments)
    _ctx(store, workspace).call_tool("schedule_meeting", arguments)
    events = workspace.list_events(
        datetime(2026, 3, 5, 17, tzinfo=UTC), datetime(2026, 3, 5, 19, tzinfo=UTC)
    )
    assert [e["id"] for e in events] == [first["id"]]
    assert events[0]["end"] == "2026-03-05T18:15:00+00:00"


def test_mark_as_read_and_mailbox_routing(store, workspace) -> None:
    ctx = _ctx(store, workspace)
    result = ctx.call_tool(
        "mark_as_read", {"message_id": "<q2@kestrel.example>", "mailbox": "maya@brightlane.io"}
    )
    assert result["found"] is True and workspace.is_read("q2@kestrel.example")
    assert workspace.mailboxes == ["maya@brightlane.io"]


def test_a_failing_tool_is_an_error_for_that_tool_only(store, workspace) -> None:
    ctx = _ctx(store, workspace)
    workspace.broken = True
    failed = ctx.call_tool("check_calendar", {})
    contact = ctx.call_tool("get_contact", {"email": "priya.raman@kestrel-logistics.com"})
    bad = ctx.call_tool("send_email", {"to": "x@example.com"})
    assert failed == {"error": "ConnectionError: calendar unreachable"}
    assert contact["found"] is True
    assert "validation error" in bad["error"]
    assert [("error" in call) for call in ctx.tool_calls] == [True, False, True]


def _dispatch_state(planned: list[ToolCall]) -> PipelineState:
    email = load_email_file(sample_inbox_dir() / "03-meeting-request.eml")
    return PipelineState(
        email=email,
        draft=Draft(
            to=email.sender.address, subject="Re: x", body="Tuesday works.", tone="friendly"
        ),
        review=Review(auto_dispatch=True),
        planned_actions=planned,
    )


def test_dispatch_replies_in_the_thread_and_runs_the_other_planned_actions(
    store, workspace
) -> None:
    email = load_email_file(sample_inbox_dir() / "03-meeting-request.eml")
    planned = [
        ToolCall(name="create_draft", arguments={"thread_id": email.thread_id}),
        ToolCall(name="mark_as_read", arguments={"message_id": email.message_id}),
        ToolCall(
            name="schedule_meeting",
            arguments={"summary": "Intro", "start": "2026-03-04T15:00:00Z"},
        ),
    ]
    ctx = _ctx(store, workspace, settings=PipelineSettings(auto_send=True))
    state = _dispatch_state(planned)
    # Sent with no person reviewing it: the sender must be authenticated (no relay).
    headers = {**email.headers, "authentication-results": gmail_pass(email.sender.address)}
    state = state.model_copy(update={"email": email.model_copy(update={"headers": headers})})
    step = dispatch(state, ctx)
    assert step.goto == END and step.update["dispatch"].status == "sent"
    [sent] = workspace.sent()
    assert sent["headers"]["In-Reply-To"] == f"<{email.message_id}>"
    assert sent["thread_id"] == email.thread_id
    assert workspace.mailboxes[0] == email.mailbox
    assert [call["name"] for call in ctx.tool_calls] == ["mark_as_read", "schedule_meeting"]
    assert all("error" not in call for call in ctx.tool_calls)
    assert workspace.is_read(email.message_id)
    assert (
        len(
            workspace.list_events(
                datetime(2026, 3, 4, 15, tzinfo=UTC), datetime(2026, 3, 4, 16, tzinfo=UTC)
            )
        )
        == 1
    )

"""Starting a trace from an email: loop protection first, then the graph's initial state; the
rule, profile and mailbox recorded at step 0 (SQLite store, in-process bus)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.engine.graph import Graph, Node, StartContext
from inboxflow.engine.runtime import Runtime
from inboxflow.engine.step import END, Step
from inboxflow.errors import RejectedEnvelope
from inboxflow.mail import Email, email_from_json
from inboxflow.ports.checkpoint import TraceRoute
from inboxflow.routing import RouteDecision
from inboxflow.start import start_email_trace
from tests.harness.runtimes import runtime_for

RAN: list[str] = []


class NoteState(BaseModel):
    email: dict[str, Any]
    started_by: dict[str, Any]
    answered: bool = False


def answer(state: NoteState, ctx: Any) -> Step:
    RAN.append(ctx.trace_id)
    return Step(update={"answered": True}, goto=END)


def note_state(email: Any, start: StartContext) -> dict[str, Any]:
    return {
        "email": dict(email),
        "started_by": {"rule": start.rule, "profile": start.profile, "mailbox": start.mailbox},
    }


NOTES = Graph.build(
    "notes",
    "answer",
    NoteState,
    [Node("answer", answer, routes=(END,))],
    initial_state=note_state,
    takes_profile=True,
)


@pytest.fixture
def runtime(tmp_path: Path) -> Runtime:
    clock = FakeClock()
    built = runtime_for(
        tmp_path,
        clock=clock,
        graphs={"notes": NOTES},
        store=SqliteCheckpointStore(tmp_path / "start.db"),
        bus=InProcessBus(clock=clock),
    )
    RAN.clear()
    return built


def email(**headers: str) -> Email:
    return email_from_json(
        {
            "from": "Priya <priya@kestrel-logistics.com>",
            "to": "maya.chen@brightlane.io",
            "subject": "Pricing",
            "body": "How much for 40 seats?",
            "date": "2026-11-12T09:00:00Z",
            "headers": headers,
        }
    )


DECISION = RouteDecision(
    "notes", "scheduler", "vip", [("billing", "no")], "maya.chen@brightlane.io"
)


def test_a_routed_email_starts_the_graph_with_its_rule_and_profile(runtime: Runtime) -> None:
    started = start_email_trace(runtime, email(), DECISION, trace_id="t1")
    assert started.blocked is None and started.trace_id == "t1"
    route = TraceRoute(rule="vip", profile="scheduler", mailbox="maya.chen@brightlane.io")
    checkpoint = runtime.store.get_trace("t1")
    assert checkpoint is not None and checkpoint.status == "running" and checkpoint.route == route
    assert checkpoint.state["started_by"] == {
        "rule": "vip",
        "profile": "scheduler",
        "mailbox": "maya.chen@brightlane.io",
    }
    assert runtime.store.step_logs("t1")[0].route == route
    runtime.bus.drain()  # type: ignore[attr-defined]
    assert RAN == ["t1"]
    done = runtime.store.get_trace("t1")
    assert done is not None and done.status == "done" and done.state["answered"] is True
    assert done.route == route  # the step commits keep it


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Auto-Submitted": "auto-replied"}, "Auto-Submitted: auto-replied"),
        ({"X-Inboxflow-Trace": "abc123"}, "our own message"),
        ({"Precedence": "bulk"}, "Precedence: bulk"),
        ({"List-Id": "<news.example.com>"}, "List-Id"),
        (
            {"Content-Type": "multipart/report; report-type=delivery-status"},
            "delivery status notification",
        ),
    ],
)
def test_mail_no_agent_may_answer_gets_a_trace_that_ends_at_once(
    runtime: Runtime, headers: dict[str, str], reason: str
) -> None:
    started = start_email_trace(runtime, email(**headers), DECISION, trace_id="t2")
    assert started.blocked is not None and reason in started.blocked
    assert started.blocked.startswith("loop protection: ")
    checkpoint = runtime.store.get_trace("t2")
    assert checkpoint is not None
    assert (checkpoint.status, checkpoint.node, checkpoint.next) == ("done", END, [])
    assert checkpoint.route is not None and checkpoint.route.blocked == started.blocked
    assert checkpoint.route.rule == "vip"
    logs = runtime.store.step_logs("t2")
    assert [(log.step_name, log.routed_to) for log in logs] == [("__start__", END)]
    assert logs[0].route == checkpoint.route
    runtime.bus.drain()  # type: ignore[attr-defined]
    assert RAN == []
    again = start_email_trace(runtime, email(**headers), DECISION, trace_id="t2")
    runtime.bus.drain()  # type: ignore[attr-defined]
    assert again.trace_id == "t2" and RAN == []


def test_a_bounce_from_mailer_daemon_is_not_answered(runtime: Runtime) -> None:
    bounce = Email.model_validate(
        {**email().model_dump(), "sender": {"address": "mailer-daemon@googlemail.com"}}
    )
    started = start_email_trace(runtime, bounce, DECISION)
    assert started.blocked is not None and "mailer-daemon@googlemail.com" in started.blocked
    runtime.bus.drain()  # type: ignore[attr-defined]
    assert RAN == []


def test_an_unknown_graph_is_refused(runtime: Runtime) -> None:
    with pytest.raises(RejectedEnvelope, match="unknown graph 'nope'"):
        start_email_trace(runtime, email(), RouteDecision("nope"))

"""Every path that resumes a paused trace refuses a resume that does not answer its pause.

The runtime checks each resume at delivery (``pauses.check_resume``: the pause's kind,
its approval id, a decision among the kind's choices); ingest checks a customer's reply
before publishing it, and keeps a reply whose wait is over (recorded, queued on the trace
when its graph reads queued replies); a deadline never decides a choice the kind lacks.
Refusals are acknowledged and recorded; the trace is left as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.pause_kinds import Choice, PauseKind
from inboxflow.engine.step import END, Pause, Step
from inboxflow.engine.waits import ResumeRefused, check_resume
from inboxflow.ingest.claims import Claims
from tests.harness.approval import Harness
from tests.harness.thread_chat import MAILBOX, ChatWorld, eml

# --- check_resume ------------------------------------------------------------------------

KINDS = {
    "check": PauseKind("check", "Check", (Choice("ok", "OK"), Choice("no", "No", "danger"))),
}
PAUSE = {"approval_id": "t-3", "kind": "check"}


@pytest.mark.parametrize(
    ("decision", "pause", "expected"),
    [
        ({"decision": "ok"}, None, "the trace is not paused"),
        (
            {"decision": "ok", "kind": "other"},
            PAUSE,
            "answers a other pause, but it waits on check",
        ),
        ({"decision": "ok", "approval_id": "t-1"}, PAUSE, "answers pause t-1, but it waits on"),
        ({"decision": "approve"}, PAUSE, "check pauses take ok or no"),
        ({"decision": ["ok"]}, PAUSE, "check pauses take ok or no"),
        ({"reviewer": "r@x.test"}, PAUSE, "resume None by r@x.test of trace t"),
    ],
)
def test_check_resume_says_what_does_not_fit(
    decision: dict[str, Any], pause: dict[str, Any] | None, expected: str
) -> None:
    with pytest.raises(ResumeRefused, match=expected):
        check_resume(decision, pause, KINDS, "t")


def test_check_resume_takes_a_matching_resume_and_undeclared_kinds_take_approve_or_reject() -> None:
    check_resume({"decision": "no", "kind": "check", "approval_id": "t-3"}, PAUSE, KINDS, "t")
    check_resume({"decision": "reject"}, {"approval_id": "t-3", "kind": "legacy"}, KINDS, "t")


# --- ingest: a customer's reply whose wait is over --------------------------------------


def test_the_runtime_refuses_a_decision_the_pause_kind_lacks_on_each_store(
    chat: ChatWorld,
) -> None:
    trace_id, _ = chat.start()
    chat.bus.drain()
    before = chat.trace(trace_id)
    chat.runtime.resume(trace_id, {"decision": "file", "reviewer": REVIEWER})
    chat.bus.drain()
    assert chat.bus.redeliveries == 0
    ((_, failure),) = chat.store.list("failures")
    assert "check_plan pauses take approve or reject" in failure["reason"]
    after = chat.trace(trace_id)
    assert (after.status, after.step, after.pause) == ("waiting", before.step, before.pause)


def _stale_reply(chat: ChatWorld, thread: str, trace_id: str, resume_step: int) -> str:
    """A reply an earlier ingest run decided to resume at ``resume_step`` with, then died."""
    gmail_id, _ = chat.deliver(eml(7, body="The VIN is 1HGCM82633A004352."), thread_id=thread)
    claims = Claims(chat.store)
    now = chat.clock.now()
    claims.claim(MAILBOX, gmail_id, thread, now, "history", "dead-run")
    claims.decide(
        MAILBOX,
        gmail_id,
        {
            "action": "resume",
            "resume_trace_id": trace_id,
            "resume_step": resume_step,
            "thread_id": thread,
        },
        now,
    )
    claims.release(MAILBOX, gmail_id, "dead-run", now)
    return gmail_id


def _reviewed(chat: ChatWorld) -> tuple[str, str]:
    """A thread_chat trace past its review, waiting for the customer."""
    trace_id, thread = chat.start()
    chat.bus.drain()
    chat.approvals.decisions.decide_as(
        chat.pending_approval(trace_id).approval_id, REVIEWER, "approve"
    )
    chat.bus.drain()
    return trace_id, thread


REVIEWER = "agent@agency.test"


def _queued(chat: ChatWorld, trace_id: str) -> list[str]:
    rows = chat.store.list("trace_replies", where=[("trace_id", "==", trace_id)])
    return [doc["gmail_id"] for _, doc in rows]


def test_a_reply_for_a_wait_the_trace_left_for_a_review_is_queued_not_resumed(
    chat: ChatWorld,
) -> None:
    trace_id, thread = chat.start()
    chat.bus.drain()
    before = chat.trace(trace_id)
    assert before.pause["kind"] == "check_plan"  # type: ignore[index]
    gmail_id = _stale_reply(chat, thread, trace_id, before.step)
    report = chat.notify()
    chat.bus.drain()
    assert report.resumed == [] and report.queued == [trace_id] and report.started == []
    after = chat.trace(trace_id)
    assert (after.status, after.step, after.pause) == ("waiting", before.step, before.pause)
    claim = chat.claim(gmail_id)
    assert claim["state"] == "queued"
    assert "answers a customer_reply pause, but it waits on check_plan pause" in claim["reason"]
    ((_, failure),) = chat.store.list("failures")
    assert gmail_id in failure["reason"] and "check_plan" in failure["reason"]
    assert _queued(chat, trace_id) == [gmail_id]
    assert chat.pending_approval(trace_id).approval_id == before.pause["approval_id"]  # type: ignore[index]


def test_a_reply_for_an_earlier_wait_is_refused_there_and_taken_as_a_reply_to_the_current_one(
    chat: ChatWorld,
) -> None:
    trace_id, thread = _reviewed(chat)
    before = chat.trace(trace_id)
    assert before.pause["kind"] == "customer_reply"  # type: ignore[index]
    gmail_id = _stale_reply(chat, thread, trace_id, before.step - 1)
    report = chat.notify()
    assert report.resumed == [] and report.queued == [trace_id]
    claim = chat.claim(gmail_id)
    assert claim["state"] == "queued"
    assert f"answers pause {trace_id}-{before.step - 2}, but it waits on" in claim["reason"]
    ((_, failure),) = chat.store.list("failures")
    assert gmail_id in failure["reason"]
    assert _queued(chat, trace_id) == [gmail_id]
    chat.bus.drain()  # the resume names the wait the trace is in now
    after = chat.trace(trace_id)
    assert after.status == "done" and after.state["reply"]["gmail_id"] == gmail_id
    assert len(chat.store.list("failures")) == 1  # the runtime refused nothing


def test_a_reply_for_a_finished_trace_is_refused_and_recorded(chat: ChatWorld) -> None:
    trace_id, thread = _reviewed(chat)
    waiting = chat.trace(trace_id)
    chat.deliver(eml(2, body="First answer."), thread_id=thread)
    chat.notify()
    chat.bus.drain()
    done = chat.trace(trace_id)
    assert done.status == "done"
    gmail_id = _stale_reply(chat, thread, trace_id, waiting.step)
    report = chat.notify()
    chat.bus.drain()
    assert report.resumed == [] and report.queued == [] and report.started == []
    claim = chat.claim(gmail_id)
    assert claim["state"] == "refused" and "the trace is not paused" in claim["reason"]
    ((_, failure),) = chat.store.list("failures")
    assert failure["function"] == "ingest" and gmail_id in failure["reason"]
    assert chat.trace(trace_id).model_dump() == done.model_dump()
    assert _queued(chat, trace_id) == []


def test_a_fresh_reply_still_resumes_its_wait(chat: ChatWorld) -> None:
    trace_id, thread = _reviewed(chat)
    chat.deliver(eml(2, body="The VIN is 1HGCM82633A004352."), thread_id=thread)
    assert chat.notify().resumed == [trace_id]
    chat.bus.drain()
    assert chat.trace(trace_id).status == "done" and chat.store.list("failures") == []


# --- approvals: a deadline never decides a choice the kind does not have ---------------

NO_STOP = PauseKind(
    "file_it",
    "File it?",
    (Choice("file", "File", "primary"), Choice("later", "Later")),
)


class FilingState(BaseModel):
    subject: str
    decision: str | None = None


def ask(state: FilingState, ctx: NodeContext) -> Step:
    return Step(
        goto=Pause(
            kind=NO_STOP.name,
            payload={"subject": state.subject},
            resume_node="apply",
            reviewers=("rita@example.com",),
            deadline_s=3600,
            on_timeout="reject",
            context={"subject": state.subject, "sender": "asker@example.com"},
        )
    )


def apply(state: FilingState, ctx: NodeContext) -> Step:
    return Step(update={"decision": (ctx.resume or {}).get("decision")}, goto=END)


FILING = Graph.build(
    "filing",
    "ask",
    FilingState,
    [
        Node("ask", ask, routes=("apply",), pauses=True, uses_llm=False),
        Node("apply", apply, routes=(END,), uses_llm=False),
    ],
    pause_kinds=[NO_STOP],
)


def test_a_reject_deadline_on_a_kind_without_a_stopping_choice_makes_the_trace_need_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INBOXFLOW_GRAPHS", f"{__name__}:FILING")
    h = Harness(tmp_path)
    trace_id = h.runtime.start("filing", {"subject": "invoice 12"})
    h.drain()
    h.clock.advance(3600)
    assert h.run_due_tasks() == 1
    h.drain()
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "needs_review"
    assert "no decision within 1 h" in (checkpoint.error or "")
    assert h.approval_of(trace_id).status == "timed_out"
    assert h.store.list("failures") == []  # no resume the runtime had to refuse


# --- repair: a paused trace is resumed by a decision, never re-run -------------------------


def test_repair_neither_retries_nor_forks_a_paused_trace_and_leaves_it_waiting(
    tmp_path: Path,
) -> None:
    from inboxflow.dev.ops.repair import RepairRefused, fork, retry
    from tests.harness.toy_graph import make_runtime

    runtime, bus, _ = make_runtime(tmp_path)
    trace_id = runtime.start("toy", {"text": "draft", "pause": True})
    bus.drain()
    before = runtime.store.get_trace(trace_id)
    assert before is not None and before.status == "waiting"
    with pytest.raises(RepairRefused, match="is waiting: only a needs_review trace is retried"):
        retry(runtime, trace_id)
    with pytest.raises(RepairRefused, match=r"step 2 \(act\) paused"):
        fork(runtime, trace_id, 2)
    bus.drain()  # nothing was published
    after = runtime.store.get_trace(trace_id)
    assert after is not None and after.model_dump() == before.model_dump()
    assert runtime.store.list("failures") == []

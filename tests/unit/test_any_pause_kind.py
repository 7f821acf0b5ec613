"""The approval function serves a pause kind it has never heard of.

``FEEDBACK`` is a graph declared only here and added through ``INBOXFLOW_GRAPHS``:
its pause kind has three choices (one applies an edit of two declared fields,
one needs a comment, one takes an optional comment). The review page, the
form POST, the JSON API, the result page and the resumed node all follow the
declaration; nothing in ``approvals/`` names it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.pause_kinds import Choice, EditableField, PauseKind
from inboxflow.engine.step import END, Pause, Step
from tests.harness.approval import Harness

KIND = PauseKind(
    "review_answer",
    "Check an answer before it is {verb}",
    (
        Choice(
            "accept",
            "Accept and {verb_now}",
            "primary",
            ("Accepted", "The answer is {verb} as shown."),
            applies_edit=True,
        ),
        Choice(
            "revise",
            "Send back with feedback",
            outcome=("Sent back", "The agent revises it with your feedback."),
            comment="required",
            comment_label="Feedback for the agent",
        ),
        Choice("drop", "Drop it", "danger", ("Dropped", "Nothing happens."), comment="optional"),
    ),
    editable=(
        EditableField("answer", "Answer", "text", max_chars=2000, required=True),
        EditableField("cc", "Copy to", "addresses", max_chars=500),
    ),
    defaults={"verb": "published", "verb_now": "publish"},
    payload_title="The answer",
)


class FeedbackState(BaseModel):
    question: str
    on_timeout: str = "needs_review"
    answer: str = ""
    decision: str | None = None
    comment: str | None = None
    applied: dict[str, Any] | None = None


def ask(state: FeedbackState, ctx: NodeContext) -> Step:
    return Step(
        update={"answer": f"About {state.question}: yes."},
        goto=Pause(
            kind=KIND.name,
            payload={"answer": f"About {state.question}: yes.", "cc": "", "source": "kb/faq.md"},
            resume_node="apply",
            reviewers=("rita@example.com",),
            deadline_s=3600,
            on_timeout=state.on_timeout,  # type: ignore[arg-type]
            context={"subject": state.question, "sender": "asker@example.com", "verb_now": "post"},
        ),
    )


def apply(state: FeedbackState, ctx: NodeContext) -> Step:
    assert ctx.resume is not None
    return Step(
        update={
            "decision": ctx.resume["decision"],
            "comment": ctx.resume.get("comment"),
            "applied": ctx.resume.get("payload"),
        },
        goto=END,
        status="rejected" if ctx.resume["decision"] == "drop" else "done",
    )


FEEDBACK = Graph.build(
    "feedback",
    "ask",
    FeedbackState,
    [
        Node("ask", ask, routes=("apply",), pauses=True, uses_llm=False),
        Node("apply", apply, routes=(END,), uses_llm=False),
    ],
    pause_kinds=[KIND],
)


@pytest.fixture
def h(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    monkeypatch.setenv("INBOXFLOW_GRAPHS", f"{__name__}:FEEDBACK")
    return Harness(tmp_path)


def _paused(h: Harness) -> tuple[str, Any]:
    trace_id = h.runtime.start("feedback", {"question": "refund windows"})
    h.drain()
    (link,) = h.links(h.approval_of(trace_id).approval_id)
    return trace_id, link


def test_the_page_follows_the_declaration(h: Harness) -> None:
    _, link = _paused(h)
    page = h.client.get(link.path).get_data(as_text=True)

    assert "Check an answer before it is published" in page
    buttons = re.findall(r'name="decision" value="(\w+)"[^>]*>([^<]+)</button>', page)
    assert buttons == [
        ("accept", "Accept and post"),  # the pause's context beats the kind's defaults
        ("revise", "Send back with feedback"),
        ("drop", "Drop it"),
    ]
    assert '<textarea id="f-answer" name="answer"' in page
    assert 'name="cc"' in page and "comma-separated" in page
    assert 'name="comment"' in page and "Feedback for the agent" in page
    assert "kb/faq.md" in page  # a payload entry that is not editable is shown read-only
    message = h.inbox[0]
    assert message["subject"].startswith("Check an answer before it is published: refund")


def test_accept_applies_the_edit_of_the_declared_fields(h: Harness) -> None:
    trace_id, link = _paused(h)
    edit = {"answer": "About refund windows: 30 days.", "cc": "ops@example.com, cs@example.com"}
    response = h.client.post(f"/a/{link.approval_id}", data=h.form(link, "accept", **edit))
    assert response.status_code == 200
    assert "Accepted" in response.get_data(as_text=True)
    state = h.store.get_trace(trace_id).state  # type: ignore[union-attr]
    assert state["decision"] == "accept" and state["comment"] is None
    assert state["applied"] == {**edit, "source": "kb/faq.md"}


@pytest.mark.parametrize(
    ("fields", "status", "fragment"),
    [
        ({"cc": "ops@example.com; x"}, 400, "Copy to"),
        ({"answer": ""}, 400, "Answer: cannot be empty"),
        ({"answer": "x" * 2001}, 413, "at most 2000"),
        ({"source": "elsewhere"}, 400, "not an editable field"),
    ],
)
def test_refused_edits_name_the_field(
    h: Harness, fields: dict[str, str], status: int, fragment: str
) -> None:
    trace_id, link = _paused(h)
    before = h.snapshot(trace_id)
    response = h.client.post(f"/a/{link.approval_id}", data=h.form(link, "accept", **fields))
    assert response.status_code == status
    assert fragment in response.get_data(as_text=True)
    assert h.snapshot(trace_id) == before


def test_a_choice_that_needs_a_comment_refuses_none_and_carries_one(h: Harness) -> None:
    trace_id, link = _paused(h)
    before = h.snapshot(trace_id)
    missing = h.client.post(f"/a/{link.approval_id}", data=h.form(link, "revise", comment="  "))
    assert missing.status_code == 400 and "needs a comment" in missing.get_data(as_text=True)
    assert h.snapshot(trace_id) == before
    response = h.client.post(
        f"/a/{link.approval_id}",
        data=h.form(link, "revise", comment="Cite the policy page.", answer="ignored"),
    )
    assert response.status_code == 200
    assert "Cite the policy page." in response.get_data(as_text=True)
    state = h.store.get_trace(trace_id).state  # type: ignore[union-attr]
    assert (state["decision"], state["comment"], state["applied"]) == (
        "revise",
        "Cite the policy page.",
        None,  # this choice does not apply the edit
    )
    assert h.approval_of(trace_id).comment == "Cite the policy page."


def test_the_json_api_follows_the_declaration(h: Harness) -> None:
    trace_id, link = _paused(h)
    auth = {"Authorization": f"Bearer {link.token}"}
    doc = h.client.get(f"/api/approvals/{link.approval_id}", headers=auth).get_json()
    assert doc["choices"] == ["accept", "revise", "drop"]
    assert doc["options"][1]["comment"] == "required"
    assert [f["name"] for f in doc["editable"]] == ["answer", "cc"]
    url = f"/api/approvals/{link.approval_id}/decision"
    bad = h.client.post(
        url, json={"decision": "accept", "edit": {"cc": ["a@x.test"]}}, headers=auth
    )
    assert bad.status_code == 400 and "Copy to" in bad.get_json()["error"]
    silent = h.client.post(url, json={"decision": "revise"}, headers=auth)
    assert silent.status_code == 400 and "needs a comment" in silent.get_json()["error"]
    unknown = h.client.post(url, json={"decision": "approve"}, headers=auth)
    assert unknown.status_code == 400 and "accept, revise, drop" in unknown.get_json()["error"]
    response = h.client.post(url, json={"decision": "drop", "comment": "Duplicate."}, headers=auth)
    assert response.status_code == 200 and response.get_json()["comment"] == "Duplicate."
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "rejected"


def test_a_reject_on_timeout_takes_the_kinds_stopping_choice(h: Harness) -> None:
    trace_id = h.runtime.start("feedback", {"question": "q", "on_timeout": "reject"})
    h.drain()
    h.clock.advance(3600)
    assert h.run_due_tasks() == 1
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "rejected"
    assert checkpoint.state["decision"] == "drop"  # not "reject", which this kind lacks

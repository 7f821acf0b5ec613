"""The ``thread_chat`` graph: a plan a reviewer checks, then a wait for the customer's reply.

    plan --Pause(check_plan)--> act --Pause(customer_reply)--> got --> END
                                   \\--reject--> END (rejected)

Defined in ``tests/`` and registered with ``INBOXFLOW_GRAPHS=tests.plugin.thread_chat:THREAD_CHAT``.
It declares ``queues_thread_replies``: a customer reply arriving while it runs or waits on
the reviewer is queued for it (``reply_queue.py``). An email whose subject starts with
"Errand" pauses on ``confirm_only`` instead, a kind with neither approve nor reject.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.pause_kinds import Choice, PauseKind
from inboxflow.engine.step import END, Pause, Step
from inboxflow.mail import Email

REVIEWERS = ("agent@agency.test", "Lead@Agency.test")

CHECK_PLAN = PauseKind(
    "check_plan",
    "Check the plan",
    (
        Choice("approve", "Approve", "primary", ("Approved", "The plan runs."), applies_edit=True),
        Choice(
            "reject", "Reject", "danger", ("Rejected", "The plan is dropped."), comment="required"
        ),
    ),
    description="approve or reject the next action",
)
CONFIRM_ONLY = PauseKind(
    "confirm_only",
    "Confirm",
    (Choice("file", "File", "primary"), Choice("drop", "Drop", "danger")),
    description="file or drop",
)
CUSTOMER_REPLY = PauseKind(
    "customer_reply", "Waiting for the customer", (Choice("reply", "Reply"),), waits_for="customer"
)


class ThreadChatState(BaseModel):
    schema_version: int = 1
    email: Email = Field(frozen=True)
    decision: str | None = None
    decided_by: str | None = None
    comment: str | None = None
    reply: dict[str, Any] | None = None


def plan(state: ThreadChatState, ctx: NodeContext) -> Step:
    kind = "confirm_only" if state.email.subject.startswith("Errand") else "check_plan"
    return Step(
        goto=Pause(
            kind=kind,
            payload={"plan": "ask the customer for the VIN"},
            resume_node="act",
            reviewers=REVIEWERS,
            context={"subject": state.email.subject, "sender": state.email.sender.address},
        )
    )


def act(state: ThreadChatState, ctx: NodeContext) -> Step:
    resume = ctx.resume or {}
    update = {
        "decision": resume.get("decision"),
        "decided_by": resume.get("reviewer"),
        "comment": resume.get("comment"),
    }
    if resume.get("decision") not in ("approve", "file"):
        return Step(update=update, goto=END, status="rejected")
    wait = Pause(kind="customer_reply", payload={"question": "VIN?"}, resume_node="got")
    return Step(update=update, goto=wait)


def got(state: ThreadChatState, ctx: NodeContext) -> Step:
    resume = ctx.resume or {}
    return Step(update={"reply": resume["payload"]["email"]}, goto=END)


THREAD_CHAT = Graph.build(
    "thread_chat",
    "plan",
    ThreadChatState,
    [
        Node("plan", plan, routes=("act",), pauses=True),
        Node("act", act, routes=("got", END), pauses=True),
        Node("got", got, routes=(END,)),
    ],
    description="Test plug-in: a reviewed plan, then a wait for the customer's reply.",
    pause_kinds=[CHECK_PLAN, CONFIRM_ONLY, CUSTOMER_REPLY],
    queues_thread_replies=True,
)

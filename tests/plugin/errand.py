"""The ``errand`` graph: note the email, ask a human to confirm, then file it exactly once.

    note --> confirm --Pause(confirm_errand)--> file --> END

Defined here, in ``tests/``, and registered with ``INBOXFLOW_GRAPHS=tests.plugin.errand:ERRAND``:
nothing in the ``inboxflow`` package names it. ``note`` asks no model and touches no
mailbox; only ``confirm`` pauses; ``file`` writes one record through the effect journal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node, StartContext, TraceSummary
from inboxflow.engine.pause_kinds import Choice, EditableField, PauseKind
from inboxflow.engine.step import END, Pause, Step
from inboxflow.engine.tools import Tool, ToolRegistry
from inboxflow.ports.checkpoint import Checkpoint

CONFIRM_ERRAND = PauseKind(
    "confirm_errand",
    "Confirm an errand",
    (
        Choice("file", "File it", "primary", ("Filed", "The errand is filed."), applies_edit=True),
        Choice("drop", "Drop it", "danger", ("Dropped", "Nothing is filed.")),
    ),
    editable=(EditableField("errand", "Errand", "line", max_chars=200, required=True),),
    description="file or drop the errand noted from the email",
)


class ErrandState(BaseModel):
    schema_version: int = 1
    subject: str = Field(default="", frozen=True)
    sender: str = Field(default="", frozen=True)
    rule: str | None = None
    errand: str = ""
    filed: dict[str, Any] | None = None
    decided_by: str | None = None


class Label(BaseModel):
    text: str


def _label(params: Label, ctx: NodeContext) -> dict[str, Any]:
    return {"label": params.text.strip().lower()[:40]}


TOOLS = ToolRegistry([Tool("label", "A short label for an errand.", Label, _label)])


def note(state: ErrandState, ctx: NodeContext) -> Step:
    label = ctx.call_tool("label", {"text": state.subject})
    return Step(update={"errand": f"errand: {label.get('label', '')}"}, goto="confirm")


def confirm(state: ErrandState, ctx: NodeContext) -> Step:
    return Step(
        goto=Pause(
            kind=CONFIRM_ERRAND.name,
            payload={"errand": state.errand},
            resume_node="file",
            reviewers=("owner@errands.test",),
            context={"subject": state.subject, "sender": state.sender, "mailbox": ""},
        )
    )


def file(state: ErrandState, ctx: NodeContext) -> Step:
    resume = ctx.resume or {}
    if resume.get("decision") != "file":
        return Step(update={"decided_by": resume.get("reviewer")}, goto=END, status="rejected")
    errand = str((resume.get("payload") or {}).get("errand", state.errand))

    def perform(key: str) -> dict[str, Any]:
        ctx.store.set(f"errands/{key}", {"errand": errand, "trace_id": ctx.trace_id})
        return {"key": key}

    receipt = ctx.effect("file", perform)
    return Step(
        update={"filed": {"errand": errand, **receipt}, "decided_by": resume.get("reviewer")},
        goto=END,
    )


def initial_state(email: Mapping[str, Any], start: StartContext) -> dict[str, Any]:
    sender = email.get("sender") or {}
    return {
        "subject": str(email.get("subject", "")),
        "sender": str(sender.get("address", "")) if isinstance(sender, dict) else str(sender),
        "rule": start.rule,
    }


def summary(checkpoint: Checkpoint) -> TraceSummary:
    filed = checkpoint.state.get("filed") or {}
    return TraceSummary(
        label="errand", preview=filed.get("errand") or checkpoint.state.get("errand", "")
    )


ERRAND = Graph.build(
    "errand",
    "note",
    ErrandState,
    [
        Node("note", note, routes=("confirm",), tools=("label",), memory_mb=256, timeout_s=20),
        Node("confirm", confirm, routes=("file",), pauses=True, memory_mb=256, timeout_s=20),
        Node("file", file, routes=(END,), memory_mb=256, timeout_s=20, max_instances=5),
    ],
    description="Test plug-in: note an errand, confirm it, file it once.",
    tools=TOOLS,
    pause_kinds=[CONFIRM_ERRAND],
    initial_state=initial_state,
    summary=summary,
)

"""The assistant graph's state: the email, the triage, the response agent's conversation."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...deferred import DeferredModel
from ...field_defaults import empty_list
from ..screen import ScreenReport

Classification = Literal["ignore", "notify", "respond"]
RunStatus = Literal["running", "ignored", "completed", "stopped", "max_iterations", "error"]


class ToolLogEntry(DeferredModel):
    """One tool call: what was asked, what the owner decided, what it did."""

    tool: str
    arguments: dict[str, Any]
    decision: str
    result: dict[str, Any]
    iteration: int


class AssistantState(DeferredModel):
    """The state of one assistant run.

    Attributes:
        email: the email (JSON form of ``mail.Email``); never changes.
        mailbox: whose assistant this is (memory is kept per mailbox).
        classification: the triage's answer.
        reasoning: why.
        instruction: the owner's instruction when a notify became respond.
        messages: the response agent's conversation.
        pending_calls: the tool calls of the last turn not yet run or reviewed.
        iteration: turns taken.
        status: ``running``, then how it ended.
        tool_log: every tool call and its decision.
        marked_read: the mark_as_read result, once.
        memory_updates: ``namespace@version`` of each memory change this run made.
        screen: what the safety screen found in the email (``triage_router``'s guard).
    """

    schema_version: int = 1
    email: dict[str, Any] = Field(frozen=True)
    mailbox: str
    classification: Classification | None = None
    reasoning: str = ""
    instruction: str | None = None
    messages: list[dict[str, Any]] = Field(default_factory=empty_list)
    pending_calls: list[dict[str, str]] = Field(default_factory=empty_list)
    iteration: int = 0
    status: RunStatus = "running"
    error: str | None = None
    tool_log: list[ToolLogEntry] = Field(default_factory=empty_list)
    marked_read: dict[str, Any] | None = None
    memory_updates: list[str] = Field(default_factory=empty_list)
    screen: ScreenReport | None = None

"""The agent graph's state: the email, the profile it runs as, the conversation and its log."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...deferred import DeferredModel
from ...field_defaults import empty_list
from ..screen import ScreenReport

RunStatus = Literal["running", "completed", "max_iterations", "error", "escalated"]


class ProfileSnapshot(DeferredModel):
    """The profile as it was when the trace started (a config change never alters a run).

    Attributes mirror ``inboxflow.config.ProfileConfig``; ``system_prompt`` is the file's text.
    """

    name: str
    model: str | None = None
    max_tokens: int | None = None
    temperature: float
    max_iterations: int
    system_prompt: str
    tools: list[str]
    preprocessor: str = "default"
    reviewers: list[str] = Field(default_factory=empty_list)
    helpdesk: list[str] = Field(default_factory=empty_list)
    escalate_on: list[str] = Field(default_factory=empty_list)


class Inquiry(DeferredModel):
    """What the preprocessor made of the email: who asks, what, and where the answer goes.

    Attributes:
        preprocessor: the preprocessor that produced it (``default`` or ``crisp``), or
            ``forward``: ``default`` read a manual forward's writer (``mail/forward_writer.py``).
        sender_email: who wrote it (the patient for Crisp mail, the forwarded message's writer
            for a forward, else the email's sender).
        sender_name: their name, if known.
        subject: the email's subject.
        text: the message the agent answers (without any helpdesk wrapping; for a forward,
            the forwarded message without its header block).
        reply_to: where replies go.
        via: the helpdesk address (or authenticated forwarder) that forwarded it, if any
            (replies never go there).
        unread: why the profile's preprocessor could not read the email it is for (a Crisp
            notification without one patient or message); the run escalates with it.
        note: what the forwarder wrote above a forwarded message (shown to the model as
            theirs; read by the ``escalation_cues`` guard, not by the screen).
        forwarded: how a manual forward was read: whose message it is, or why its writer
            was not taken (``mail.forward_writer.ForwardReading.reason``); None: no forward.
    """

    preprocessor: str
    sender_email: str
    sender_name: str = ""
    subject: str = ""
    text: str = ""
    reply_to: str
    via: str | None = None
    unread: str | None = None
    note: str = ""
    forwarded: str | None = None


class ToolLogEntry(DeferredModel):
    """One tool call of the run: ``{tool, arguments, result, iteration}``."""

    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    iteration: int
    call_id: str = ""


class AgentState(DeferredModel):
    """The state of one agent run.

    Attributes:
        email: the email (JSON form of ``mail.Email``); never changes.
        profile: the profile snapshot; never changes.
        rule: the routing rule that started it.
        inquiry: set by ``preprocess``.
        messages: the conversation (system, user, assistant turns, tool results).
        pending_calls: the tool calls of the last turn, run by ``agent_tools``.
        iteration: turns taken so far.
        status: ``running``, then how the run ended.
        final_message: the model's last text (``completed``).
        error: what failed (``error``).
        escalation: why the agent escalated (``escalated``).
        tool_log: every tool call, in order.
        reply: the reply written (draft or sent), once per trace.
        screen: what the safety screen found in the inquiry (``preprocess``'s guard).
    """

    schema_version: int = 1
    email: dict[str, Any] = Field(frozen=True)
    profile: ProfileSnapshot = Field(frozen=True)
    rule: str | None = None
    inquiry: Inquiry | None = None
    messages: list[dict[str, Any]] = Field(default_factory=empty_list)
    pending_calls: list[dict[str, str]] = Field(default_factory=empty_list)
    iteration: int = 0
    status: RunStatus = "running"
    final_message: str | None = None
    error: str | None = None
    escalation: str | None = None
    tool_log: list[ToolLogEntry] = Field(default_factory=empty_list)
    reply: dict[str, Any] | None = None
    screen: ScreenReport | None = None

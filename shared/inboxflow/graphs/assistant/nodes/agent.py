"""The response agent: llm_call and tool_review in a loop, then mark_as_read.

| node         | llm_call                                                              |
|--------------|-----------------------------------------------------------------------|
| inputs       | messages, the mailbox's response and calendar preferences             |
| LLM          | ``LanguageModel.chat`` with the assistant's tools                     |
| routes       | -> tool_review (tool calls) ; -> mark_as_read (no calls) ; -> END     |

| node         | tool_review (one pending call per step)                               |
|--------------|-----------------------------------------------------------------------|
| pause        | ``tool_review`` for write_email, schedule_meeting, Question            |
| decisions    | accept: run as is; edit: run edited (and learn); ignore: not run     |
|              | (write_email / schedule_meeting end the run); respond: feedback back |
| routes       | -> tool_review ; -> llm_call ; -> mark_as_read (Done) ; -> END         |

| node         | mark_as_read: the email is marked read, once (effect journal)         |

write_email and schedule_meeting are bound to the people on the email
(``tools.bound_to``): a call naming anyone else is refused before the owner is
asked, and again when it runs (an owner's edit binds what the owner typed);
the trace then ends ``needs_review`` with the refusal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from functools import cache
from typing import Any

from ....engine.bindings import with_approved
from ....engine.context import NodeContext
from ....engine.step import END, Pause, Step
from ....errors import RetryableError
from ....memory import PreferenceMemory
from ....ports.llm import ChatSettings, LLMFailed
from ...kit import workspace_of
from ..learning import first_name, learn
from ..pauses import QUESTION_LABELS, TOOL_REVIEW_KIND, pause_context
from ..settings import assistant_settings
from ..state import AssistantState, ToolLogEntry
from ..tasks import offline_turn
from ..tools import ASSISTANT_TOOLS, REVIEWED, bound_to

REVIEW_FIELDS = {
    "write_email": ("to", "subject", "content"),
    "schedule_meeting": ("attendees", "subject", "preferred_day", "start_time", "duration_minutes"),
}
LEARNS_FROM_EDIT = {"write_email": "response_preferences", "schedule_meeting": "cal_preferences"}
ENDS_WHEN_IGNORED = frozenset({"write_email", "schedule_meeting"})


@cache
def _specs() -> str:
    return json.dumps(ASSISTANT_TOOLS.openai_specs())


def system_message(state: AssistantState, ctx: NodeContext) -> dict[str, Any]:
    """The instructions, today's date and the owner's current preferences.

    Until the owner's edits teach a meeting length, the settings' default is the preference.
    """
    settings = assistant_settings(ctx.ports)
    memory = PreferenceMemory(ctx.store, ctx.clock)
    response = memory.read(state.mailbox, "response_preferences").profile
    cal = memory.read(state.mailbox, "cal_preferences")
    calendar = dict(cal.profile)
    if cal.version == 0:
        calendar["default_duration_minutes"] = settings.default_meeting_minutes
    today = datetime.fromtimestamp(ctx.clock.now(), settings.zone).date()
    owner = f"{settings.owner_name} <{state.mailbox}>" if settings.owner_name else state.mailbox
    start, end = settings.working_hours_start, settings.working_hours_end
    return {
        "role": "system",
        "content": (
            f"You are the email assistant of {owner}. Handle the email below with "
            "your tools: write_email to answer, check_calendar_availability then "
            "schedule_meeting for meeting requests, Question when you need the owner, and "
            "Done when the email is handled. Follow the owner's preferences.\n"
            f"Times are in {settings.timezone}; working hours {start}-{end}.\n"
            f"Today: {today.isoformat()}\n"
            f"Response preferences (JSON): {json.dumps(response, sort_keys=True)}\n"
            f"Calendar preferences (JSON): {json.dumps(calendar, sort_keys=True)}"
        ),
    }


def first_message(state: AssistantState, zone: tzinfo = UTC) -> dict[str, Any]:
    """The email as the agent's first user message (with the owner's instruction, if any).

    ``Sent`` is the day the email was written, in the owner's time zone ``zone``: "on
    Thursday" and "tomorrow" count from it.
    """
    email = state.email
    sender = email["sender"]
    lines = [
        f"From: {sender.get('name') or sender['address']} <{sender['address']}>",
        f"First name: {first_name(email)}",
        f"Subject: {email.get('subject', '')}",
    ]
    received = email.get("received_at")
    if received:
        sent = datetime.fromisoformat(str(received)).astimezone(zone)
        lines.append(f"Sent: {sent:%Y-%m-%d} ({sent:%A})")
    if state.instruction:
        lines.append(f"Owner's instruction: {state.instruction}")
    lines += ["", str(email.get("body_text", ""))[:8000]]
    return {"role": "user", "content": "\n".join(lines)}


def llm_call(state: AssistantState, ctx: NodeContext) -> Step:
    """Ask the model for the next tool calls."""
    configured = assistant_settings(ctx.ports)
    if state.iteration >= configured.max_iterations:
        return Step(update={"status": "max_iterations"}, goto=END)
    messages = list(state.messages) or [first_message(state, configured.zone)]
    settings = ChatSettings(
        model=configured.model or "",
        temperature=0.2,
        profile="assistant",
        offline=offline_turn,
        role="assistant",
    )
    try:
        turn = ctx.llm.chat([system_message(state, ctx), *messages], json.loads(_specs()), settings)
    except (LLMFailed, RetryableError) as exc:
        return Step(
            update={"status": "error", "error": f"turn {state.iteration + 1}: {exc}"}, goto=END
        )
    calls = [call.as_dict() for call in turn.tool_calls]
    message: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if calls:
        message["tool_calls"] = calls
    update: dict[str, Any] = {
        "messages": [*messages, message],
        "pending_calls": calls,
        "iteration": state.iteration + 1,
    }
    return Step(update=update, goto="tool_review" if calls else "mark_as_read")


def _arguments(call: dict[str, str]) -> dict[str, Any]:
    try:
        value = json.loads(call.get("arguments_json") or "{}")
    except (json.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def review_payload(tool: str, arguments: dict[str, Any]) -> dict[str, str]:
    """The call's reviewable arguments as text fields (what the review page edits).

    A ``Question`` shows the question and an empty ``answer`` field for the owner.
    """
    payload = {"tool": tool}
    if tool == "Question":
        return {**payload, "question": str(arguments.get("content", "")), "answer": ""}
    for name in REVIEW_FIELDS[tool]:
        value = arguments.get(name, "")
        payload[name] = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return payload


def _as_reviewed(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with each reviewed text field as the review showed it (under the
    tool_review kind's edit rules: no line separator in a subject, no bidi control)."""
    shown = TOOL_REVIEW_KIND.clean_payload(review_payload(tool, arguments))
    reviewed = {
        name: shown[name]
        for name in REVIEW_FIELDS.get(tool, ())
        if isinstance(arguments.get(name), str) and name in shown
    }
    return {**arguments, **reviewed}


def tool_review(state: AssistantState, ctx: NodeContext) -> Step:
    """Run (or pause to review) the first pending call."""
    call, rest = state.pending_calls[0], state.pending_calls[1:]
    name, arguments = call["name"], _arguments(call)
    if name == "Done":
        entry = ToolLogEntry(
            tool=name,
            arguments=arguments,
            decision="run",
            result={"done": True},
            iteration=state.iteration,
        )
        return Step(
            update={"pending_calls": [], "tool_log": [*state.tool_log, entry]},
            goto="mark_as_read",
        )
    bound = bound_to(state.email, state.instruction)
    if name in REVIEWED and ctx.resume is None:
        replace(ctx, bound=bound).check_binding(name, arguments)
        return Step(
            goto=Pause(
                kind="tool_review",
                payload=review_payload(name, arguments),
                resume_node="tool_review",
                reviewers=(state.mailbox,),
                deadline_s=assistant_settings(ctx.ports).review_deadline_s,
                on_timeout="reject",
                context=_review_context(state, name),
            )
        )
    decision = "run" if name not in REVIEWED else str(ctx.resume.get("decision"))  # type: ignore[union-attr]
    update: dict[str, Any] = {}
    learned: list[str] = []
    answer = _answer(ctx.resume) if name == "Question" and decision == "edit" else ""
    if answer:
        result: dict[str, Any] = {"answer": answer}
    elif decision in ("run", "accept", "edit"):
        if decision == "accept":  # what the owner saw (and approved): the fields as cleaned
            arguments = _as_reviewed(name, arguments)
        if decision == "edit" and name != "Question":
            edited = {k: v for k, v in (ctx.resume or {}).get("payload", {}).items() if k != "tool"}
            before = review_payload(name, arguments)
            arguments = {**arguments, **edited}
            bound = with_approved(ASSISTANT_TOOLS.get(name).bindings, bound, edited)
            if name in LEARNS_FROM_EDIT and any(before.get(k) != v for k, v in edited.items()):
                after = {**before, **edited}
                learned = learn(
                    ctx,
                    state,
                    LEARNS_FROM_EDIT[name],
                    f"{name}:edited",
                    {"before": before, "after": after},
                )
        tool_ctx = replace(ctx, subject=state.email, bound=bound)
        result = tool_ctx.call_tool(name, arguments)
    elif decision == "ignore":
        result = {"ignored": True}
        if name == "write_email":
            learned = learn(ctx, state, "triage_preferences", "draft_ignored", {})
    else:  # respond
        comment = str((ctx.resume or {}).get("comment") or "")
        result = {"answer": comment} if name == "Question" else {"feedback": comment}
    entry = ToolLogEntry(
        tool=name, arguments=arguments, decision=decision, result=result, iteration=state.iteration
    )
    tool_message = {
        "role": "tool",
        "tool_call_id": call.get("id", ""),
        "name": name,
        "content": json.dumps(result, ensure_ascii=False, default=str),
    }
    update = {
        "messages": [*state.messages, tool_message],
        "pending_calls": rest,
        "tool_log": [*state.tool_log, entry],
        "memory_updates": [*state.memory_updates, *learned],
    }
    if decision == "ignore" and name in ENDS_WHEN_IGNORED:
        return Step(update={**update, "pending_calls": [], "status": "stopped"}, goto=END)
    return Step(update=update, goto="tool_review" if rest else "llm_call")


def _review_context(state: AssistantState, tool: str) -> dict[str, Any]:
    """The review page's context: why the owner is asked; a question relabels the buttons."""
    if tool == "Question":
        return pause_context(state.email, ["the assistant asks you"], tool=tool, **QUESTION_LABELS)
    return pause_context(state.email, [f"the assistant wants to run {tool}"], tool=tool)


def _answer(resume: Mapping[str, Any] | None) -> str:
    """The owner's answer to a ``Question`` (the edited ``answer`` field), or ``""``."""
    payload = (resume or {}).get("payload") or {}
    return str(payload.get("answer") or "").strip() if isinstance(payload, Mapping) else ""


def mark_as_read(state: AssistantState, ctx: NodeContext) -> Step:
    """Mark the email read, once."""
    email = state.email
    workspace = workspace_of(ctx, state.mailbox)
    target = email.get("gmail_id") or email["message_id"]
    result = ctx.effect("mark_as_read", lambda key: workspace.mark_as_read(str(target)))
    return Step(update={"marked_read": result, "status": "completed"}, goto=END)

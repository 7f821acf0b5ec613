"""The offline model's script for the response agent: plausible turns with no key.

It reads what a real model would: the system message (today, the owner's
response and calendar preferences as JSON) and the conversation. Meeting
requests: check the calendar, schedule at the preferred time (or the first
free one), then confirm by email; a question only the owner can answer (a
sentence opening with which/what/when/how much/how many): ask the owner
(``Question``), then email the answer; anything else: one email. Feedback makes it
write again with the feedback in; a sent email or a failure ends with Done.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from ...ports.llm import AgentTurn, ChatMessage, ToolCall
from ...workspace import business_day

MEETING = re.compile(r"\b(meet|meeting|call|schedule|catch up|sync)\b", re.I)
OWNER_QUESTION = re.compile(
    r"(?:^|[.!?]\s+)((?:which|what|when|how much|how many)\b[^?\n]*\?)", re.I | re.M
)
"""A question only the owner can answer (a sentence opening with which/what/when...)."""


def _json_after(label: str, text: str) -> dict[str, Any]:
    match = re.search(rf"^{re.escape(label)}: (.*)$", text, re.M)
    return json.loads(match.group(1)) if match else {}


def _line(label: str, text: str) -> str:
    match = re.search(rf"^{re.escape(label)}: (.*)$", text, re.M)
    return match.group(1).strip() if match else ""


def _call(turn: int, name: str, **arguments: Any) -> AgentTurn:
    return AgentTurn(text="", tool_calls=(ToolCall(f"t{turn}", name, json.dumps(arguments)),))


def assistant_policy(messages: list[ChatMessage], tools: list[dict[str, Any]]) -> AgentTurn:
    """One scripted turn of the response agent."""
    system = str(messages[0].get("content", ""))
    user = next(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    turn = sum(1 for m in messages if m.get("role") == "assistant") + 1
    response = _json_after("Response preferences (JSON)", system)
    calendar = _json_after("Calendar preferences (JSON)", system)
    today = date.fromisoformat(_line("Today", system))
    sender = _line("From", user)
    address = sender.rpartition("<")[2].rstrip(">") or sender
    first_name = _line("First name", user)
    subject = _line("Subject", user)
    instruction = _line("Owner's instruction", user)
    reply_subject = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    last = messages[-1]

    def email(lines: list[str]) -> AgentTurn:
        greeting = str(response.get("greeting", "Hi {first_name},")).replace(
            "{first_name}", first_name
        )
        body = "\n\n".join([greeting, *lines, str(response.get("sign_off", "Best regards"))])
        return _call(turn, "write_email", to=address, subject=reply_subject, content=body)

    if last.get("role") != "tool":
        if MEETING.search(f"{subject}\n{user}"):
            day = business_day(today, 1)
            return _call(turn, "check_calendar_availability", day=day.isoformat())
        asked = OWNER_QUESTION.search(user.partition("\n\n")[2])
        if asked and not instruction:
            question = f'{first_name} asks: "{asked.group(1)}" What should I answer?'
            return _call(turn, "Question", content=question)
        lines = [f"Thanks for your email about {subject.removeprefix('Re: ')}."]
        lines.append(instruction or "I will get back to you on this shortly.")
        return email(lines)
    result = json.loads(str(last.get("content") or "{}"))
    tool = last.get("name")
    if "feedback" in result:
        lines = [f"Thanks for your email about {subject.removeprefix('Re: ')}.", result["feedback"]]
        return email(lines)
    if "error" in result or result.get("ignored"):
        return _call(turn, "Done", done=True)
    if tool == "check_calendar_availability":
        start = str(calendar.get("preferred_start_time", "10:00"))
        duration = int(calendar.get("default_duration_minutes", 30))
        if not _free_at(result.get("free", []), start, duration) and result.get("free"):
            start = str(result["free"][0]).split("-")[0]
        return _call(
            turn,
            "schedule_meeting",
            attendees=[address],
            subject=subject.removeprefix("Re: ") or "Meeting",
            duration_minutes=duration,
            preferred_day=result["day"],
            start_time=start,
        )
    if tool == "schedule_meeting" and result.get("scheduled"):
        return email([f"I have sent you an invitation for {result.get('when')}."])
    if tool == "Question":
        return email([str(result.get("answer") or "I will get back to you on this shortly.")])
    return _call(turn, "Done", done=True)


def _free_at(free: list[str], start: str, duration: int) -> bool:
    """Whether ``start`` plus ``duration`` fits in one of the ``HH:MM-HH:MM`` free ranges."""

    def minutes(hhmm: str) -> int:
        hours, mins = hhmm.split(":")
        return int(hours) * 60 + int(mins)

    begin = minutes(start)
    return any(
        minutes(r.split("-")[0]) <= begin and begin + duration <= minutes(r.split("-")[1])
        for r in free
    )


__all__ = ["assistant_policy"]

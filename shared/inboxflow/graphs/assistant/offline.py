"""The offline model's heuristics for the assistant's LLM tasks (see :mod:`.tasks`).

``triage_email``: the owner's preferences first, then automated mail, a thank-you
that asks nothing and a sales pitch (notify), FYIs, requests (the cue lists of
:mod:`.cues`, in en, cs, de, fr, es, ja). The memory updates apply rules: the sender and
the choice, the edited sign-off or greeting, the edited meeting length or start
time (the response preferences' rules are every graph's: :mod:`..reply_rules`).
The response agent's script (``assistant_policy``) plays plausible turns
with no key; it reads what a real model would: the system message (today, the owner's
response and calendar preferences as JSON) and the conversation. A request for a
meeting (:func:`.reading.meeting_request`): check the calendar on the day asked for
(:mod:`.when`, counted from the day the email was sent; else the next business day),
schedule it at the time and for the length asked for (else the preferred time, or the
first free one, inside the part of the day asked for), then confirm by email; a question only the owner can answer (a
sentence opening with which/what/when/how much/how many): ask the owner
(``Question``), then email the answer; anything else: one email. Feedback makes it
write again with the feedback in; a sent email or a failure ends with Done.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from ...mail.addresses import address_key_or_none, ascii_lower, domain_key_or_none
from ...ports.llm import AgentTurn, ChatMessage, ToolCall
from ...workspace import business_day
from .reading import asks, cold_pitch, meeting_request, new_text, thanks_only
from .tasks import (
    CalProfile,
    CalUpdate,
    Triage,
    TriageProfile,
    TriageUpdate,
)
from .when import Requested, requested

# --- triage_email ------------------------------------------------------------------------------

AUTOMATED = re.compile(r"(no-?reply|newsletter|notifications?|mailer-daemon|marketing|news)@", re.I)
BULK = re.compile(r"\b(unsubscribe|newsletter|% off|sale ends|webinar)\b", re.I)
FYI = re.compile(
    r"\b(fyi|for your information|invoice|receipt|shipped|delivered|reminder|announcement|"
    r"has been updated|status update|no action needed)\b",
    re.I,
)
ASKS = re.compile(
    r"(\?|\b(could you|can you|would you|please|let me know|are you free|meet|call|"
    r"schedule)\b)",
    re.I,
)


def domain_of(address: str) -> str:
    """The part after ``@`` as ``domain_key`` compares it (ASCII-lowercased where it is none)."""
    domain = address.rpartition("@")[2]
    return domain_key_or_none(domain) or ascii_lower(domain)


def _sender_key(address: str) -> str:
    """The sender as preferences hold it: its ``address_key`` (ASCII-lowercased where none)."""
    return address_key_or_none(address) or ascii_lower(address.strip())


def _listed(sender: str, items: list[str]) -> bool:
    return any(_sender_key(item) == sender for item in items)


def offline_triage(inputs: Mapping[str, Any]) -> Triage:
    """Heuristics: the owner's preferences first, then automated mail, FYIs, requests."""
    sender = _sender_key(str(inputs["sender"]))
    prefs = json.loads(str(inputs["preferences"]))
    text = f"{inputs['subject']}\n{inputs['body']}"
    ignored_domains = {domain_of(f"@{d}") for d in prefs["ignore_domains"]}
    if _listed(sender, prefs["ignore_senders"]) or domain_of(sender) in ignored_domains:
        return Triage(reasoning=f"the owner ignores mail from {sender}", classification="ignore")
    if _listed(sender, prefs["respond_senders"]):
        return Triage(reasoning=f"the owner answers {sender}", classification="respond")
    if _listed(sender, prefs["notify_senders"]):
        return Triage(reasoning=f"the owner wants to hear of {sender}", classification="notify")
    if AUTOMATED.search(sender) or BULK.search(text):
        return Triage(reasoning="automated or bulk mail", classification="ignore")
    written = new_text(str(inputs["subject"]), str(inputs["body"]))
    thanks = thanks_only(written)
    if thanks:
        return Triage(
            reasoning=f'a thank-you ("{thanks}") that asks nothing', classification="notify"
        )
    pitch = cold_pitch(written)
    if pitch:
        return Triage(reasoning=f'an unsolicited pitch ("{pitch}")', classification="notify")
    if FYI.search(text):
        return Triage(reasoning="information the owner may want to see", classification="notify")
    asked = asks(written) or (ASKS.search(written) and "request")
    if asked:
        return Triage(
            reasoning=f'a direct request to the owner ("{asked}")', classification="respond"
        )
    return Triage(reasoning="nothing asked; the owner decides", classification="notify")


# --- the memory updates ----------------------------------------------------------------------


def _without(items: list[str], value: str) -> list[str]:
    return [item for item in items if _sender_key(item) != value]


def triage_rules(inputs: Mapping[str, Any]) -> TriageUpdate:
    profile = TriageProfile.model_validate(json.loads(inputs["profile"]))
    event, details = str(inputs["event"]), json.loads(inputs["details"])
    sender = _sender_key(str(details["sender"]))
    p = profile.model_copy(deep=True)
    if event == "notify:ignore":
        p.notify_senders = _without(p.notify_senders, sender)
        p.respond_senders = _without(p.respond_senders, sender)
        if _listed(sender, p.notify_ignored_once):
            p.notify_ignored_once = _without(p.notify_ignored_once, sender)
            if not _listed(sender, p.ignore_senders):
                p.ignore_senders.append(sender)
            why = f"the owner ignored mail from {sender} twice: ignore it"
        else:
            p.notify_ignored_once.append(sender)
            why = f"the owner ignored mail from {sender} once"
    elif event == "notify:respond":
        p.notify_ignored_once = _without(p.notify_ignored_once, sender)
        if not _listed(sender, p.respond_senders):
            p.respond_senders.append(sender)
        p.notify_senders = _without(p.notify_senders, sender)
        why = f"the owner answers mail from {sender}"
    elif event == "draft_ignored":
        p.respond_senders = _without(p.respond_senders, sender)
        if not _listed(sender, p.notify_senders):
            p.notify_senders.append(sender)
        why = f"the owner dropped the reply to {sender}: ask before answering"
    else:
        return TriageUpdate(profile=profile, changed=False, why=f"{event}: nothing to learn")
    return TriageUpdate(profile=p, changed=p != profile, why=why)


def cal_rules(inputs: Mapping[str, Any]) -> CalUpdate:
    profile = CalProfile.model_validate(json.loads(inputs["profile"]))
    details = json.loads(inputs["details"])
    before, after = details["before"], details["after"]
    p, changes = profile.model_copy(deep=True), []
    if str(before.get("duration_minutes")) != str(after.get("duration_minutes")):
        try:
            p.default_duration_minutes = int(str(after.get("duration_minutes")))
            changes.append(f"meetings last {p.default_duration_minutes} minutes")
        except ValueError:
            pass
    if before.get("start_time") != after.get("start_time") and after.get("start_time"):
        p.preferred_start_time = str(after["start_time"])
        changes.append(f"meetings start at {p.preferred_start_time}")
    why = "; ".join(changes) or "the edit shows no calendar preference"
    return CalUpdate(profile=p, changed=p != profile, why=why)


# --- the response agent ----------------------------------------------------------------------

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

    written = new_text(subject, user.partition("\n\n")[2])
    sent = _line("Sent", user).split(" ")[0]
    wanted = requested(written, date.fromisoformat(sent) if sent else today, today)
    if last.get("role") != "tool":
        if meeting_request(written):
            day = wanted.day or business_day(today, 1)
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
        duration = wanted.minutes or int(calendar.get("default_duration_minutes", 30))
        preferred = str(calendar.get("preferred_start_time", "10:00"))
        start = _start(list(result.get("free", [])), duration, preferred, wanted)
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


def _start(free: list[str], duration: int, preferred: str, wanted: Requested) -> str:
    """The meeting's start: the one asked for; else the owner's preferred time when it is free
    and in the window asked for ("Thursday afternoon", "after 1 pm"), else the first free
    time in that window, else the window's start (the owner edits it at review)."""
    if wanted.start:
        return wanted.start
    low, high = _minutes(wanted.earliest or "00:00"), _minutes(wanted.latest or "23:59")
    in_window = low <= _minutes(preferred) and _minutes(preferred) + duration <= high
    if in_window and (_free_at(free, preferred, duration) or not free):
        return preferred
    for span in free:
        begin, end = (_minutes(part) for part in span.split("-"))
        begin = max(begin, low)
        if begin + duration <= min(end, high):
            return f"{begin // 60:02d}:{begin % 60:02d}"
    if wanted.earliest:
        return wanted.earliest
    return str(free[0]).split("-")[0] if free else preferred


def _minutes(hhmm: str) -> int:
    hours, mins = hhmm.split(":")
    return int(hours) * 60 + int(mins)


def _free_at(free: list[str], start: str, duration: int) -> bool:
    """Whether ``start`` plus ``duration`` fits in one of the ``HH:MM-HH:MM`` free ranges."""

    begin = _minutes(start)
    return any(
        _minutes(r.split("-")[0]) <= begin and begin + duration <= _minutes(r.split("-")[1])
        for r in free
    )


__all__ = ["assistant_policy", "cal_rules", "offline_triage", "triage_rules"]

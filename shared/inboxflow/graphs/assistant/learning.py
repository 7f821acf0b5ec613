"""Learning from the owner's decisions: one memory update task per namespace.

The update is an LLM task (structured: the whole new profile, whether it
changed, why), told to change only what the feedback supports; the offline
model applies rules: it records the sender and the choice, the edited
sign-off or greeting, the edited meeting length or start time.

| event              | namespace             | offline rule                                           |
|--------------------|-----------------------|--------------------------------------------------------|
| notify:ignore      | triage_preferences    | 1st time: noted; 2nd time for the sender: ignore them |
| notify:respond     | triage_preferences    | the sender is answered from now on                     |
| draft_ignored      | triage_preferences    | the sender is notified, not answered                   |
| write_email edited | response_preferences  | the edited greeting / sign-off is kept                 |
| meeting edited     | cal_preferences       | the edited length / start time is kept                 |
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ...context import NodeContext
from ...memory import Memory, source_version, update_memory
from ...ports.llm import LLMTask
from .state import AssistantState

TIMEOUT_REVIEWERS = frozenset({"deadline", "timeout", None})


class TriageProfile(BaseModel):
    """``triage_preferences``."""

    ignore_senders: list[str]
    ignore_domains: list[str]
    notify_senders: list[str]
    respond_senders: list[str]
    notify_ignored_once: list[str]
    notes: list[str]


class ResponseProfile(BaseModel):
    """``response_preferences``."""

    greeting: str
    sign_off: str
    tone: str
    notes: list[str]


class CalProfile(BaseModel):
    """``cal_preferences``."""

    default_duration_minutes: int
    preferred_start_time: str
    notes: list[str]


class TriageUpdate(BaseModel):
    """The updated triage profile, whether it changed, why."""

    profile: TriageProfile
    changed: bool
    why: str


class ResponseUpdate(BaseModel):
    """The updated response profile, whether it changed, why."""

    profile: ResponseProfile
    changed: bool
    why: str


class CalUpdate(BaseModel):
    """The updated calendar profile, whether it changed, why."""

    profile: CalProfile
    changed: bool
    why: str


def _without(items: list[str], value: str) -> list[str]:
    return [item for item in items if item != value]


def _triage_rules(inputs: Mapping[str, Any]) -> TriageUpdate:
    profile = TriageProfile.model_validate(json.loads(inputs["profile"]))
    event, details = str(inputs["event"]), json.loads(inputs["details"])
    sender = str(details["sender"]).lower()
    p = profile.model_copy(deep=True)
    if event == "notify:ignore":
        p.notify_senders = _without(p.notify_senders, sender)
        p.respond_senders = _without(p.respond_senders, sender)
        if sender in p.notify_ignored_once:
            p.notify_ignored_once = _without(p.notify_ignored_once, sender)
            if sender not in p.ignore_senders:
                p.ignore_senders.append(sender)
            why = f"the owner ignored mail from {sender} twice: ignore it"
        else:
            p.notify_ignored_once.append(sender)
            why = f"the owner ignored mail from {sender} once"
    elif event == "notify:respond":
        p.notify_ignored_once = _without(p.notify_ignored_once, sender)
        if sender not in p.respond_senders:
            p.respond_senders.append(sender)
        p.notify_senders = _without(p.notify_senders, sender)
        why = f"the owner answers mail from {sender}"
    elif event == "draft_ignored":
        p.respond_senders = _without(p.respond_senders, sender)
        if sender not in p.notify_senders:
            p.notify_senders.append(sender)
        why = f"the owner dropped the reply to {sender}: ask before answering"
    else:
        return TriageUpdate(profile=profile, changed=False, why=f"{event}: nothing to learn")
    return TriageUpdate(profile=p, changed=p != profile, why=why)


def _paragraphs(text: str) -> list[str]:
    return [block.strip() for block in text.replace("\r\n", "\n").split("\n\n") if block.strip()]


def _response_rules(inputs: Mapping[str, Any]) -> ResponseUpdate:
    profile = ResponseProfile.model_validate(json.loads(inputs["profile"]))
    details = json.loads(inputs["details"])
    before = _paragraphs(str(details["before"].get("content", "")))
    after = _paragraphs(str(details["after"].get("content", "")))
    p, changes = profile.model_copy(deep=True), []
    if before and after and before[-1] != after[-1] and len(after[-1]) <= 80:
        p.sign_off = after[-1]
        changes.append(f"sign-off is now {after[-1]!r}")
    if len(after) > 1 and before and before[0] != after[0] and len(after[0]) <= 60:
        first_name = str(details.get("first_name") or "")
        greeting = after[0].replace(first_name, "{first_name}") if first_name else after[0]
        p.greeting = greeting
        changes.append(f"greeting is now {greeting!r}")
    why = "; ".join(changes) or "the edit shows no greeting or sign-off preference"
    return ResponseUpdate(profile=p, changed=p != profile, why=why)


def _cal_rules(inputs: Mapping[str, Any]) -> CalUpdate:
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


def _template(namespace: str) -> str:
    return (
        f"Current {namespace} (JSON): $profile\n\nWhat the owner did: $event\n"
        "Details (JSON): $details\n\nReturn the whole profile, updated only where this "
        "feedback supports a change, whether it changed, and why."
    )


_SYSTEM = (
    "You keep an email assistant's memory of its owner's preferences. Change only what "
    "the owner's decision clearly supports; keep everything else exactly as it is."
)

TRIAGE_UPDATE_TASK = LLMTask(
    "update_triage_preferences",
    TriageUpdate,
    _template("triage_preferences"),
    _triage_rules,
    _SYSTEM,
)
RESPONSE_UPDATE_TASK = LLMTask(
    "update_response_preferences",
    ResponseUpdate,
    _template("response_preferences"),
    _response_rules,
    _SYSTEM,
)
CAL_UPDATE_TASK = LLMTask(
    "update_cal_preferences", CalUpdate, _template("cal_preferences"), _cal_rules, _SYSTEM
)
UPDATE_TASKS: dict[str, LLMTask[Any]] = {
    "triage_preferences": TRIAGE_UPDATE_TASK,
    "response_preferences": RESPONSE_UPDATE_TASK,
    "cal_preferences": CAL_UPDATE_TASK,
}
"""The memory update task of each namespace (module-level each, so the Gemini double finds them)."""


def learn(
    ctx: NodeContext,
    state: AssistantState,
    namespace: str,
    event: str,
    details: Mapping[str, Any],
) -> list[str]:
    """Update ``namespace`` from the owner's decision; ``["namespace@version"]`` if it changed.

    A decision the deadline took (nobody decided) teaches nothing.
    """
    if ctx.resume is not None and ctx.resume.get("reviewer") in TIMEOUT_REVIEWERS:
        return []
    sender = state.email["sender"]["address"]
    full = {"sender": sender, "first_name": first_name(state.email), **details}

    def change(memory: Memory) -> tuple[dict[str, Any], str] | None:
        answer = ctx.generate(
            UPDATE_TASKS[namespace],
            {
                "profile": json.dumps(memory.profile, sort_keys=True),
                "event": event,
                "details": json.dumps(full, sort_keys=True, default=str),
            },
        )
        if not answer.changed:
            return None
        return answer.profile.model_dump(), str(answer.why)

    source = f"{ctx.trace_id}:{ctx.step}"
    update_memory(ctx.store, ctx.clock, state.mailbox, namespace, change, source)
    version = source_version(ctx.store, state.mailbox, namespace, source)
    return [] if version is None else [f"{namespace}@{version}"]


def first_name(email: Mapping[str, Any]) -> str:
    """The sender's first name (their display name's first word, else the address's local part)."""
    sender = email.get("sender") or {}
    name = str(sender.get("name") or "").strip()
    if name:
        return name.split()[0].strip(",")
    local = str(sender.get("address", "")).partition("@")[0]
    return local.split(".")[0].capitalize()

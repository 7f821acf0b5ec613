"""Learning from the owner's decisions: one memory update task per namespace.

The update is an LLM task (:mod:`.tasks`) (structured: the whole new profile, whether it
changed, why), told to change only what the feedback supports; the offline
model applies rules (:mod:`.offline`): it records the sender and the choice, the edited
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

from ...engine.context import NodeContext
from ...memory import Memory, PreferenceMemory
from .state import AssistantState
from .tasks import UPDATE_TASKS

TIMEOUT_REVIEWERS = frozenset({"deadline", "timeout", None})


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
    preferences = PreferenceMemory(ctx.store, ctx.clock)
    preferences.update(state.mailbox, namespace, change, source)
    version = preferences.source_version(state.mailbox, namespace, source)
    return [] if version is None else [f"{namespace}@{version}"]


def first_name(email: Mapping[str, Any]) -> str:
    """The sender's first name (their display name's first word, else the address's local part)."""
    sender = email.get("sender") or {}
    name = str(sender.get("name") or "").strip()
    if name:
        return name.split()[0].strip(",")
    local = str(sender.get("address", "")).partition("@")[0]
    return local.split(".")[0].capitalize()

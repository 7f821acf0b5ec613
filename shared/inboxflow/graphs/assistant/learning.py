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
| write_email edited | response_preferences  | the edited greeting / sign-off is kept (every graph's  |
|                    |                       | rules: :mod:`..reply_rules`)                           |
| meeting edited     | cal_preferences       | the edited length / start time is kept                 |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...engine.context import NodeContext
from ..reply_learning import learn as learn_into
from .state import AssistantState
from .tasks import UPDATE_TASKS

__all__ = ["first_name", "learn"]


def learn(
    ctx: NodeContext,
    state: AssistantState,
    namespace: str,
    event: str,
    details: Mapping[str, Any],
) -> list[str]:
    """Update ``namespace`` from the owner's decision; ``["namespace@version"]`` if it changed.

    A decision the deadline took (nobody decided) teaches nothing (:func:`..reply_learning.learn`).
    """
    if namespace == "response_preferences" and ctx.resume is not None:
        details = {**details, "comment": str(ctx.resume.get("comment") or "")}
    sender = state.email["sender"]["address"]
    full = {"sender": sender, "first_name": first_name(state.email), **details}
    return learn_into(ctx, state.mailbox, namespace, UPDATE_TASKS[namespace], event, full)


def first_name(email: Mapping[str, Any]) -> str:
    """The sender's first name (their display name's first word, else the address's local part)."""
    sender = email.get("sender") or {}
    name = str(sender.get("name") or "").strip()
    if name:
        return name.split()[0].strip(",")
    local = str(sender.get("address", "")).partition("@")[0]
    return local.split(".")[0].capitalize()

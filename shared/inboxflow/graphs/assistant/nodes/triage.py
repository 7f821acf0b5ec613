"""triage_router and triage_notify: ignore, ask the owner, or respond.

| node          | triage_router                                                      |
|---------------|--------------------------------------------------------------------|
| inputs        | email, the mailbox's ``triage_preferences``                         |
| outputs       | classification, reasoning                                           |
| LLM           | ``triage_email`` (structured: reasoning, classification)            |
| routes        | -> END (ignore) ; -> triage_notify ; -> llm_call (respond)          |

| node          | triage_notify                                                      |
|---------------|--------------------------------------------------------------------|
| pause         | ``notify``: respond (optional instruction) / ignore                  |
| memory        | the choice updates ``triage_preferences``                           |
| routes        | -> itself (resumed) ; -> llm_call ; -> END                           |
"""

from __future__ import annotations

import json

from ....engine.context import NodeContext
from ....engine.step import END, Pause, Step
from ....memory import PreferenceMemory
from ..learning import learn
from ..pauses import pause_context
from ..settings import assistant_settings
from ..state import AssistantState
from ..tasks import TRIAGE_TASK


def triage_router(state: AssistantState, ctx: NodeContext) -> Step:
    """Classify the email with the owner's triage preferences."""
    email = state.email
    prefs = PreferenceMemory(ctx.store, ctx.clock).read(state.mailbox, "triage_preferences")
    answer = ctx.generate(
        TRIAGE_TASK,
        {
            "sender": email["sender"]["address"],
            "subject": email.get("subject", ""),
            "body": str(email.get("body_text", ""))[:8000],
            "preferences": json.dumps(prefs.profile, sort_keys=True),
        },
    )
    update = {"classification": answer.classification, "reasoning": answer.reasoning}
    if answer.classification == "ignore":
        return Step(update={**update, "status": "ignored"}, goto=END)
    if answer.classification == "notify":
        return Step(update=update, goto="triage_notify")
    return Step(update=update, goto="llm_call")


def triage_notify(state: AssistantState, ctx: NodeContext) -> Step:
    """Ask the owner (first run), or act on the owner's choice (resumed)."""
    email = state.email
    if ctx.resume is None:
        return Step(
            goto=Pause(
                kind="notify",
                payload={
                    "from": email["sender"]["address"],
                    "subject": email.get("subject", ""),
                },
                resume_node="triage_notify",
                reviewers=(state.mailbox,),
                deadline_s=assistant_settings(ctx.ports).review_deadline_s,
                on_timeout="reject",
                context=pause_context(email, [f"triage: {state.reasoning}"]),
            )
        )
    decision = str(ctx.resume.get("decision"))
    comment = (ctx.resume.get("comment") or "").strip() or None
    updated = learn(ctx, state, "triage_preferences", f"notify:{decision}", {"comment": comment})
    memory_updates = [*state.memory_updates, *updated]
    if decision == "respond":
        return Step(
            update={"instruction": comment, "memory_updates": memory_updates},
            goto="llm_call",
        )
    return Step(update={"status": "ignored", "memory_updates": memory_updates}, goto=END)

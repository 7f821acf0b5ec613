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
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from ...context import NodeContext
from ...graph import END, Pause, Step
from ...memory import read_memory
from ...ports.llm import LLMTask
from .learning import learn
from .pauses import pause_context
from .settings import assistant_settings
from .state import AssistantState

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


class Triage(BaseModel):
    """The triage's structured answer."""

    reasoning: str
    classification: Literal["ignore", "notify", "respond"]


def domain_of(address: str) -> str:
    """The part after ``@``, lower case."""
    return address.rpartition("@")[2].lower()


def offline_triage(inputs: Mapping[str, Any]) -> Triage:
    """Heuristics: the owner's preferences first, then automated mail, FYIs, requests."""
    sender = str(inputs["sender"]).lower()
    prefs = json.loads(str(inputs["preferences"]))
    text = f"{inputs['subject']}\n{inputs['body']}"
    if sender in prefs["ignore_senders"] or domain_of(sender) in prefs["ignore_domains"]:
        return Triage(reasoning=f"the owner ignores mail from {sender}", classification="ignore")
    if sender in prefs["respond_senders"]:
        return Triage(reasoning=f"the owner answers {sender}", classification="respond")
    if sender in prefs["notify_senders"]:
        return Triage(reasoning=f"the owner wants to hear of {sender}", classification="notify")
    if AUTOMATED.search(sender) or BULK.search(text):
        return Triage(reasoning="automated or bulk mail", classification="ignore")
    if FYI.search(text):
        return Triage(reasoning="information the owner may want to see", classification="notify")
    if ASKS.search(text):
        return Triage(reasoning="a direct request to the owner", classification="respond")
    return Triage(reasoning="nothing asked; the owner decides", classification="notify")


TRIAGE_TASK = LLMTask(
    name="triage_email",
    output_model=Triage,
    system=(
        "You triage the email of the mailbox owner. ignore: marketing, automated mail, "
        "anything that needs no attention. notify: information the owner should see but "
        "need not answer. respond: a person expects an answer or an action from the owner. "
        "The owner's triage preferences come first."
    ),
    template=(
        "Triage preferences (JSON): $preferences\n\n"
        "From: $sender\nSubject: $subject\n\n$body\n\n"
        "Answer with your reasoning and the classification."
    ),
    offline=offline_triage,
)


def triage_router(state: AssistantState, ctx: NodeContext) -> Step:
    """Classify the email with the owner's triage preferences."""
    email = state.email
    prefs = read_memory(ctx.store, state.mailbox, "triage_preferences")
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

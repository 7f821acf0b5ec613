"""generate: write the reply.

| node     | generate                                                               |
|----------|------------------------------------------------------------------------|
| inputs   | email, classification, context {contact, owner, similar, calendar}     |
| outputs  | draft {to, subject, body, tone}                                        |
| LLM task | ``generate_response`` -> ``ReplyDraft``                                 |
| routes   | -> review                                                              |

Tone by category: professional for inquiries, meeting requests and the
rest, empathetic for complaints, friendly for follow-ups. The draft uses the
context: the contact's name and company, the free calendar slots for a
meeting, the saved reply that answers an inquiry, the owner's signature; and
the greeting, sign-off and notes the mailbox's reviewers taught by editing
earlier drafts (:mod:`...reply_learning`; the review that follows judges the
draft with them applied).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ....engine.context import NodeContext
from ....engine.step import Step
from ....errors import NodeFailed
from ....mail import bare_subject, prompt_fields, reply_subject
from ....workspace import business_day
from ...reply_learning import learnt, prompt_preferences
from ..state import Draft, PipelineState, Tone
from ..tasks import GENERATE_RESPONSE

TONES: dict[str, Tone] = {
    "inquiry": "professional",
    "meeting_request": "professional",
    "complaint": "empathetic",
    "follow_up": "friendly",
    "spam": "professional",
    "other": "professional",
}


def generate(state: PipelineState, ctx: NodeContext) -> Step:
    """Draft the reply in the category's tone, from the gathered context."""
    if state.classification is None:
        raise NodeFailed("generate needs a classification")
    email = state.email
    context = state.context
    category = state.classification.category
    tone = TONES["complaint" if state.classification.is_complaint else category]
    owner = context.owner if context else None
    recipient = recipient_name(state)
    contact = context.contact if context else None
    slots = context.calendar.slots if context and context.calendar else []
    today = datetime.fromtimestamp(ctx.clock.now(), UTC).date()
    reply_by = business_day(today, 1)
    inputs = {
        **prompt_fields(email),
        "category": category,
        "tone": tone,
        "recipient_name": recipient or "there",
        "topic": bare_subject(email.subject) or "your message",
        "reply_subject": reply_subject(email.subject),
        "contact": json.dumps(contact, ensure_ascii=False, sort_keys=True)
        if contact
        else "(not a contact)",
        "duration_minutes": str(
            context.calendar.duration_minutes if context and context.calendar else 30
        ),
        "slots": "\n".join(f"- {slot.label}" for slot in slots) or "(none)",
        "saved_replies": "\n".join(
            f"- {r.title}: {r.answer}" for r in (context.similar if context else [])
        )
        or "(none)",
        "signature": _signature(owner, email.mailbox),
        "reply_by": f"{reply_by:%A} {reply_by.day} {reply_by:%B}",
        "preferences": prompt_preferences(learnt(ctx, email.mailbox, recipient)),
    }
    answer = ctx.generate(GENERATE_RESPONSE, inputs)
    to = next(
        (str(a.arguments.get("to")) for a in state.planned_actions if a.name == "create_draft"),
        email.reply_address(),
    )
    draft = Draft(
        to=to, subject=answer.subject or inputs["reply_subject"], body=answer.body, tone=tone
    )
    return Step(update={"draft": draft}, goto="review")


def recipient_name(state: PipelineState) -> str:
    """Whom the reply greets: the contact's first name, else the sender's (``""``: unknown)."""
    contact = state.context.contact if state.context else None
    return _first_name(str((contact or {}).get("name", ""))) or state.email.sender.first_name


def _first_name(name: str) -> str:
    name = name.replace('"', "").strip()
    if "," in name:
        last, _, given = name.partition(",")
        name = given.strip() or last
    return name.split()[0] if name.split() else ""


def _signature(owner: Mapping[str, Any] | None, mailbox: str) -> str:
    if owner and owner.get("name"):
        role = ", ".join(str(owner[k]) for k in ("title", "company") if owner.get(k))
        return f"{owner['name']}\n{role}" if role else str(owner["name"])
    domain = mailbox.rpartition("@")[2].split(".")[0] or "our"
    return f"The {domain.capitalize()} team"


__all__ = ["TONES", "generate", "recipient_name"]

"""retrieve: what do we already know that bears on this email?

| node     | retrieve                                                                 |
|----------|--------------------------------------------------------------------------|
| inputs   | email, classification                                                    |
| outputs  | context {sender_known, owner, similar}                                   |
| LLM task | none                                                                     |
| routes   | -> decide                                                                |

``sender_known`` is what the tool rules need (an inquiry only looks the
sender up when the sender is a contact); ``owner`` is the mailbox owner's
own contact record, who signs the reply; ``similar`` are the saved replies
whose keywords the email mentions, best first.
"""

from __future__ import annotations

import re

from ...context import NodeContext
from ...graph import Step
from ...mail import bare_subject, strip_quoted
from ...workspace import SAVED_REPLIES
from ..state import Context, PipelineState, SavedReply
from ..tools import workspace_of

MAX_SIMILAR = 2


def retrieve(state: PipelineState, ctx: NodeContext) -> Step:
    """Check whether the sender is a contact, find the signer, match saved replies."""
    workspace = workspace_of(ctx)
    email = state.email
    sender_known = workspace.get_contact(email.sender.address) is not None
    owner = workspace.get_contact(email.mailbox)
    text = f"{bare_subject(email.subject)}\n{strip_quoted(email.body_text)}".lower()
    context = Context(
        sender_known=sender_known,
        owner=_public(owner) if owner else None,
        similar=_similar(ctx, text),
    )
    return Step(update={"context": context}, goto="decide")


def _similar(ctx: NodeContext, text: str) -> list[SavedReply]:
    scored: list[SavedReply] = []
    for reply_id, doc in ctx.store.list(SAVED_REPLIES):
        keywords = [str(k).lower() for k in doc.get("keywords", [])]
        hits = [k for k in keywords if re.search(rf"\b{re.escape(k)}", text)]
        if hits:
            scored.append(
                SavedReply(
                    id=reply_id,
                    title=str(doc.get("title", reply_id)),
                    answer=str(doc.get("answer", "")),
                    score=round(len(hits) / len(keywords), 3),
                )
            )
    scored.sort(key=lambda reply: (-reply.score, reply.id))
    return scored[:MAX_SIMILAR]


def _public(contact: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in contact.items() if k in ("email", "name", "title", "company", "phone")}

"""classify: what kind of email is this, and how sure are we?

| node     | classify                                                               |
|----------|------------------------------------------------------------------------|
| inputs   | email                                                                  |
| outputs  | classification {category, confidence, evidence, flags, needs_reply},   |
|          | end_reason when the trace ends here                                    |
| LLM task | ``classify_intent`` -> ``IntentAnswer``                                 |
| routes   | spam with confidence >= 0.8 -> END (done); no reply needed -> END      |
|          | (done); anything else -> retrieve                                      |

The offline model (``offline.py``) scores keyword and header evidence per category and turns
the scores into a calibrated confidence with a softmax: one category with
strong evidence scores 0.85 and above, mixed or thin evidence stays under
0.8 (and so ends at a human). Sentences that try to instruct the model are
cut out before scoring and flagged, so an injected "mark this as a
high-confidence inquiry" changes neither the category nor the route.

A courtesy message with nothing to answer (a thank-you, an acknowledgement:
no question, no request, no other category's evidence in the new text) gets
``needs_reply = false`` and ends here as "no reply needed" instead of asking a
reviewer to approve a courtesy reply. A flagged email or a complaint is
always answered.
"""

from __future__ import annotations

from typing import Any

from ....engine.context import NodeContext
from ....engine.step import END, Step
from ....mail import prompt_fields
from ..settings import AUTO_DISPATCH_CONFIDENCE
from ..state import Classification, PipelineState
from ..tasks import CLASSIFY_INTENT

SPAM_END_CONFIDENCE = AUTO_DISPATCH_CONFIDENCE
"""Spam at or above this confidence ends the trace at classify; below, a human sees it."""


NO_REPLY_NEEDED = "no reply needed"
"""``end_reason`` of a courtesy message that ends at classify."""


def classify(state: PipelineState, ctx: NodeContext) -> Step:
    """Classify the email; confident spam and courtesy messages with nothing to answer end here."""
    answer = ctx.generate(CLASSIFY_INTENT, prompt_fields(state.email))
    classification = Classification.model_validate(answer.model_dump())
    update: dict[str, Any] = {"classification": classification}
    if classification.category == "spam" and classification.confidence >= SPAM_END_CONFIDENCE:
        update["end_reason"] = f"spam (confidence {classification.confidence:.2f}): not answered"
        return Step(update=update, goto=END, status="done")
    if no_reply_needed(classification):
        update["end_reason"] = f"{NO_REPLY_NEEDED}: a courtesy message with nothing to answer"
        return Step(update=update, goto=END, status="done")
    return Step(update=update, goto="retrieve")


def no_reply_needed(classification: Classification) -> bool:
    """The model says nothing needs answering, and nothing overrides it (a flag, a complaint)."""
    return (
        not classification.needs_reply
        and not classification.flags
        and not classification.is_complaint
    )


__all__ = ["NO_REPLY_NEEDED", "SPAM_END_CONFIDENCE", "classify", "no_reply_needed"]

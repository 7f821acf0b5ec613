"""The pipeline's guards: promises kept on classify's step whatever the model answered.

Declared on ``classify`` (the node whose step carries the judgment, before any
draft is written or dispatched); each adds a flag to the classification, and
the review node pauses every flagged draft for a person (docs/architecture.md §9):

| guard               | fires when                                          | does                                |
|---------------------|-----------------------------------------------------|-------------------------------------|
| ``complaint_review`` | a complaint cue (``cues/<lang>.toml`` ``complaint``) in an email the model did not call a complaint, or would end unanswered | flags ``complaint_cues``: reviewed, empathetic, never sent on its own |
| ``lookalike_sender`` | the sender imitates the mailbox's organisation or spells a name with look-alike characters (``senders.py``) | flags ``lookalike_sender``: reviewed |
| ``forwarded_review`` | the email forwards someone else's message            | flags ``forwarded``: a person checks who is answered |
| ``safety_screen``    | always, once: the safety screen (:mod:`..screen`) reads the email | keeps its report on the trace |
| ``screen_review``    | the screen found a risk, or could not read the email | flags ``screen``: reviewed, even what the model ends as spam |

A guard never lowers a judgment: a confident spam end stays an end unless a
complaint cue says a customer may be waiting for an answer.
"""

from __future__ import annotations

import re
from typing import Any

from ...engine.context import NodeContext
from ...engine.guards import Verdict
from ...engine.step import END, Step
from ...mail import Email, bare_subject, strip_quoted
from ...mail.addresses import same_address
from ...mail.quoting import TRIMMED_MARKER
from ..screen import screen_of, screened
from ..word_data import cue_languages
from .cues import complaint_cues
from .senders import lookalike_reason
from .state import COMPLAINT_FLAG, Classification, PipelineState

LOOKALIKE_FLAG = "lookalike_sender"
FORWARDED_FLAG = "forwarded"
SCREEN_FLAG = "screen"

_FORWARD_SUBJECT = re.compile(r"^\s*(fwd?|fw|wg|tr|rv|enc|転送)\s*[:\uff1a]", re.IGNORECASE)
_FORWARD_MARKER = re.compile(
    r"^\s*-{2,}\s*(forwarded message|original message|weitergeleitete nachricht|"
    r"message transf[ée]r[ée]|p[řr]eposlan[áa] zpr[áa]va|mensaje reenviado|転送メッセージ)",
    re.IGNORECASE | re.MULTILINE,
)


def email_text(email: Email) -> str:
    """What the sender wrote: the subject and the new text (quotes trimmed, forwards kept)."""
    body = strip_quoted(email.body_for_model().replace(TRIMMED_MARKER, ""))
    return f"{bare_subject(email.subject)}\n{body}"


def _proposed(step: Step) -> Classification | None:
    classification = step.update.get("classification")
    return classification if isinstance(classification, Classification) else None


def _unflagged(step: Step, flag: str) -> Classification | None:
    """The classification ``step`` proposes when it goes on (not to END) without ``flag``."""
    classification = _proposed(step)
    if classification is None or step.goto == END or flag in classification.flags:
        return None
    return classification


def _was(classification: Classification, step: Step) -> str:
    """What the model proposed, for a guard's reason."""
    was = f"{classification.category} at {classification.confidence:.2f}"
    return was + " (would end unanswered)" if step.goto == END else was


def _to_person(
    step: Step, classification: Classification, flag: str, reason: str, **changes: Any
) -> Verdict:
    """The step goes on to ``retrieve`` with ``flag`` added (review pauses the draft), and why."""
    flags = (
        [*classification.flags, flag] if flag not in classification.flags else classification.flags
    )
    update = {key: value for key, value in step.update.items() if key != "end_reason"}
    update["classification"] = classification.model_copy(update={"flags": flags, **changes})
    return Verdict(Step(update=update, goto="retrieve"), f"{reason} -> reviewed by a person")


def complaint_review(state: PipelineState, step: Step, ctx: NodeContext) -> Verdict | None:
    """Complaint cues send the email to a person whatever the category (issue 30 obs. 3)."""
    classification = _proposed(step)
    if classification is None or (classification.is_complaint and step.goto != END):
        return None
    found = complaint_cues().find(email_text(state.email))
    if not found:
        return None
    cue = found[0]
    was = _was(classification, step)
    reason = f'complaint cue "{cue.text}" ({cue.cue.label}): {was}'
    return _to_person(step, classification, COMPLAINT_FLAG, reason, needs_reply=True)


def lookalike_sender(state: PipelineState, step: Step, ctx: NodeContext) -> Verdict | None:
    """A look-alike sender is not the party it imitates: nothing goes out without a person."""
    classification = _unflagged(step, LOOKALIKE_FLAG)
    if classification is None:
        return None
    email = state.email
    own_name = next((a.name for a in email.to if same_address(a.address, email.mailbox)), "")
    found = lookalike_reason(email.sender.address, email.sender.name, email.mailbox, own_name)
    if found is None:
        return None
    reason = f"look-alike sender ({found}): {classification.category}"
    return _to_person(step, classification, LOOKALIKE_FLAG, reason)


def forwarded_review(state: PipelineState, step: Step, ctx: NodeContext) -> Verdict | None:
    """A forwarded message asks for someone else: a person checks who the reply is for."""
    classification = _unflagged(step, FORWARDED_FLAG)
    if classification is None:
        return None
    email = state.email
    if email.forwarded:
        why = "a forwarded message is attached"
    elif _FORWARD_SUBJECT.match(email.subject):
        why = f'subject "{email.subject[:40]}"'
    elif _FORWARD_MARKER.search(email.body_text):
        why = "a forwarded message in the body"
    else:
        return None
    reason = f"forwarded ({why}): the sender is not the person asking"
    return _to_person(step, classification, FORWARDED_FLAG, reason)


def safety_screen(state: PipelineState, step: Step, ctx: NodeContext) -> Verdict | None:
    """The screen reads the email once, apart from classify's own prompt."""
    languages = cue_languages(f"{__package__}.cues")
    return screened(step, ctx, state.email, languages, state.screen)


def screen_review(state: PipelineState, step: Step, ctx: NodeContext) -> Verdict | None:
    """What the screen found, or could not read, is drafted for a person, never sent alone;
    an impostor the model would end as spam too (a person learns of it: a changed bank
    account ends in a payment otherwise)."""
    report = screen_of(state.screen, step)
    classification = _proposed(step)
    if report is None or classification is None or SCREEN_FLAG in classification.flags:
        return None
    if not (report.needs_person or report.findings):
        return None
    was = _was(classification, step)
    reason = f"{report.explain()}: {was}"
    return _to_person(step, classification, SCREEN_FLAG, reason, needs_reply=True)


__all__ = [
    "FORWARDED_FLAG",
    "LOOKALIKE_FLAG",
    "SCREEN_FLAG",
    "complaint_review",
    "email_text",
    "forwarded_review",
    "lookalike_sender",
    "safety_screen",
    "screen_review",
]

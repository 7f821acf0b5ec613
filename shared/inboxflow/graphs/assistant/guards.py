"""The assistant's guards (``inboxflow.engine.guards``): what triage keeps whatever the model says.

| guard                  | node          | rule                                                    |
|------------------------|---------------|---------------------------------------------------------|
| ``impostor_money``     | triage_router | a request for money, gift cards or bank details from a   |
|                        |               | look-alike or unauthenticated sender: the owner is told |
|                        |               | (notify), no reply is started                           |
| ``thanks_not_answered``| triage_router | a thank-you that asks nothing is not answered (notify)  |
| ``safety_screen``      | triage_router | the safety screen (:mod:`..screen`) reads the email once |
| ``screen_floor``       | triage_router | what the screen found (or could not read) is never      |
|                        |               | ignored; an impostor or harm is never answered: notify  |

Each turns ``respond`` (or ``ignore``) into ``notify``: the owner sees the email and may
still answer it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...engine.guards import Verdict
from ...engine.step import Step
from ...mail import Email
from ...mail.authentication import configured_authserv_id
from ..screen import FLOORS, screen_of, screened
from ..word_data import cue_languages
from .reading import money_request, new_text, thanks_only
from .senders import unverified_reason
from .state import AssistantState

if TYPE_CHECKING:
    from ...engine.context import NodeContext


def _cue_against_respond(
    state: AssistantState, step: Step, find: Callable[[str], str | None]
) -> str | None:
    """The cue ``find`` sees in the email's new text when the model said respond, else None."""
    if step.update.get("classification") != "respond":
        return None
    return find(
        new_text(str(state.email.get("subject", "")), str(state.email.get("body_text", "")))
    )


def _notify_instead(step: Step, reason: str) -> Verdict:
    """The verdict that turns the model's respond (or ignore) into notify, for ``reason``."""
    said = step.update.get("classification")
    kept = {key: value for key, value in step.update.items() if key != "status"}
    notify = Step(
        update={**kept, "classification": "notify", "reasoning": reason},
        goto="triage_notify",
    )
    return Verdict(notify, f"{reason} (the model said {said})")


NEVER_ANSWERED = ("fraud", "harm")
"""Screen findings the assistant never starts a reply to: the owner is told (notify)."""


def safety_screen(state: AssistantState, step: Step, ctx: NodeContext) -> Verdict | None:
    """The screen reads the email once, apart from the triage's own prompt."""
    email = Email.model_validate(state.email)
    return screened(step, ctx, email, cue_languages(f"{__package__}.cues"), state.screen)


def screen_floor(state: AssistantState, step: Step, ctx: NodeContext) -> Verdict | None:
    """An email the screen found risky, or could not read, is never ignored; an impostor or a
    threat of harm is never answered: the owner is told (notify)."""
    report = screen_of(state.screen, step)
    said = step.update.get("classification")
    if report is None or said == "notify" or not (report.needs_person or report.findings):
        return None
    finding = report.first(NEVER_ANSWERED)
    if said == "respond" and finding is None:
        return None  # a reply starts, and the owner reviews every tool it would use
    floor = FLOORS[finding.kind] if finding is not None else "the owner sees it"
    return _notify_instead(step, f"{report.explain()}: {floor}")


def impostor_money(state: AssistantState, step: Step, ctx: NodeContext) -> Verdict | None:
    """A request for money from a sender who may be someone else reaches the owner, unanswered."""
    cue = _cue_against_respond(state, step, money_request)
    if cue is None:
        return None
    email = Email.model_validate(state.email)
    why = unverified_reason(email, state.mailbox, configured_authserv_id(ctx.ports.config))
    if why is None:
        return None
    return _notify_instead(step, f'money request ("{cue}") and {why}: notify the owner, no reply')


def thanks_not_answered(state: AssistantState, step: Step, ctx: NodeContext) -> Verdict | None:
    """A thank-you that asks for nothing is shown to the owner, not answered."""
    cue = _cue_against_respond(state, step, thanks_only)
    if cue is None:
        return None
    return _notify_instead(
        step, f'a thank-you ("{cue}") that asks nothing: notify the owner, no reply'
    )

"""Pause kinds: what a graph asks a human (or a customer), declared as data.

A graph declares its pause kinds (``Graph.pause_kinds``); a node pauses with
``Pause(kind=...)``. The approval service and the review pages read the
declaration: the choices offered, their labels and outcomes, which payload
fields a reviewer may edit and how each edit is validated. Nothing in
``approvals/`` names a kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

ChoiceStyle = Literal["primary", "danger", "neutral"]
FieldKind = Literal["line", "text", "address", "addresses"]


class EditRejected(ValueError):
    """An edit that a pause kind's field rules refuse; the message names the field."""


@dataclass(frozen=True)
class Choice:
    """One decision a reviewer can take: a button on the review page.

    Attributes:
        value: what the form posts as ``decision`` (``approve``, ``reject``, ...).
        label: the button text.
        style: ``primary`` for the expected action, ``danger`` for the one that
            stops the trace, ``neutral`` for the others.
        outcome: what the result page says after this decision: headline and detail.
        applies_edit: the decision carries the reviewer's edits of the payload.
        comment: ``none``, ``optional`` or ``required``: a free-text comment
            (feedback, an instruction) sent with the decision.
    """

    value: str
    label: str
    style: ChoiceStyle = "neutral"
    outcome: tuple[str, str] = ("Decided", "")
    applies_edit: bool = False
    comment: Literal["none", "optional", "required"] = "none"


@dataclass(frozen=True)
class EditableField:
    """A payload field a reviewer may change before approving.

    Attributes:
        name: the payload key.
        label: shown beside the input.
        kind: ``line`` (one line of text), ``text`` (multi-line), ``address``
            (exactly one email address) or ``addresses`` (comma-separated).
        max_chars: the longest value accepted.
        required: an empty value is refused.
    """

    name: str
    label: str
    kind: FieldKind = "line"
    max_chars: int = 20_000
    required: bool = False


@dataclass(frozen=True)
class PauseKind:
    """A kind of human (or customer) wait a graph declares.

    Attributes:
        name: the kind, as nodes name it in ``Pause(kind=...)``.
        title: the review page's heading.
        choices: the buttons, in order.
        editable: payload fields the reviewer may edit.
        waits_for: ``reviewer`` (the approval function resumes it) or
            ``customer`` (a reply in the email's thread resumes it, through ingest).
        description: one line for ``inboxflow graphs``.
    """

    name: str
    title: str
    choices: tuple[Choice, ...]
    editable: tuple[EditableField, ...] = ()
    waits_for: Literal["reviewer", "customer"] = "reviewer"
    description: str = ""

    def __post_init__(self) -> None:
        values = [choice.value for choice in self.choices]
        if len(set(values)) != len(values):
            raise ValueError(f"pause kind {self.name}: duplicate choices {values}")

    def choice(self, value: str) -> Choice | None:
        """The choice called ``value``, or None."""
        return next((c for c in self.choices if c.value == value), None)

    @property
    def values(self) -> tuple[str, ...]:
        """The decision values this kind accepts."""
        return tuple(choice.value for choice in self.choices)

    def field(self, name: str) -> EditableField | None:
        """The editable field called ``name``, or None."""
        return next((f for f in self.editable if f.name == name), None)


APPROVE_REJECT = PauseKind(
    "approve",
    "Approval needed",
    (
        Choice("approve", "Approve", "primary", ("Approved", "It goes ahead.")),
        Choice("reject", "Reject", "danger", ("Rejected", "It does not go ahead.")),
    ),
)
"""The kind used for a pause whose graph declares no kind of that name."""


def kind_of(pause_kinds: Mapping[str, PauseKind], name: str) -> PauseKind:
    """The declared kind ``name``, or the plain approve/reject kind."""
    return pause_kinds.get(name) or PauseKind(
        name, APPROVE_REJECT.title, APPROVE_REJECT.choices, description="undeclared kind"
    )


__all__ = [
    "APPROVE_REJECT",
    "Choice",
    "ChoiceStyle",
    "EditRejected",
    "EditableField",
    "FieldKind",
    "PauseKind",
    "kind_of",
]

"""What a node returns: a ``Step`` (a state update and where the trace goes next), or a
``Pause`` as its ``goto`` (docs/architecture.md §4, §6)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

END = "__end__"
"""Routing target that finishes the trace."""


TimeoutPolicy = Literal["escalate", "reject", "needs_review"]


@dataclass(frozen=True)
class Pause:
    """Stop the trace until a human (or a customer's reply) resumes it.

    Attributes:
        kind: what is being asked, e.g. ``approve_draft``; decides the choices offered.
        payload: what the reviewer approves (the draft); its hash binds the decision.
        resume_node: the node that runs with the decision.
        reviewers: email addresses of the reviewers.
        deadline_s: seconds from now until ``on_timeout`` applies.
        on_timeout: ``escalate``, ``reject`` or ``needs_review``.
        escalate_to: backup reviewers notified when ``on_timeout`` is ``escalate``.
        context: what the reviewer needs to see to decide (the email, why it
            waits); shown on the review page, not part of the approved payload.
    """

    kind: str
    payload: dict[str, Any]
    resume_node: str
    reviewers: tuple[str, ...] = ()
    deadline_s: float = 24 * 3600
    on_timeout: TimeoutPolicy = "needs_review"
    escalate_to: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """What a node returns: a state update and where the trace goes next.

    Attributes:
        update: top-level state fields to replace.
        goto: the next node's name, ``END``, or a ``Pause``.
        status: final status when ``goto`` is ``END`` (``done`` or ``rejected``).
    """

    update: Mapping[str, Any] = field(default_factory=dict)
    goto: str | Pause = END
    status: Literal["done", "rejected"] = "done"

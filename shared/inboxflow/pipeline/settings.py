"""Pipeline settings: who reviews drafts, whether auto-dispatch may send.

The composition root (``inboxflow.services``) reads them once into
``ctx.services["pipeline_settings"]``; a context built without them (a unit
test's) gets the defaults below.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..graph import TimeoutPolicy

AUTO_DISPATCH_CONFIDENCE = 0.8


@dataclass(frozen=True)
class PipelineSettings:
    """Tunables of the email pipeline.

    Attributes:
        reviewers: who approves drafts; empty means the mailbox owner.
        auto_send: dispatch sends replies instead of saving drafts (never for
            complaints, whatever this says).
        approval_deadline_s: how long a draft waits for a reviewer.
        approval_on_timeout: what a deadline does to an undecided draft:
            ``needs_review`` (default), ``reject``, or ``escalate`` to ``escalate_to``.
        escalate_to: backup reviewers for ``escalate``.
        calendar_days: business days ``check_calendar`` looks ahead.
    """

    reviewers: tuple[str, ...] = ()
    auto_send: bool = False
    approval_deadline_s: float = 24 * 3600
    approval_on_timeout: TimeoutPolicy = "needs_review"
    escalate_to: tuple[str, ...] = ()
    calendar_days: int = 5

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> PipelineSettings:
        """Settings from ``environ`` (default ``os.environ``).

        ``INBOXFLOW_REVIEWERS`` and ``INBOXFLOW_ESCALATE_TO`` (comma-separated),
        ``INBOXFLOW_AUTO_SEND``, ``INBOXFLOW_APPROVAL_DEADLINE_S``, ``INBOXFLOW_APPROVAL_ON_TIMEOUT``.
        """
        env = os.environ if environ is None else environ
        policy = env.get("INBOXFLOW_APPROVAL_ON_TIMEOUT", "needs_review")
        if policy not in ("needs_review", "reject", "escalate"):
            raise ValueError(
                f"INBOXFLOW_APPROVAL_ON_TIMEOUT={policy!r}: expected needs_review, reject or escalate"
            )
        return cls(
            reviewers=_addresses(env.get("INBOXFLOW_REVIEWERS", "")),
            auto_send=env.get("INBOXFLOW_AUTO_SEND", "").lower() in ("1", "true", "yes", "on"),
            approval_deadline_s=float(env.get("INBOXFLOW_APPROVAL_DEADLINE_S", 24 * 3600)),
            approval_on_timeout=policy,  # type: ignore[arg-type]
            escalate_to=_addresses(env.get("INBOXFLOW_ESCALATE_TO", "")),
        )


def _addresses(value: str) -> tuple[str, ...]:
    return tuple(r.strip() for r in value.split(",") if r.strip())


def pipeline_settings(services: Any) -> PipelineSettings:
    """The settings a node should use, given ``ctx.services``."""
    configured = services.get("pipeline_settings") if services else None
    return configured if isinstance(configured, PipelineSettings) else PipelineSettings()

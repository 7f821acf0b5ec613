"""Pipeline settings: who reviews drafts, whether auto-dispatch may send.

Nodes read them from ``ctx.services["pipeline_settings"]`` when the runtime
was given one, else from the environment (``INBOXFLOW_REVIEWERS``,
``INBOXFLOW_AUTO_SEND``), else the defaults below.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

AUTO_DISPATCH_CONFIDENCE = 0.8


@dataclass(frozen=True)
class PipelineSettings:
    """Tunables of the email pipeline.

    Attributes:
        reviewers: who approves drafts; empty means the mailbox owner.
        auto_send: dispatch sends replies instead of saving drafts (never for
            complaints, whatever this says).
        approval_deadline_s: how long a draft waits for a reviewer.
        calendar_days: business days ``check_calendar`` looks ahead.
    """

    reviewers: tuple[str, ...] = ()
    auto_send: bool = False
    approval_deadline_s: float = 24 * 3600
    calendar_days: int = 5

    @classmethod
    def from_env(cls) -> PipelineSettings:
        """Settings from ``INBOXFLOW_REVIEWERS`` (comma-separated) and ``INBOXFLOW_AUTO_SEND``."""
        reviewers = tuple(
            r.strip() for r in os.environ.get("INBOXFLOW_REVIEWERS", "").split(",") if r.strip()
        )
        auto_send = os.environ.get("INBOXFLOW_AUTO_SEND", "").lower() in ("1", "true", "yes", "on")
        return cls(reviewers=reviewers, auto_send=auto_send)


def pipeline_settings(services: Any) -> PipelineSettings:
    """The settings a node should use, given ``ctx.services``."""
    configured = services.get("pipeline_settings") if services else None
    if isinstance(configured, PipelineSettings):
        return configured
    return PipelineSettings.from_env()

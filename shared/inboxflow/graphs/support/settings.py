"""The support graph's settings (``inboxflow.yaml`` ``graphs: support:``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class SupportSettings(BaseModel):
    """How the support desk acts.

    Attributes:
        reviewers: who approves replies and is told about escalations (on call);
            empty: the mailbox the email arrived in.
        auto_respond_confidence: a reply goes out without review only at or above this.
        auto_send: send replies (True) or save them as Gmail drafts (False).
        approval_deadline_s: how long a reply waits for a reviewer.
    """

    model_config = ConfigDict(extra="forbid")

    reviewers: list[str] = Field(default_factory=list)
    auto_respond_confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    auto_send: bool = False
    approval_deadline_s: float = Field(default=24 * 3600, gt=0)


def support_settings(services: Any) -> SupportSettings:
    """The settings from ``services["config"]`` (defaults when there is no config)."""
    try:
        config = services["config"]
    except (KeyError, TypeError):
        return SupportSettings()
    return SupportSettings.model_validate(config.graph_settings("support") or {})

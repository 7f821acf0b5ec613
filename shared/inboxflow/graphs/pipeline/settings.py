"""Pipeline settings: who reviews drafts, whether auto-dispatch may send.

Set in ``inboxflow.yaml`` under ``graphs.pipeline`` (validated at start-up),
overridden per deployment by the environment (``INBOXFLOW_REVIEWERS``,
``INBOXFLOW_AUTO_SEND``, ...). The composition root (``inboxflow.services``)
reads them once into ``ports.graph_settings`` (``pipeline_settings(ctx.ports)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...engine.step import TimeoutPolicy

if TYPE_CHECKING:
    from ...ports.wired import Ports

AUTO_DISPATCH_CONFIDENCE = 0.8


class PipelineSettings(BaseModel):
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

    model_config = ConfigDict(extra="forbid", frozen=True)

    reviewers: tuple[str, ...] = ()
    auto_send: bool = False
    approval_deadline_s: float = Field(default=24 * 3600, gt=0)
    approval_on_timeout: TimeoutPolicy = "needs_review"
    escalate_to: tuple[str, ...] = ()
    calendar_days: int = Field(default=5, ge=1, le=30)

    @field_validator("reviewers", "escalate_to")
    @classmethod
    def _addresses_only(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for address in value:
            if "@" not in address or any(c.isspace() for c in address):
                raise ValueError(f"{address!r} is not an email address")
        return value

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str], base: Mapping[str, Any] | None = None
    ) -> PipelineSettings:
        """``base`` (the ``inboxflow.yaml`` values), with what ``environ`` sets on top.

        ``INBOXFLOW_REVIEWERS`` and ``INBOXFLOW_ESCALATE_TO`` (comma-separated),
        ``INBOXFLOW_AUTO_SEND``, ``INBOXFLOW_APPROVAL_DEADLINE_S``, ``INBOXFLOW_APPROVAL_ON_TIMEOUT``.

        Raises:
            ValueError: a value is not valid (the message names the variable).
        """
        env = environ
        values: dict[str, Any] = dict(base or {})
        readers: dict[str, tuple[str, Callable[[str], Any]]] = {
            "INBOXFLOW_REVIEWERS": ("reviewers", _addresses),
            "INBOXFLOW_ESCALATE_TO": ("escalate_to", _addresses),
            "INBOXFLOW_AUTO_SEND": ("auto_send", _flag),
            "INBOXFLOW_APPROVAL_DEADLINE_S": ("approval_deadline_s", float),
            "INBOXFLOW_APPROVAL_ON_TIMEOUT": ("approval_on_timeout", str.strip),
        }
        for variable, (name, read) in readers.items():
            raw = env.get(variable)
            if raw is None or raw == "":
                continue
            try:
                values[name] = read(raw)
            except ValueError as exc:
                raise ValueError(f"{variable}={raw!r}: {exc}") from None
        try:
            return cls.model_validate(values)
        except ValueError as exc:
            raise ValueError(f"pipeline settings: {exc}") from None


def _addresses(value: str) -> tuple[str, ...]:
    return tuple(r.strip() for r in value.split(",") if r.strip())


def _flag(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def pipeline_settings(ports: Ports) -> PipelineSettings:
    """The pipeline's settings among ``ports.graph_settings``."""
    return ports.graph_settings.of("pipeline", PipelineSettings)

"""The task queue port: HTTP calls scheduled for later (approval deadlines)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel, Field

from ..field_defaults import empty_dict


class ScheduledTask(BaseModel):
    """An HTTP POST of ``payload`` (JSON) to ``url`` at ``run_at``.

    ``name`` makes scheduling idempotent: a second task with the same name is
    not created. ``audience`` asks for an OIDC token for that audience.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,500}$")
    url: str
    payload: dict[str, Any] = Field(default_factory=empty_dict)
    run_at: float
    audience: str | None = None


class TaskQueue(ABC):
    """Schedules HTTP tasks."""

    @abstractmethod
    def schedule(self, task: ScheduledTask) -> bool:
        """Schedule a task. Returns False if a task with that name already exists."""

    @abstractmethod
    def cancel(self, name: str) -> bool:
        """Delete the pending task ``name`` so it never runs.

        Returns False when there was none to delete (run already, deleted, never
        scheduled, or a queue that cannot delete): callers treat cancelling as an
        optimisation, never as what a promise rests on.
        """

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release clients."""

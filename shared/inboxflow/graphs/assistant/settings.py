"""The assistant graph's settings (``inboxflow.yaml`` ``graphs: assistant:``)."""

from __future__ import annotations

from datetime import time
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

if TYPE_CHECKING:
    from ...ports.wired import Ports

HHMM = r"^([01]\d|2[0-3]):[0-5]\d$"


class AssistantSettings(BaseModel):
    """How the owner's assistant works.

    Attributes:
        owner_name: the owner's name, as the model is told (empty: the mailbox address).
        timezone: the owner's IANA time zone: working hours, meeting times and "today".
        working_hours_start: the first free minute of a working day (``HH:MM``, local).
        working_hours_end: the end of a working day (``HH:MM``, local), after the start.
        default_meeting_minutes: a meeting's length until the owner's edits teach another.
        max_iterations: model turns per email before the run stops.
        review_deadline_s: how long a notify or tool review waits for the owner.
        model: the model of the response agent's turns (None: the ``assistant`` Gemini
            role's, see ``gemini:`` in ``inboxflow.yaml``).
    """

    model_config = ConfigDict(extra="forbid")

    owner_name: str = Field(default="", max_length=200)
    timezone: str = "UTC"
    working_hours_start: str = Field(default="09:00", pattern=HHMM)
    working_hours_end: str = Field(default="17:00", pattern=HHMM)
    default_meeting_minutes: int = Field(default=30, ge=5, le=480)
    max_iterations: int = Field(default=8, ge=1, le=50)
    review_deadline_s: float = Field(default=7 * 24 * 3600, gt=0)
    model: str | None = Field(default=None, min_length=1)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not an IANA time zone (e.g. Europe/Prague)") from None
        return value

    @model_validator(mode="after")
    def _hours_in_order(self) -> AssistantSettings:
        if self.working_hours_end <= self.working_hours_start:
            raise ValueError(
                f"working_hours_end {self.working_hours_end} must be after "
                f"working_hours_start {self.working_hours_start}"
            )
        return self

    @property
    def zone(self) -> ZoneInfo:
        """The owner's time zone."""
        return ZoneInfo(self.timezone)

    @property
    def working_hours(self) -> tuple[time, time]:
        """Start and end of a working day, local time."""
        return time.fromisoformat(self.working_hours_start), time.fromisoformat(
            self.working_hours_end
        )


def assistant_settings(ports: Ports) -> AssistantSettings:
    """The assistant's settings among ``ports.graph_settings``."""
    return ports.graph_settings.of("assistant", AssistantSettings)

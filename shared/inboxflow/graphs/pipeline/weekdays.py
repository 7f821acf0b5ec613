"""The weekdays a sender can ask a meeting on, shared by the tasks and the tools.

Its own module so that ``tasks`` (imported by every model node of the pipeline)
does not import ``tools``: classify's first event would otherwise build the
tools' parameter models it never calls.
"""

from __future__ import annotations

from typing import Literal

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday"]
WEEKDAYS: tuple[Weekday, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday")

__all__ = ["WEEKDAYS", "Weekday"]

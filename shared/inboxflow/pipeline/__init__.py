"""The email pipeline graph (seed 000): state, nodes, tools and their LLM tasks.

Start a trace with ``runtime.start("pipeline", initial_state(email))``.
"""

from __future__ import annotations

from ..mail import Email
from .state import PipelineState


def initial_state(email: Email) -> PipelineState:
    """The state a pipeline trace starts from."""
    return PipelineState(email=email)


__all__ = ["PipelineState", "initial_state"]

"""The email pipeline graph (seed 000): state, nodes, tools and their LLM tasks.

Start a trace with ``runtime.start("pipeline", initial_state(email))``.

Importing the package imports nothing else: a node function that only needs
``pipeline.settings`` or the state model does not pay for the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...mail import Email
    from .state import PipelineState


def initial_state(email: Email) -> PipelineState:
    """The state a pipeline trace starts from."""
    from .state import PipelineState

    return PipelineState(email=email)


def __getattr__(name: str) -> Any:
    if name == "PipelineState":
        from .state import PipelineState

        return PipelineState
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PipelineState", "initial_state"]

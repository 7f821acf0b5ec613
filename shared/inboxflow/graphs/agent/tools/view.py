"""What a tool of the agent graph sees of its run (the email, the inquiry, the profile).

``agent_tools`` hands each call a context whose ``subject`` is an ``AgentView``;
tools read it with :func:`view_of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ....mail import Email
from ..state import AgentState, Inquiry

if TYPE_CHECKING:
    from ....engine.context import NodeContext


@dataclass
class AgentView:
    """The run a tool call belongs to.

    Attributes:
        state: the agent's state before this batch of calls.
        call_index: the position of this call in its turn (effect names use it).
    """

    state: AgentState
    call_index: int = 0

    @property
    def email(self) -> Email:
        """The email the run answers."""
        return Email.model_validate(self.state.email)

    @property
    def inquiry(self) -> Inquiry:
        """What the preprocessor made of it."""
        if self.state.inquiry is None:
            raise RuntimeError("the agent's tools run after preprocess")
        return self.state.inquiry


def view_of(ctx: NodeContext) -> AgentView:
    """The run the current tool call belongs to."""
    view = ctx.subject
    if not isinstance(view, AgentView):
        raise RuntimeError("this tool runs only inside the agent graph's agent_tools node")
    return view

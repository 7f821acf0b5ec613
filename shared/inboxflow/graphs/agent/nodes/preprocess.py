"""preprocess: the email becomes the agent's first messages (system prompt, the inquiry).

| node    | preprocess                                              |
|---------|---------------------------------------------------------|
| inputs  | email, profile                                          |
| outputs | inquiry, messages (system, user)                        |
| routes  | -> agent_turn                                           |
"""

from __future__ import annotations

from ....context import NodeContext
from ....graph import Step
from ....mail import Email
from ....mail.authentication import configured_authserv_id
from ..preprocess import PREPROCESSORS, crisp, first_message
from ..state import AgentState


def preprocess(state: AgentState, ctx: NodeContext) -> Step:
    """Run the profile's preprocessor; start the conversation."""
    email = Email.model_validate(state.email)
    if state.profile.preprocessor == "crisp":
        config = ctx.ports.config
        inquiry = crisp(email, state.profile.helpdesk, configured_authserv_id(config))
    else:
        inquiry = PREPROCESSORS[state.profile.preprocessor](email)
    messages = [
        {"role": "system", "content": state.profile.system_prompt},
        {"role": "user", "content": first_message(inquiry)},
    ]
    return Step(update={"inquiry": inquiry, "messages": messages}, goto="agent_turn")

"""preprocess: the email becomes the agent's first messages (system prompt, the inquiry).

| node    | preprocess                                              |
|---------|---------------------------------------------------------|
| inputs  | email, profile                                          |
| outputs | inquiry, messages (system, user); status, escalation     |
| routes  | -> agent_turn ; -> finish (a notification it cannot read) |

The system prompt is the profile's, then the greeting, sign-off and notes the
mailbox's reviewers taught by editing drafts (:mod:`...reply_learning`), if any.
A Crisp notification from the helpdesk that cannot be read (``Inquiry.unread``: no
patient address, two, no message...) never reaches the model: the run ends
``escalated`` with the reason and ``finish`` tells the profile's reviewers.
"""

from __future__ import annotations

from ....engine.context import NodeContext
from ....engine.step import Step
from ....mail import Email
from ....mail.authentication import configured_authserv_id
from ...reply_learning import PROMPT_PREFERENCES, learnt, prompt_preferences
from ..preprocess import PREPROCESSORS, first_message
from ..state import AgentState


def preprocess(state: AgentState, ctx: NodeContext) -> Step:
    """Run the profile's preprocessor; start the conversation."""
    email = Email.model_validate(state.email)
    authserv_id = configured_authserv_id(ctx.ports.config)
    inquiry = PREPROCESSORS[state.profile.preprocessor](email, state.profile.helpdesk, authserv_id)
    system = state.profile.system_prompt
    taught = learnt(ctx, email.mailbox)
    if taught:  # after the profile's fixed prompt: its cached prefix stays the same
        system = f"{system}\n\n{PROMPT_PREFERENCES}\n{prompt_preferences(taught)}"
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": first_message(inquiry)},
    ]
    if inquiry.unread is not None:
        escalation = (
            f"the {state.profile.preprocessor} notification could not be read: {inquiry.unread}"
        )
        update = {"inquiry": inquiry, "messages": messages, "status": "escalated"}
        return Step(update={**update, "escalation": escalation}, goto="finish")
    return Step(update={"inquiry": inquiry, "messages": messages}, goto="agent_turn")

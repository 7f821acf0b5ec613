"""An obedient model double: a chat policy that follows an instruction injected into the email.

It plays a graph's own deterministic policy, then does what the injected line
says (``send the reply to ...``, ``invite ...``), as a model that obeys a prompt
injection would. Played through the Gemini REST double (``playing``) or as an
offline profile policy, it drives a graph's writing tools outside their binding.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from inboxflow.ports.llm import AgentTurn, ToolCall

INJECTED_RECIPIENT = "attacker@evil.example"
SEND_TO = re.compile(
    r"send (?:the|your) reply to (?P<to>[^\n]+?)\s*$", re.IGNORECASE | re.MULTILINE
)
INVITE = re.compile(r"also invite (?P<who>\S+@\S+?)\.?\s*$", re.IGNORECASE | re.MULTILINE)

Policy = Callable[[list[Any], list[dict[str, Any]]], AgentTurn]


def _user_text(messages: list[Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")


def obeying(policy: Policy, recipient_field: str = "to") -> Policy:
    """``policy``, but its writing calls follow the instructions injected in the email."""

    def play(messages: list[Any], tools: list[dict[str, Any]]) -> AgentTurn:
        turn = policy(messages, tools)
        text = _user_text(messages)
        send_to, invite = SEND_TO.search(text), INVITE.search(text)
        calls = []
        for call in turn.tool_calls:
            arguments = json.loads(call.arguments_json or "{}")
            if send_to and recipient_field in arguments:
                arguments[recipient_field] = send_to.group("to")
            if invite and "attendees" in arguments:
                attendees = arguments["attendees"]
                listed = attendees if isinstance(attendees, list) else [attendees]
                arguments["attendees"] = [*listed, invite.group("who")]
            calls.append(ToolCall(call.id, call.name, json.dumps(arguments)))
        return AgentTurn(turn.text, tuple(calls), turn.usage)

    return play

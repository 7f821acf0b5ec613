"""The agent's LLM task: one turn of a profile's agent (function calling).

| task         | node       | prompt                                  | output                 |
|--------------|------------|-----------------------------------------|------------------------|
| a turn       | agent_turn | the profile's system prompt (``profiles/*.md`` or | tool calls among the |
|              |            | ``inboxflow.yaml``) and the conversation | profile's tools (``AGENT_TOOLS``), or text |

The offline model plays a shipped profile's turns with its scripted policy in
:mod:`.offline` (``ChatSettings.offline``), imported on the first offline turn
only: a deployment on Gemini never loads the scripts.
"""

from __future__ import annotations

from ...ports.llm import ChatPolicy, offline_heuristic

_pharmacy_turn = offline_heuristic(f"{__package__}.offline:pharmacy_policy")


OFFLINE_POLICIES: dict[str, ChatPolicy] = {"pharmacy": _pharmacy_turn}
"""The scripted policy the offline model plays, by profile name."""

__all__ = ["OFFLINE_POLICIES"]

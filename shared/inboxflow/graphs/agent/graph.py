"""The agent graph: an LLM agent with the tools of its profile, in a checkpointed loop.

    preprocess -> agent_turn --(tool calls)--> agent_tools --> agent_turn ...
                      |                            |
                      +--(no calls, error, max)--> finish --> END
                                                   ^
                       agent_tools --(escalate, max)--+

Each turn and each tool batch is one step (one Cloud Function call): a crash
in turn 6 resumes at turn 6. The profile (``inboxflow.yaml`` ``profiles:``)
picks the model, the prompt, the tools and the preprocessor.
"""

from __future__ import annotations

from pathlib import Path

from ...graph import END, Graph, Node
from .nodes.finish import finish
from .nodes.preprocess import preprocess
from .nodes.tools import agent_tools
from .nodes.turn import agent_turn
from .state import AgentState
from .summary import initial_state, summary
from .tools import AGENT_TOOLS

AGENT = Graph.build(
    "agent",
    "preprocess",
    AgentState,
    [
        Node(
            "preprocess",
            preprocess,
            routes=("agent_turn",),
            memory_mb=256,
            timeout_s=30,
            description="The profile's preprocessor (default, crisp): the agent's first message.",
        ),
        Node(
            "agent_turn",
            agent_turn,
            routes=("agent_tools", "finish"),
            uses_llm=True,
            timeout_s=120,
            description="One LLM call with the profile's tools.",
        ),
        Node(
            "agent_tools",
            agent_tools,
            routes=("agent_turn", "finish"),
            uses_llm=True,
            uses_gmail=True,
            tools=tuple(AGENT_TOOLS.names()),
            description="Run the turn's tool calls; side effects once, through the journal.",
        ),
        Node(
            "finish",
            finish,
            routes=(END,),
            uses_gmail=True,
            notifies=True,
            memory_mb=256,
            description="Audit records; done, or needs_review (escalated, error, max turns).",
        ),
    ],
    description="Tool-using agent: a profile's model and tools in a multi-turn loop.",
    tools=AGENT_TOOLS,
    initial_state=initial_state,
    summary=summary,
    samples=Path(__file__).resolve().parent / "samples" / "inbox",
    takes_profile=True,
)

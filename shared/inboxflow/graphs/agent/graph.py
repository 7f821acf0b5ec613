"""The agent graph: an LLM agent with the tools of its profile, in a checkpointed loop.

    preprocess -> agent_turn --(tool calls)--> agent_tools --> agent_turn ...
        |             |                            |
        |             +--(no calls, error, max)--> finish --> END
        |                                          ^  ^
        |              agent_tools --(escalate, max)--+  |
        +--(a Crisp notification it cannot read)---------+

A profile's ``escalate_on`` (medical advice, complaints) is kept by the
``escalation_cues`` guard on ``agent_turn`` (``guards.py``), whatever the model says.

Each turn and each tool batch is one step (one Cloud Function call): a crash
in turn 6 resumes at turn 6. The profile (``inboxflow.yaml`` ``profiles:``)
picks the model, the prompt, the tools and the preprocessor.
"""

from __future__ import annotations

from pathlib import Path

from ...engine.graph import Graph, Node, lazy
from ...engine.guards import Guard
from ...engine.step import END
from . import outcome
from .drugs import DRUGS
from .state import AgentState
from .summary import initial_state, summary
from .web_search import WEB_SEARCH

NODES = "inboxflow.graphs.agent.nodes"
TOOLS = (
    "create_draft",
    "escalate",
    "manage_reservation",
    "search_drugs",
    "send_reply",
    "web_search",
)
"""The agent tools (``AGENT_TOOLS``' names; checked against it when it is imported)."""

AGENT = Graph.build(
    "agent",
    "preprocess",
    AgentState,
    [
        Node(
            "preprocess",
            lazy(f"{NODES}.preprocess:preprocess"),
            ports=("config",),
            routes=("agent_turn", "finish"),
            uses_llm=True,  # the safety screen
            memory_mb=256,
            timeout_s=60,  # the task role's deadline (55 s, all attempts)
            guards=(Guard("safety_screen", "inboxflow.graphs.agent.guards:safety_screen"),),
            description="The profile's preprocessor (default, crisp): the agent's first message.",
        ),
        Node(
            "agent_turn",
            lazy(f"{NODES}.turn:agent_turn"),
            routes=("agent_tools", "finish"),
            uses_llm=True,
            timeout_s=120,
            description="One LLM call with the profile's tools.",
            guards=(Guard("escalation_cues", "inboxflow.graphs.agent.guards:escalation_cues"),),
        ),
        Node(
            "agent_tools",
            lazy(f"{NODES}.tools:agent_tools"),
            ports=("config", "workspace"),
            services=(DRUGS.name, WEB_SEARCH.name),
            routes=("agent_turn", "finish"),
            uses_llm=True,
            uses_gmail=True,
            tools=TOOLS,
            description="Run the turn's tool calls; side effects once, through the journal.",
        ),
        Node(
            "finish",
            lazy(f"{NODES}.finish:finish"),
            ports=("approvals",),
            routes=(END,),
            uses_gmail=True,
            notifies=True,
            memory_mb=256,
            description="Audit records; done, or needs_review (escalated, error, max turns).",
        ),
    ],
    description="Tool-using agent: a profile's model and tools in a multi-turn loop.",
    tools="inboxflow.graphs.agent.tools:AGENT_TOOLS",
    initial_state=initial_state,
    summary=summary,
    outcome=outcome.outcome,
    outcome_fields=outcome.FIELDS,
    samples=Path(__file__).resolve().parent / "samples" / "inbox",
    takes_profile=True,
    services=(DRUGS, WEB_SEARCH),
)

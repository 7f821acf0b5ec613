"""The assistant graph: triage, ask the owner when unsure, answer with reviewed tools, learn.

    triage_router --ignore--> END
         |  +--notify--> triage_notify (pause: respond / ignore) --ignore--> END
         |                      | respond (+ instruction)
         +--respond--------> llm_call <--> tool_review (pause: accept / edit / ignore / respond)
                                |               | Done
                                +--(no calls)--> mark_as_read --> END

Every LLM turn, tool run and pause is its own step. The owner's decisions
update the mailbox's preference memory (``inboxflow.memory``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...engine.graph import Graph, Node, StartContext, lazy
from ...engine.guards import Guard
from ...engine.step import END
from . import outcome
from .pauses import NOTIFY_KIND, TOOL_REVIEW_KIND
from .settings import AssistantSettings
from .state import AssistantState
from .summary import summary

PACKAGE = "inboxflow.graphs.assistant"
TOOLS = ("Done", "Question", "check_calendar_availability", "schedule_meeting", "write_email")
"""The assistant's tools (``ASSISTANT_TOOLS``' names; checked against it when it is imported)."""


def initial_state(email: Mapping[str, Any], start: StartContext) -> Mapping[str, Any]:
    """The email and whose assistant runs (the mailbox it arrived in)."""
    mailbox = start.mailbox or str(email.get("mailbox") or "")
    if not mailbox:
        raise ValueError("the assistant needs the mailbox the email arrived in")
    return {"email": dict(email), "mailbox": mailbox.lower()}


ASSISTANT = Graph.build(
    "assistant",
    "triage_router",
    AssistantState,
    [
        Node(
            "triage_router",
            lazy(f"{PACKAGE}.nodes.triage:triage_router"),
            ports=("config",),  # the guards read the authserv-id
            routes=(END, "triage_notify", "llm_call"),
            uses_llm=True,
            memory_mb=256,
            guards=(
                Guard("safety_screen", f"{PACKAGE}.guards:safety_screen"),
                Guard("impostor_money", f"{PACKAGE}.guards:impostor_money"),
                Guard("thanks_not_answered", f"{PACKAGE}.guards:thanks_not_answered"),
                Guard("screen_floor", f"{PACKAGE}.guards:screen_floor"),
            ),
            description="Triage with the owner's preferences: ignore, notify or respond.",
        ),
        Node(
            "triage_notify",
            lazy(f"{PACKAGE}.nodes.triage:triage_notify"),
            routes=("triage_notify", "llm_call", END),
            pauses=True,
            uses_llm=True,
            memory_mb=256,
            description="Ask the owner (respond / ignore); learn from the choice.",
        ),
        Node(
            "llm_call",
            lazy(f"{PACKAGE}.nodes.agent:llm_call"),
            routes=("tool_review", "mark_as_read", END),
            uses_llm=True,
            timeout_s=120,
            description="One model turn with the assistant's tools and the owner's preferences.",
        ),
        Node(
            "tool_review",
            lazy(f"{PACKAGE}.nodes.agent:tool_review"),
            ports=("workspace",),
            routes=("tool_review", "llm_call", "mark_as_read", END),
            pauses=True,
            uses_llm=True,
            uses_gmail=True,
            tools=TOOLS,
            description="Review (or run) one tool call; mail and events once, via the journal.",
        ),
        Node(
            "mark_as_read",
            lazy(f"{PACKAGE}.nodes.agent:mark_as_read"),
            ports=("workspace",),
            routes=(END,),
            uses_gmail=True,
            memory_mb=256,
            timeout_s=30,
            description="Mark the email read, once.",
        ),
    ],
    description="Personal assistant: triage, reviewed tool loop, preferences learnt from feedback.",
    tools=f"{PACKAGE}.tools:ASSISTANT_TOOLS",
    pause_kinds=[NOTIFY_KIND, TOOL_REVIEW_KIND],
    initial_state=initial_state,
    summary=summary,
    outcome=outcome.outcome,
    outcome_fields=outcome.FIELDS,
    settings_model=AssistantSettings,
    samples=Path(__file__).resolve().parent / "samples",
)
"""The assistant graph's declaration."""

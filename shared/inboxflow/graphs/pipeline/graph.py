"""The email pipeline of the first seed design, as a graph declaration.

    classify --(spam, confidence >= 0.8; or no reply needed)--> END
        |      guards (guards.py): complaint cues, look-alike senders, forwards -> a flag,
        |      and every flagged draft waits for a person at review
        |
    retrieve -> decide --(no tools)--> generate
                  |                       ^
                  +--> execute_tools -----+
    generate -> review --(confidence >= 0.8, not a complaint)--> dispatch -> END
                  |
                  +--(otherwise)--> Pause(approve_draft) ... resume --> dispatch -> END

dispatch writes nothing to a recipient loop protection forbids: END (rejected).
Each node is one Cloud Function; sizing below is per function (``Node``'s defaults,
512 MB and 60 s, where a node names none).
"""

from __future__ import annotations

from ...engine.graph import Graph, Node, lazy
from ...engine.guards import Guard
from ...engine.step import END
from . import outcome
from .pauses import APPROVE_DRAFT_KIND
from .settings import PipelineSettings
from .state import PipelineState
from .summary import initial_state, summary

NODES = "inboxflow.graphs.pipeline.nodes"
GUARDS = "inboxflow.graphs.pipeline.guards"

ACTION_TOOLS = ("create_draft", "send_email", "mark_as_read", "schedule_meeting")
READ_TOOLS = ("get_contact", "check_calendar")

PIPELINE = Graph.build(
    "pipeline",
    "classify",
    PipelineState,
    [
        Node(
            "classify",
            lazy(f"{NODES}.classify:classify"),
            routes=("retrieve", END),
            uses_llm=True,
            description=(
                "Classify with a calibrated confidence; confident spam and courtesy "
                "messages with nothing to answer end here."
            ),
            guards=(
                Guard("safety_screen", f"{GUARDS}:safety_screen"),
                Guard("complaint_review", f"{GUARDS}:complaint_review"),
                Guard("lookalike_sender", f"{GUARDS}:lookalike_sender"),
                Guard("forwarded_review", f"{GUARDS}:forwarded_review"),
                Guard("screen_review", f"{GUARDS}:screen_review"),
            ),
        ),
        Node(
            "retrieve",
            lazy(f"{NODES}.retrieve:retrieve"),
            ports=("embedder", "vectors", "workspace"),
            routes=("decide",),
            uses_llm=True,
            uses_gmail=True,
            uses_calendar=True,  # the owner's coming events (list_events)
            memory_mb=256,
            timeout_s=30,
            description="Known sender?, the signer, saved replies that match.",
        ),
        Node(
            "decide",
            lazy(f"{NODES}.decide:decide"),
            routes=("execute_tools", "generate"),
            uses_llm=True,
            description="Choose the tools by the tool rules.",
        ),
        Node(
            "execute_tools",
            lazy(f"{NODES}.execute_tools:execute_tools"),
            ports=("workspace",),
            routes=("generate",),
            uses_gmail=True,
            tools=READ_TOOLS + ACTION_TOOLS,
            memory_mb=256,
            description="Run the read tools; plan the action tools.",
        ),
        Node(
            "generate",
            lazy(f"{NODES}.generate:generate"),
            routes=("review",),
            uses_llm=True,
            timeout_s=120,
            description="Write the reply in the category's tone.",
        ),
        Node(
            "review",
            lazy(f"{NODES}.review:review"),
            ports=("config", "workspace"),  # the no-relay rule: authserv-id, sent mail
            routes=("dispatch",),
            memory_mb=256,
            timeout_s=30,
            pauses=True,
            uses_gmail=True,
            description="Auto-dispatch a confident draft; pause the rest for approval.",
        ),
        Node(
            "dispatch",
            lazy(f"{NODES}.dispatch:dispatch"),
            ports=("config", "workspace"),
            routes=(END,),
            uses_gmail=True,
            uses_llm=True,  # a reviewer's edit or comment teaches the drafts (reply_learning)
            tools=ACTION_TOOLS,
            memory_mb=256,
            max_instances=10,
            description=(
                "Create the draft (or send) exactly once through the effect journal; "
                "never to a recipient loop protection forbids."
            ),
        ),
    ],
    description="Seed 000: classify, retrieve, decide, execute tools, generate, review, dispatch.",
    tools="inboxflow.graphs.pipeline.tools:pipeline_tools",
    pause_kinds=[APPROVE_DRAFT_KIND],
    initial_state=initial_state,
    summary=summary,
    outcome=outcome.outcome,
    outcome_fields=outcome.FIELDS,
    settings_model=PipelineSettings,
)

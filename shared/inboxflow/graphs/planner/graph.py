"""The planner graph (``route: planner``): a quote built over several emails with the customer.

    planner --(tool the policy or model wants reviewed)--> agency_review (pause)
       ^  |                                                   | approve      | edit / reject
       |  +--(tool)--> tools <--------------------------------+              |
       |  |              | (request_human_review: END needs_review)          |
       +--+--------------+---------------------------------------------------+
       |  +--(wait)--> wait_customer (pause customer_reply: reminder, give up)
       +-------------------+  (the customer replied)
    planner --(finish)--> END

The worked example is a personal auto (PPA) insurance quote through the
quoting service (``quoting.py``): open it, add the driver and the vehicle,
rate it, send the customer the summary; ask the customer for what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...engine.graph import Graph, Node, StartContext, lazy
from ...engine.guards import Guard
from ...engine.step import END
from . import outcome
from .pauses import AGENCY_REVIEW, CUSTOMER_REPLY
from .quoting import QUOTING
from .settings import PlannerSettings
from .state import PlannerState
from .summary import summary

PACKAGE = "inboxflow.graphs.planner"
NODES = f"{PACKAGE}.nodes"
TOOLS = (
    "add_driver",
    "add_vehicle",
    "ask_customer",
    "get_rate",
    "prepare_final_summary",
    "quote_initiate",
    "request_human_review",
)
"""The planner's tools (``PLANNER_TOOLS``' names; checked against it when it is imported)."""

SAMPLES = Path(__file__).resolve().parent / "samples"
GOAL = "Prepare a personal auto insurance quote for the customer and send them its summary."


def initial_state(email: Mapping[str, Any], start: StartContext) -> Mapping[str, Any]:
    """The email, the goal, and the email as the first customer message."""
    from ...mail import Email
    from .conversation import customer_message

    parsed = Email.model_validate(dict(email))
    first = customer_message(parsed)
    seen = [parsed.gmail_id] if parsed.gmail_id else []
    return {
        "email": dict(email),
        "goal": GOAL,
        "messages": [first.model_dump()],
        "seen_reply_ids": seen,
    }


PLANNER = Graph.build(
    "planner",
    "planner",
    PlannerState,
    [
        Node(
            "planner",
            lazy(f"{NODES}.planner:planner"),
            ports=("config",),  # the no-relay rule reads the authserv-id
            routes=("tools", "agency_review", "wait_customer", END),
            uses_llm=True,
            timeout_s=120,
            guards=(
                Guard("safety_screen", f"{PACKAGE}.guards:safety_screen"),
                Guard("not_a_quote", f"{PACKAGE}.guards:not_a_quote_goes_to_the_agency"),
            ),
            description="Read the state (agency feedback first); plan the next action; review policy.",
        ),
        Node(
            "agency_review",
            lazy(f"{NODES}.review:agency_review"),
            routes=("agency_review", "tools", "planner"),
            pauses=True,
            uses_llm=True,  # an edited email or a comment teaches the drafts (reply_learning)
            memory_mb=256,
            description="The agency approves, edits or rejects the planned action.",
        ),
        Node(
            "tools",
            lazy(f"{NODES}.tools:tools"),
            ports=("approvals", "workspace"),
            services=(QUOTING.name,),
            routes=("planner",),
            uses_gmail=True,
            notifies=True,  # request_human_review tells the agency's reviewers
            tools=TOOLS,
            description="Run the plan once (quoting API, emails to the customer); status contract.",
        ),
        Node(
            "wait_customer",
            lazy(f"{NODES}.wait:wait_customer"),
            ports=("workspace",),
            routes=("wait_customer", "planner"),
            pauses=True,
            uses_gmail=True,
            memory_mb=256,
            description="Wait for the customer's reply in the thread; remind once; then needs_review.",
        ),
    ],
    description="Planner: a quote over email with the customer, agency reviews, customer waits.",
    tools="inboxflow.graphs.planner.tools:PLANNER_TOOLS",
    pause_kinds=[AGENCY_REVIEW, CUSTOMER_REPLY],
    initial_state=initial_state,
    summary=summary,
    outcome=outcome.outcome,
    outcome_fields=outcome.FIELDS,
    settings_model=PlannerSettings,
    samples=SAMPLES,
    queues_thread_replies=True,
    services=(QUOTING,),
)
"""The planner graph's declaration."""

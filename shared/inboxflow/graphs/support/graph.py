"""The support-desk graph (``route: support``).

    intake (customer from the CRM, or a free-plan guest; the ticket)
      |
    translator -> supervisor --(requires_escalation)--> escalate --+
                  [guards: urgency_rules, escalate_at_once]        |
                      |                                           |
                      +--> billing | technical | general -------> act --> END
                                                                   |
      [guard: reply_needs_person]
                          (not confident, critical, or a guard's review reasons)
                          Pause(approve_support_reply) -> act

Every trace works on one ticket, ``tickets/{customer_id}:{ticket_id}``; its
summary carries that tag.
"""

from __future__ import annotations

from pathlib import Path

from ...engine.graph import Graph, Node, lazy
from ...engine.guards import Guard
from ...engine.step import END
from . import outcome
from .crm import CUSTOMERS
from .pauses import APPROVE_SUPPORT_REPLY
from .settings import SupportSettings
from .state import SupportState
from .summary import summary
from .tasks import IssueType

SAMPLES = Path(__file__).resolve().parent / "samples" / "inbox"
"""The sample support inbox. Not ``Graph.samples``: ``inboxflow demo`` routes graph samples by
``inboxflow.yaml``, where no active rule sends mail to ``support`` yet (they would go to the
pipeline); run them with ``inboxflow run --graph support``."""
SPECIALISTS: tuple[IssueType, ...] = ("billing", "technical", "general")
NODES = "inboxflow.graphs.support.nodes"
GUARDS = "inboxflow.graphs.support.guards"


SUPPORT = Graph.build(
    "support",
    "intake",
    SupportState,
    [
        Node(
            "intake",
            lazy(f"{NODES}.intake:intake"),
            ports=("config",),  # config: the authserv-id whose verdict counts
            services=(CUSTOMERS.name,),
            routes=("translator",),
            uses_llm=True,
            timeout_s=60,
            tools=("open_ticket",),
            guards=(Guard("safety_screen", f"{GUARDS}:safety_screen"),),
            description="Customer from the CRM; the ticket (thread, matcher, or a new one).",
        ),
        Node(
            "translator",
            lazy(f"{NODES}.agents:translator"),
            routes=("supervisor",),
            uses_llm=True,
            timeout_s=120,
            description="Detect the language; translate non-English messages for the agents.",
        ),
        Node(
            "supervisor",
            lazy(f"{NODES}.agents:supervisor"),
            routes=("escalate", *SPECIALISTS),
            uses_llm=True,
            guards=(
                Guard("urgency_rules", f"{GUARDS}:urgency_rules"),
                Guard("escalate_at_once", f"{GUARDS}:escalate_at_once"),
                Guard("screen_floor", f"{GUARDS}:screen_floor"),
            ),
            description="Urgency, type, escalation; the seed's urgency rules over the model.",
        ),
        *(
            Node(
                name,
                lazy(f"{NODES}.agents:{name}"),
                ports=("embedder", "vectors"),
                routes=("act",),
                uses_llm=True,
                timeout_s=120,
                guards=(Guard("reply_needs_person", f"{GUARDS}:reply_needs_person"),),
                description=f"The {name} specialist: KB articles, then a triage result.",
            )
            for name in SPECIALISTS
        ),
        Node(
            "escalate",
            lazy(f"{NODES}.agents:escalate"),
            routes=("act",),
            memory_mb=256,
            description="escalate_human without a specialist.",
        ),
        Node(
            "act",
            lazy(f"{NODES}.act:act"),
            ports=("approvals", "config", "workspace"),
            routes=("act", END),
            pauses=True,
            uses_gmail=True,
            uses_llm=True,  # a reviewer's edit or comment teaches the drafts (reply_learning)
            memory_mb=256,
            tools=("reply_to_customer",),
            description="Reply (approval policy, exactly once), notify on call, or queue.",
        ),
    ],
    description="Support triage: tickets, translator, supervisor, specialists, act.",
    pause_kinds=[APPROVE_SUPPORT_REPLY],
    summary=summary,
    outcome=outcome.outcome,
    outcome_fields=outcome.FIELDS,
    settings_model=SupportSettings,
    tools="inboxflow.graphs.support.tools:SUPPORT_TOOLS",
    samples=Path(__file__).resolve().parent / "samples" / "inbox",
    services=(CUSTOMERS,),
)

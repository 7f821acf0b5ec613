"""One person's mail through all five graphs (and another person's beside it), on one store.

The person writes to the pipeline (a complaint: a pending review), the
assistant (the owner ignores it: a memory update), support (a ticket), the
pharmacy agent (through the Crisp form: a reservation) and the planner (a
quote: a pending agency review). Every subject and body carries ``SUBJECT_MARK``
or ``BODY_MARK``, so what is left of their mail anywhere can be searched for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.clock import FakeClock
from inboxflow.engine.runtime import Runtime
from inboxflow.graphs.planner.settings import PlannerSettings
from inboxflow.knowledge import knowledge_base_for, seed_knowledge
from inboxflow.mail import Email, load_email_file
from inboxflow.ports.checkpoint import CheckpointStore
from inboxflow.routing import RouteDecision
from inboxflow.schema import COLLECTIONS
from inboxflow.start import start_email_trace
from tests.harness import agent, assistant, planner, support
from tests.harness.runtimes import runtime_for

PERSON = "jana.novakova@seznam.cz"
"""The person (the Crisp sample's customer, so the pharmacy form names them too)."""
OTHER = "omar.haddad@example.net"
SUBJECT_MARK = "Quokka-7731"
BODY_MARK = "periwinkle-harmonica-0419"
PIPELINE_SAMPLES = Path(__file__).parents[2] / "shared/inboxflow/graphs/pipeline/samples/inbox"


def build(tmp_path: Path, store: CheckpointStore) -> Runtime:
    """An embedded runtime on ``store`` serving every graph, the KB seeded."""
    from inboxflow.adapters.store_workspace import StoreWorkspace

    bus = InProcessBus(clock=FakeClock())
    runtime = runtime_for(
        tmp_path, clock=bus.clock, store=store, bus=bus, workspace=StoreWorkspace(store, bus.clock)
    )
    runtime.ports.graph_settings.use("planner", PlannerSettings(reviewers=[planner.AGENCY]))
    seed_knowledge(knowledge_base_for(runtime.ports))
    return runtime


def _from(email: Email, address: str, mark: bool = True) -> Email:
    changes: dict[str, Any] = {"sender": email.sender.model_copy(update={"address": address})}
    if mark:
        changes["subject"] = f"{email.subject} {SUBJECT_MARK}"
        changes["body_text"] = f"{email.body_text}\n{BODY_MARK}\n"
    return email.model_copy(update=changes)


def _start(runtime: Runtime, graph: str, email: Email, profile: str | None = None) -> str:
    decision = RouteDecision(graph, profile, "test", mailbox=email.mailbox)
    trace_id = start_email_trace(runtime, email, decision).trace_id
    runtime.bus.drain()  # type: ignore[attr-defined]
    return trace_id


def person_mail(runtime: Runtime) -> dict[str, str]:
    """The person's five emails, each through its graph; their trace ids by graph."""
    complaint = load_email_file(next(PIPELINE_SAMPLES.glob("04-*")))
    crisp = agent.sample("21")
    crisp = crisp.model_copy(
        update={
            "subject": f"{crisp.subject} {SUBJECT_MARK}",
            "body_text": crisp.body_text.replace("Děkuji", f"{BODY_MARK}\nDěkuji"),
        }
    )
    traces = {
        "pipeline": _start(runtime, "pipeline", _from(complaint, PERSON)),
        "assistant": _start(runtime, "assistant", _from(assistant.sample("32"), PERSON)),
        "support": _start(
            runtime,
            "support",
            support.email(
                PERSON,
                f"Sync keeps failing {SUBJECT_MARK}",
                f"Hello, my sync keeps failing since Monday. {BODY_MARK}\nJana",
                "support-jana-1@seznam.cz",
            ),
        ),
        "agent": _start(runtime, "agent", crisp, "pharmacy"),
        "planner": _start(runtime, "planner", _from(planner.sample("42"), PERSON)),
    }
    assistant.decide(runtime, traces["assistant"], "ignore")
    return traces


def other_mail(runtime: Runtime) -> dict[str, str]:
    """Another person's mail: a support question, a pipeline complaint, and a complaint near
    the person's (``retrieving``: its retrieval copies the person's email into its state)."""
    complaint = load_email_file(next(PIPELINE_SAMPLES.glob("15-*")))
    near = load_email_file(next(PIPELINE_SAMPLES.glob("05-*")))
    return {
        "support": _start(
            runtime,
            "support",
            support.email(
                OTHER, "How do I export to PDF?", "Where is the PDF export?", "omar-1@example.net"
            ),
        ),
        "pipeline": _start(runtime, "pipeline", _from(complaint, OTHER, mark=False)),
        "retrieving": _start(runtime, "pipeline", _from(near, OTHER, mark=False)),
    }


def every_document(runtime: Runtime) -> dict[str, dict[str, Any]]:
    """Every stored document of every declared collection, by path (vectors without vectors)."""
    store, vectors = runtime.ports.documents, runtime.ports.vectors
    found: dict[str, dict[str, Any]] = {}
    for collection in COLLECTIONS:
        if collection.parent is not None:
            continue
        rows = (
            vectors.documents(collection.name)
            if collection.vector_indexes
            else store.list(collection.name)
        )
        for doc_id, doc in rows:
            path = f"{collection.name}/{doc_id}"
            found[path] = doc
            for child in COLLECTIONS:
                if child.parent == collection.name:
                    for child_id, child_doc in store.list(f"{path}/{child.name}"):
                        found[f"{path}/{child.name}/{child_id}"] = child_doc
    return found

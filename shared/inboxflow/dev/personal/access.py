"""An access request's answer: everything held about a person as one JSON document.

``emails``: the person's emails (each trace's email, and replies queued on a
trace); ``decisions``: what the agents decided on each trace (graph, status,
route, the state without the email, each step's routing, tool calls and
changes) and the approvals asked of people; ``sent``: what was written to
them (sent mail, drafts, notifications); ``records``: every document about
them, by collection, with what it was found by; ``mentioned``: where other
people's records mention them, only the parts that do (the rest is theirs).
Other people's mail copied into their own documents (the retrieval's similar
emails) is likewise cut to what of it is theirs.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from ...personal.finder import Held, Holdings
from ...personal.matching import Identifiers, mentioning, without_others
from ...ports import inline_log
from ...schema import (
    APPROVALS,
    MAILBOX_DRAFTS,
    MAILBOX_SENT,
    OUTBOX,
    STEPS,
    TRACE_REPLIES,
    TRACES,
)

STEP_FIELDS = ("step_name", "routed_to", "output_delta", "output_patch", "tool_calls", "guards")
"""What each step shows of itself in ``decisions``."""


def access_document(holdings: Holdings, generated_at: float) -> dict[str, Any]:
    """The JSON-compatible access document of ``holdings``.

    Their own documents are given as held, but for other people's records copied into them
    (``PersonalData.others``: another person's email the retrieval found near theirs): of
    those, only what is theirs (``without_others``).
    """
    person = holdings.person
    holdings = Holdings(
        person,
        [replace(h, doc=_own(h, person)) for h in holdings.held],
        holdings.mentions,
    )
    steps = _steps(holdings)
    emails = [
        {"trace_id": h.doc_id, **dict(h.doc["state"]["email"])}
        for h in holdings.of(TRACES)
        if isinstance(h.doc.get("state", {}).get("email"), dict)
    ]
    emails += [
        {"trace_id": h.doc.get("trace_id"), **dict(h.doc["email"])}
        for h in holdings.of(TRACE_REPLIES)
        if isinstance(h.doc.get("email"), dict)
    ]
    decisions = [
        {
            "trace_id": h.doc_id,
            "graph": h.doc.get("graph"),
            "status": h.doc.get("status"),
            "route": h.doc.get("route"),
            "error": h.doc.get("error"),
            "state": {k: v for k, v in (h.doc.get("state") or {}).items() if k != "email"},
            "steps": steps.get(h.path, []),
        }
        for h in holdings.of(TRACES)
    ]
    approvals = [
        {
            "approval_id": h.doc_id,
            **{
                name: h.doc.get(name)
                for name in ("trace_id", "kind", "status", "payload", "decision", "decided_by")
            },
        }
        for h in holdings.of(APPROVALS)
    ]
    sent = [
        {"collection": h.collection.name, "id": h.doc_id, **h.doc}
        for collection in (MAILBOX_SENT, MAILBOX_DRAFTS, OUTBOX)
        for h in holdings.of(collection)
    ]
    return {
        "address": person.address,
        "generated_at": datetime.fromtimestamp(generated_at, UTC).isoformat(),
        "identifiers": person.as_json(),
        "counts": holdings.counts(),
        "emails": emails,
        "decisions": decisions,
        "approvals": approvals,
        "sent": sent,
        "records": {
            name: [
                {"path": h.path, "found_by": list(h.matched), "document": h.doc}
                for h in holdings.held
                if h.collection.name == name
            ]
            for name in holdings.counts()
        },
        "mentioned": {
            name: [
                {
                    "path": h.path,
                    "found_by": list(h.matched),
                    "mentions": mentioning(h.doc, person),
                }
                for h in holdings.mentions
                if h.collection.name == name
            ]
            for name in holdings.mention_counts()
        },
    }


def _own(held: Held, person: Identifiers) -> dict[str, Any]:
    """A document about the person, other people's records in it cut to what is theirs;
    a checkpoint's inline step-log entries as their step documents would be."""
    doc = without_others(held.doc, _others(held), person)
    inline = inline_log.entries(doc)
    if held.collection is not TRACES or not inline:
        return doc  # type: ignore[no-any-return]
    others = STEPS.personal.others if STEPS.personal is not None else ()
    log = {
        inline_log.entry_key(step): without_others(entry, others, person)
        for step, entry in inline.items()
    }
    return {**doc, inline_log.LOG_FIELD: log}


def _steps(holdings: Holdings) -> dict[str, list[dict[str, Any]]]:
    """Each trace's steps, by trace path: its spilled step documents and the entries inline
    in its checkpoint (``ports/inline_log.py``), in step order, each cut to ``STEP_FIELDS``."""
    spilled: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for held in holdings.of(STEPS):
        spilled.setdefault(held.path.rsplit("/", 2)[0], []).append((held.doc_id, held.doc))
    steps: dict[str, list[dict[str, Any]]] = {}
    for trace in holdings.of(TRACES):  # their inline entries were cut by ``_own``
        merged = inline_log.merge(inline_log.entries(trace.doc), spilled.pop(trace.path, []))
        steps[trace.path] = [
            {name: doc[name] for name in STEP_FIELDS if doc.get(name)} for doc in merged
        ]
    return steps


def _others(held: Held) -> tuple[str, ...]:
    personal = held.collection.personal
    return personal.others if personal is not None else ()

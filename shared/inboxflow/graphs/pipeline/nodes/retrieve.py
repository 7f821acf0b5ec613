"""retrieve: what do we already know that bears on this email?

| node     | retrieve                                                                 |
|----------|--------------------------------------------------------------------------|
| inputs   | email, classification                                                    |
| outputs  | context {sender_known, owner, contact, similar, knowledge,               |
|          | similar_emails, upcoming_events, retrieval_errors}                       |
| LLM task | none (one embedding of the email)                                        |
| routes   | -> decide                                                                |

- ``sender_known`` / ``contact``: the sender's CRM contact record, if any
  (the tool rules look the sender up only when known).
- ``owner``: the mailbox owner's contact record, who signs the reply.
- ``similar``: saved replies whose keywords the email mentions, best first.
- ``knowledge`` / ``similar_emails``: vector search over the knowledge base
  (``kb_chunks``) and past emails (``email_vectors``) with the email's
  embedding; the state keeps ids, titles, excerpts and distances only.
- ``upcoming_events``: for a meeting request, the owner's calendar over the
  next business days.

Afterwards the email is indexed into ``email_vectors`` (an idempotent
upsert, so a re-run changes nothing). The embedder and index come from
``ctx.ports.embedder`` and ``ctx.ports.vectors``. Optional context that cannot be gathered
(vector search or calendar failing for a non-transient reason) is noted in
``retrieval_errors`` and the email goes on; transient errors are raised so
the step is retried.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from ....engine.context import NodeContext
from ....engine.step import Step
from ....errors import RetryableError
from ....knowledge import Retrieval, excerpt, knowledge_base_for
from ....mail import bare_subject, strip_quoted
from ....ports.workspace import Workspace
from ....schema import SAVED_REPLIES
from ....workspace import business_day
from ..settings import pipeline_settings
from ..state import (
    Context,
    KnowledgeHit,
    PipelineState,
    SavedReply,
    SimilarEmail,
    UpcomingEvent,
)
from ..tools import workspace_of

log = logging.getLogger(__name__)

MAX_SIMILAR = 2
KB_HITS = 3
SIMILAR_EMAILS = 3
MAX_EVENTS = 20
KB_EXCERPT_CHARS = 400
CONTACT_FIELDS = ("email", "name", "title", "company", "phone")


def retrieve(state: PipelineState, ctx: NodeContext) -> Step:
    """Gather the sender, the signer, saved replies, KB chunks, similar emails and the calendar."""
    workspace = workspace_of(ctx)
    email = state.email
    category = state.classification.category if state.classification else None
    sender = workspace.get_contact(email.sender.address)
    owner = workspace.get_contact(email.mailbox)
    text = f"{bare_subject(email.subject)}\n{strip_quoted(email.body_text)}".lower()
    errors: list[str] = []

    found = Retrieval()
    try:
        kb = knowledge_base_for(ctx.ports)
        found = kb.retrieve(email, category, kb_limit=KB_HITS, email_limit=SIMILAR_EMAILS)
    except RetryableError:
        raise
    except Exception as exc:
        log.warning("retrieve %s: vector search failed: %s", ctx.trace_id, exc)
        errors.append(f"vector search: {type(exc).__name__}: {exc}")

    events: list[UpcomingEvent] = []
    if category == "meeting_request":
        try:
            events = _upcoming(workspace, ctx)
        except RetryableError:
            raise
        except Exception as exc:
            log.warning("retrieve %s: calendar unavailable: %s", ctx.trace_id, exc)
            errors.append(f"calendar: {type(exc).__name__}: {exc}")

    context = Context(
        sender_known=sender is not None,
        owner=_public(owner) if owner else None,
        contact={k: v for k, v in sender.items() if k != "seeded"} if sender else None,
        similar=_similar(ctx, text),
        knowledge=[
            KnowledgeHit(
                id=hit.doc_id,
                title=str(hit.fields.get("title", "")),
                section=str(hit.fields.get("section", "")),
                source=str(hit.fields.get("source", "")),
                excerpt=excerpt(str(hit.fields.get("text", "")), KB_EXCERPT_CHARS),
                distance=round(hit.distance, 4),
            )
            for hit in found.knowledge
        ],
        similar_emails=[
            SimilarEmail(
                message_id=hit.doc_id,
                subject=str(hit.fields.get("subject", "")),
                sender=str(hit.fields.get("sender", "")),
                category=hit.fields.get("category"),
                received_at=hit.fields.get("received_at"),
                excerpt=str(hit.fields.get("excerpt", "")),
                distance=round(hit.distance, 4),
            )
            for hit in found.similar_emails
        ],
        upcoming_events=events,
        retrieval_errors=errors,
    )
    return Step(update={"context": context}, goto="decide")


def _upcoming(workspace: Workspace, ctx: NodeContext) -> list[UpcomingEvent]:
    """The owner's events from now to the end of the business days ``check_calendar`` offers."""
    now = datetime.fromtimestamp(ctx.clock.now(), UTC)
    last = business_day(now.date(), pipeline_settings(ctx.ports).calendar_days)
    end = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1)
    return [
        UpcomingEvent(
            id=str(event.get("id", "")),
            summary=str(event.get("summary", "")),
            start=str(event.get("start", "")),
            end=str(event.get("end", "")),
            attendees=[
                str(a.get("email", "")) if isinstance(a, dict) else str(a)
                for a in event.get("attendees") or []
            ],
        )
        for event in workspace.list_events(now, end)[:MAX_EVENTS]
    ]


def _similar(ctx: NodeContext, text: str) -> list[SavedReply]:
    scored: list[SavedReply] = []
    for reply_id, doc in ctx.store.list(SAVED_REPLIES.name):
        keywords = [str(k).lower() for k in doc.get("keywords", [])]
        hits = [k for k in keywords if k in text and _keyword(k).search(text)]
        if hits:
            scored.append(
                SavedReply(
                    id=reply_id,
                    title=str(doc.get("title", reply_id)),
                    answer=str(doc.get("answer", "")),
                    score=round(len(hits) / len(keywords), 3),
                )
            )
    scored.sort(key=lambda reply: (-reply.score, reply.id))
    return scored[:MAX_SIMILAR]


@lru_cache(maxsize=1024)
def _keyword(keyword: str) -> re.Pattern[str]:
    """A saved reply's keyword as a pattern: at the start of a word."""
    return re.compile(rf"\b{re.escape(keyword)}")


def _public(contact: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in contact.items() if k in CONTACT_FIELDS}

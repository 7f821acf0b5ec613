"""The customer's thread: replies taken into the conversation (once each), and where
the next email goes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...mail import Email, strip_quoted
from ...ports.checkpoint import Checkpoint, CheckpointStore
from ...ports.documents import DocumentStore
from .state import Message, PlannerState
from .tools import Thread

"""Customer replies queued by ingest while the trace ran: ``{trace_id}:{gmail_id}``."""


def reply_id(email: Mapping[str, Any]) -> str:
    """The id a reply is known by (its Gmail id, else its Message-ID)."""
    return str(email.get("gmail_id") or email.get("message_id") or "")


def customer_message(email: Email) -> Message:
    """A customer's email as a message of the conversation: its new text only."""
    text = strip_quoted(email.body_text) or email.body_text
    return Message(
        role="customer",
        content=text.strip(),
        at=email.received_at.timestamp(),
        ref=email.message_id,
    )


def take_replies(
    state: PlannerState, emails: Sequence[Mapping[str, Any]]
) -> tuple[list[Message], list[str]]:
    """``state``'s messages and seen ids with the replies not seen yet appended, in order."""
    messages, seen = list(state.messages), list(state.seen_reply_ids)
    for raw in emails:
        key = reply_id(raw)
        if not key or key in seen:
            continue
        seen.append(key)
        messages.append(customer_message(Email.model_validate(raw)))
    return messages, seen


def queued_replies(store: DocumentStore, trace_id: str) -> list[dict[str, Any]]:
    """The replies ingest queued for the trace, oldest first (JSON emails)."""
    from ...reply_queue import pending_replies

    docs = pending_replies(store, trace_id)
    return [dict(doc["email"]) for doc in docs if isinstance(doc.get("email"), dict)]


def finished_before(
    state: PlannerState,
    store: DocumentStore,
    checkpoints: CheckpointStore,
    trace_id: str,
    graph: str,
) -> Checkpoint | None:
    """The finished trace of ``graph`` that this trace's email follows up on, or None.

    That is the thread's previous trace (``inboxflow/threads.py``; none when this
    email's sender is not a party of the thread), when it runs
    ``graph`` and has ended (its summary sent, or handed to the agency).
    """
    from ...threads import ThreadResolver

    email = state.email
    sender = email.get("sender")
    previous_id = ThreadResolver(store, checkpoints).trace_before(
        str(email.get("mailbox") or ""),
        str(email.get("thread_id") or ""),
        trace_id,
        str(sender.get("address") or "") if isinstance(sender, dict) else "",
    )
    previous = checkpoints.get_trace(previous_id) if previous_id else None
    if previous is None or previous.graph != graph or not previous.terminal:
        return None
    return previous


def thread_of(state: PlannerState) -> Thread:
    """Where the next email to the customer goes, threaded under their latest email."""
    email = Email.model_validate(state.email)
    ids = [i for i in [*email.references, email.message_id] if i]
    latest = email.message_id
    for message in state.messages:
        if message.role == "customer" and message.ref:
            latest = message.ref
    first_name = state.customer_info.first_name or email.sender.first_name
    return Thread(email=email, reply_to=latest, references=tuple(ids), first_name=first_name)

"""Starting a trace from an email: the one function every path uses (ingest, ``run``,
``demo``, ``send``).

Loop protection comes first, whatever graph the email would go to: mail no
agent may answer (``inboxflow.mail.loop_guard.auto_reply_block``: our own mail
carrying ``X-Inboxflow-Trace``, ``Auto-Submitted``, bounces and DSNs,
read receipts, list and bulk mail, automated senders, auto-reply subjects)
still gets a trace, so it shows in ``inboxflow run`` and ``inboxflow trace``,
but that trace is created ``done`` with the reason (``route.blocked``) and no
node of the graph ever runs: no draft, no approval, nothing sent. ``done``
rather than ``rejected``: nothing went wrong and nobody refused anything; the
email was handled by not answering it, as confident spam is.

Mail from an erased address (``inboxflow person --erase``) received before
its erasure is a replay of erased mail (a redelivered notification, a
re-run inbox): it starts nothing and stores nothing (``ErasedMailReplayed``).
Mail received after the erasure is a new email and starts as any other.

With ``shadow:`` in inboxflow.yaml, a share of the traces started here get a
shadow trace beside them (``engine/shadow.py``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from .engine.graph import Graph, StartContext
from .engine.runtime import Runtime
from .engine.shadow import shadow_trace_id
from .errors import RejectedEnvelope
from .mail import Email
from .mail.loop_guard import auto_reply_block
from .personal.erasure import ErasureRecords
from .ports.checkpoint import TraceRoute
from .routing import RouteDecision

BLOCKED_PREFIX = "loop protection: "
log = logging.getLogger("inboxflow.start")


class ErasedMailReplayed(RejectedEnvelope):
    """The email's sender was erased after it was received: a replay, never started again."""


@dataclass(frozen=True)
class StartedTrace:
    """A trace started from an email.

    Attributes:
        trace_id: its id.
        decision: the routing decision it was started with.
        blocked: why loop protection ended it at once, or None.
    """

    trace_id: str
    decision: RouteDecision
    blocked: str | None = None


def start_email_trace(
    runtime: Runtime,
    email: Email,
    decision: RouteDecision,
    trace_id: str | None = None,
    outside_thread: str | None = None,
) -> StartedTrace:
    """Start ``decision.graph`` on ``email`` (or end the trace at once if it must not be answered).

    The graph's ``initial_state`` builds the first state from the email and
    the routing decision; the rule, profile and mailbox are recorded on the
    trace at step 0, and ``outside_thread``: why the email, in a thread it is
    not a party of, did not join it (``threads.py``).

    Raises:
        PermanentError: unknown graph, or an initial state the graph refuses (too large...).
        ErasedMailReplayed: the sender was erased after this email was received.
        pydantic.ValidationError: the graph's state model refuses the initial state.
    """
    if ErasureRecords(runtime.documents).replayed(
        email.sender.address, email.received_at.timestamp()
    ):
        raise ErasedMailReplayed("its sender was erased after it was received: not started again")
    reason = auto_reply_block(email)
    blocked = f"{BLOCKED_PREFIX}{reason}" if reason else None
    graph = runtime.graphs.get(decision.graph)
    if graph is None:
        raise RejectedEnvelope(f"unknown graph {decision.graph!r}")
    start = StartContext(
        rule=decision.rule,
        profile=decision.profile,
        mailbox=decision.mailbox,
        config=runtime.ports.config,
    )
    state = graph.initial_state(email.model_dump(mode="json"), start)
    record = TraceRoute(
        rule=decision.rule,
        profile=decision.profile,
        mailbox=decision.mailbox,
        blocked=blocked,
        outside_thread=outside_thread,
    )
    started = runtime.start(graph.name, state, trace_id=trace_id, route=record)
    if blocked is None:
        _start_shadow(runtime, graph, email, start, record, started)
    return StartedTrace(started, decision, blocked)


def _start_shadow(
    runtime: Runtime,
    graph: Graph,
    email: Email,
    start: StartContext,
    route: TraceRoute,
    live_trace_id: str,
) -> str | None:
    """Start the shadow of trace ``live_trace_id`` when ``shadow:`` takes this email.

    Chosen from the email's Message-ID (else the live trace's id), so a redelivery
    chooses alike, and started under an id derived from the live one, so it starts
    once. A profile-taking graph's shadow runs the shadow's profile, when it names one.
    A shadow that cannot start is logged and costs the live trace nothing.
    """
    shadow = runtime.ports.config.shadow
    if shadow is None or not shadow.covers(graph.name, graph.takes_profile):
        return None
    if not shadow.takes(email.message_id or live_trace_id):
        return None
    profile = shadow.profile if graph.takes_profile and shadow.profile else route.profile
    try:
        state = graph.initial_state(email.model_dump(mode="json"), replace(start, profile=profile))
        return runtime.start(
            graph.name,
            state,
            trace_id=shadow_trace_id(live_trace_id),
            route=route.model_copy(update={"profile": profile}),
            shadow_of=live_trace_id,
        )
    except Exception:
        log.exception("the shadow of trace %s did not start", live_trace_id)
        return None

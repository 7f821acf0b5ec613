"""What a deployed node function does with one CloudEvent.

Kept apart from ``functions/main.py`` so tests and the local runner call the
same code, and so the runtime is wired once per instance (on first event),
not per request.
"""

from __future__ import annotations

import logging
import os
from functools import cache
from typing import TYPE_CHECKING, Any

from .. import telemetry
from ..logs import configure_for_function

if TYPE_CHECKING:
    from ..delivery_attempts import DeliveryAttempts
    from ..engine.runtime import Outcome, Runtime

log = logging.getLogger("inboxflow.entry")


@cache
def runtime() -> Runtime:
    """The instance's runtime, wired on first use from its one ``Configuration``: the
    process's environment (read here, once) and ``inboxflow.yaml``."""
    from ..configuration import Configuration
    from ..services import build_runtime

    environ = dict(os.environ)
    configure_for_function(environ)
    telemetry.configure(environ)
    return build_runtime(Configuration.from_environ(environ))


def reset() -> None:
    """Forget the cached runtime (tests change the environment between apps)."""
    if runtime.cache_info().currsize:
        runtime().store.close()
    runtime.cache_clear()
    delivery_attempts.cache_clear()


@cache
def delivery_attempts() -> DeliveryAttempts | None:
    """The failed-delivery count of this instance, when it dead-letters by itself (the emulator).

    None in production, where the push subscription's dead-letter policy does it.
    """
    from ..delivery_attempts import DeliveryAttempts

    rt = runtime()
    policy = rt.ports.settings.redelivery
    if policy is None:
        return None
    return DeliveryAttempts(rt.documents, rt.bus, policy, rt.clock)


def dead_lettered(function: str, message: Any, error: BaseException) -> bool:
    """After a failed delivery: True when the function dead-lettered the message itself.

    Only where the function counts its deliveries (``INBOXFLOW_DEAD_LETTERING=function``);
    the caller acknowledges a dead-lettered message and re-raises otherwise.
    """
    counter = delivery_attempts()
    return counter is not None and counter.after_failure(function, message, error)


def handle_cloud_event(data: Any) -> Outcome:
    """Run the node named by a Pub/Sub CloudEvent's envelope.

    Permanent problems are recorded and return normally (Pub/Sub acks);
    retryable ones raise (functions-framework answers 500, Pub/Sub redelivers),
    unless this function dead-letters by itself and the message has been
    failing for long enough (``delivery_attempts``): then it goes to the node's
    ``-dlq`` topic and is acknowledged.
    On the embedded default, when this process serves every node (no
    ``INBOXFLOW_NODE``), the rest of the trace runs in-process before returning.
    """
    from .warmup import is_warmup, warm_runtime

    rt = runtime()
    message = data.get("message", data) if isinstance(data, dict) else data
    if is_warmup(message):
        warm_runtime(rt)
        return "duplicate"  # acknowledged, nothing ran
    try:
        outcome = rt.handle_message(message)
        _drain_inprocess(rt)
    except Exception as exc:
        if dead_lettered(rt.options.only_node or "run_node", message, exc):
            return "failed"
        raise
    finally:
        telemetry.flush()
    return outcome


def handle_approval_request(request: Any) -> Any:
    """Serve one request of the approval function (review pages, decisions, deadlines, API).

    On the embedded default the resumed trace runs in-process before the
    response is returned, so the page reports a finished action.
    """
    from ..approvals.app import handle_http
    from ..approvals.service import approval_service  # not at import: a node never needs it
    from ..approvals.task_auth import local_task_check

    rt = runtime()
    try:
        check = local_task_check(rt.ports.settings.home, rt.ports.settings.environ)
        response = handle_http(request, approval_service(rt.ports), verify_task=check)
        _drain_inprocess(rt)
    finally:
        telemetry.flush()
    return response


def _drain_inprocess(rt: Runtime) -> None:
    """On the embedded default, when this process serves every node, run the rest of the trace."""
    from ..services import is_inprocess_bus

    if is_inprocess_bus(rt.bus) and rt.options.only_node is None:
        rt.bus.drain()  # type: ignore[attr-defined]

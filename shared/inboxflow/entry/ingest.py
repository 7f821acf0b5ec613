"""What the deployed ingest and renew-watch functions do.

``functions/main.py`` exposes them::

    @functions_framework.cloud_event
    def ingest(cloud_event): handle_gmail_event(cloud_event)

    @functions_framework.http
    def renew_watch(request): return renew_watch_http(request)

The ingestor is wired once per instance, on first use, from the environment
(the same settings as the node functions, plus ``INBOXFLOW_GOOGLE_API_URL``
for the local Gmail double and ``INBOXFLOW_GMAIL_TOPIC``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import cache
from typing import Any

from werkzeug.exceptions import HTTPException

from .. import telemetry
from ..errors import RetryableError
from ..ingest.notification import GmailNotification, pubsub_message_of
from ..ingest.report import IngestReport
from ..ingest.sync import IngestIncomplete, Ingestor

log = logging.getLogger("inboxflow.ingest.entry")

INGEST = "ingest"
"""The function's name: its failed deliveries are counted, and dead-lettered, under it."""


@cache
def ingestor() -> Ingestor:
    """The instance's ingestor: the node runtime's store and bus, Gmail through the client library."""
    from . import runtime

    rt = runtime()
    return Ingestor(rt, rt.ports.gmail_reader)


class RedeliverLater(RetryableError, HTTPException):
    """An expected retry (another run is ingesting the same messages), not a fault.

    Flask answers an ``HTTPException`` with its status and logs nothing, so the
    push is refused (Pub/Sub redelivers on any status but 102, 200, 201, 202 and
    204) without the traceback of an error; the caller logs one warning line.
    """

    code = 409


def reset() -> None:
    """Forget the cached ingestor (tests change the environment between apps)."""
    from . import reset as reset_runtime

    ingestor.cache_clear()
    reset_runtime()


def _drain_if_embedded(target: Ingestor) -> None:
    from ..services import is_inprocess_bus

    runtime = target.runtime
    if is_inprocess_bus(runtime.bus) and runtime.options.only_node is None:
        runtime.bus.drain()  # type: ignore[attr-defined]


def handle_gmail_event(cloud_event: Any) -> IngestReport:
    """Ingest one Gmail watch notification (a Pub/Sub CloudEvent, its data, or a push body).

    Malformed notifications and unknown mailboxes are recorded in ``failures``
    and return normally (Pub/Sub acknowledges). On the embedded default the
    started traces run in-process before this returns.

    Raises:
        RedeliverLater: another run is ingesting some of the messages (expected in a
            burst): logged as a warning, answered 409, Pub/Sub redelivers.
        RetryableError: Gmail or the store failed transiently; Pub/Sub redelivers.
    """
    from . import dead_lettered
    from .warmup import is_warmup, warm_runtime

    target = ingestor()
    message = pubsub_message_of(cloud_event)
    if is_warmup(message):
        warm_runtime(target.runtime)
        target.mailboxes.mailboxes()
        return IngestReport(mailbox="", history_id=0, outcome="stale")
    try:
        with telemetry.span("ingest notification", kind="CONSUMER"):
            report = target.handle_message(message)
        _drain_if_embedded(target)
    except IngestIncomplete as exc:
        if dead_lettered(INGEST, message, exc):
            return exc.report
        log.warning("%s; the notification will be redelivered", exc)
        raise RedeliverLater(description=str(exc)) from None
    except Exception as exc:
        if dead_lettered(INGEST, message, exc):
            return IngestReport(mailbox="", history_id=0, outcome="rejected", error=str(exc))
        raise
    finally:
        telemetry.flush()
    return report


def in_process_notifier(target: Ingestor) -> Callable[[str, int], None]:
    """A Gmail double ``on_notify`` hook that ingests right away (the embedded default).

    The notification goes through the same Pub/Sub message decoding as in
    production, then the traces it starts run on the in-process bus.
    """

    def notify(email_address: str, history_id: int) -> None:
        message = GmailNotification(email_address, int(history_id)).to_pubsub_message()
        target.handle_message(message)
        _drain_if_embedded(target)

    return notify


def renew_watch_http(request: Any = None) -> tuple[str, int, dict[str, str]]:
    """Renew the Gmail watch of every mailbox; the HTTP answer is a JSON summary.

    Returns:
        ``(body, status, headers)``: 200 when every mailbox renewed, 500 when
        any failed (the others were still renewed), so Cloud Scheduler flags it.
    """
    from ..ingest.watch import gmail_topic, renew_watches

    target = ingestor()
    topic = gmail_topic(target.runtime.ports.settings.environ)

    def catch_up(address: str, history_id: int) -> None:
        target.ingest(GmailNotification(address, history_id))
        _drain_if_embedded(target)

    summary = renew_watches(target.store, target.gmail, target.clock, topic, catch_up=catch_up)
    status = 500 if summary["failed"] else 200
    if summary["failed"]:
        log.error("watch renewal failed for %d mailbox(es)", len(summary["failed"]))
    return json.dumps(summary), status, {"Content-Type": "application/json"}

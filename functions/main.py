"""Cloud Functions entry points. Each deployed function is this file plus the
``inboxflow`` package:

- ``run_node``: one graph node (``INBOXFLOW_NODE`` = ``graph.node``), Pub/Sub CloudEvent;
- ``approve``: the approval HTTP function (review pages, decisions, deadline tasks, JSON API);
- ``ingest``: Gmail watch notifications (Pub/Sub CloudEvent) -> one trace per new message;
- ``renew_watch``: renews every mailbox's Gmail watch (HTTP, daily from Cloud Scheduler);
  at ``/stuck-traces`` it logs the stuck traces instead (every 10 minutes).

Each imports only what it needs, when first called.
"""

from typing import Any

import functions_framework
from cloudevents.http import CloudEvent
from flask import Request


@functions_framework.cloud_event
def run_node(cloud_event: CloudEvent) -> None:
    """Run one graph node for one Pub/Sub message."""
    from inboxflow.entry import handle_cloud_event

    handle_cloud_event(cloud_event.data)


@functions_framework.http
def approve(request: Request) -> Any:
    """Review, decide and time out human approvals."""
    from inboxflow.entry import handle_approval_request

    return handle_approval_request(request)


@functions_framework.cloud_event
def ingest(cloud_event: CloudEvent) -> None:
    """Turn one Gmail watch notification into traces of the new messages."""
    from inboxflow.entry.ingest import handle_gmail_event

    handle_gmail_event(cloud_event)


@functions_framework.http
def renew_watch(request: Request) -> Any:
    """Renew the Gmail watch of every mailbox; at ``/stuck-traces``, log the stuck traces."""
    from inboxflow.entry import stuck_sweep
    from inboxflow.entry.ingest import renew_watch_http

    if stuck_sweep.is_sweep(request):
        return stuck_sweep.stuck_traces_http(request)
    return renew_watch_http(request)


def _harden_framework_responses() -> None:
    """Security headers on functions-framework's own responses too (a 404, a 405, a 500)."""
    from flask import current_app, has_app_context

    from inboxflow.approvals.http_headers import install_hardening

    if has_app_context():  # functions-framework imports this file inside its app
        install_hardening(current_app._get_current_object())  # type: ignore[attr-defined]


_harden_framework_responses()

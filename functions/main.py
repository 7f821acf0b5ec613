"""Cloud Functions entry points. Each deployed function is this file plus the
``inboxflow`` package:

- ``run_node``: one graph node (``INBOXFLOW_NODE`` = ``graph.node``), Pub/Sub CloudEvent;
- ``approve``: the approval HTTP function (review pages, decisions, deadline tasks, JSON API).
"""

import functions_framework
from cloudevents.http import CloudEvent
from flask import Request, Response

from inboxflow.entry import handle_approval_request, handle_cloud_event


@functions_framework.cloud_event
def run_node(cloud_event: CloudEvent) -> None:
    """Run one graph node for one Pub/Sub message."""
    handle_cloud_event(cloud_event.data)


@functions_framework.http
def approve(request: Request) -> Response:
    """Review, decide and time out human approvals."""
    return handle_approval_request(request)

"""Cloud Functions entry points. Each deployed function is this file plus the
``inboxflow`` package; ``INBOXFLOW_NODE`` (``graph.node``) says which node a
node function serves."""

import functions_framework
from cloudevents.http import CloudEvent

from inboxflow.entry import handle_cloud_event


@functions_framework.cloud_event
def run_node(cloud_event: CloudEvent) -> None:
    """Run one graph node for one Pub/Sub message."""
    handle_cloud_event(cloud_event.data)

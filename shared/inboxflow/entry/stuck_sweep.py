"""The stuck-trace sweep: Cloud Scheduler calls ``renew_watch`` at ``/stuck-traces``.

``functions/main.py`` hands a request to that path here. Every stuck trace
(``stuck.py``: running, no live lease on its step, quiet for longer than its
node's timeout) is logged once per sweep as a WARNING line ``trace stuck``
with the trace's fields; the ``inboxflow/stuck_traces`` log-based metric
counts those lines and its alert policy (``infra/monitoring.tf``) opens an
incident. The repair is ``inboxflow retry TRACE``. A sweep only reads.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ..stuck import stuck_traces

log = logging.getLogger("inboxflow.stuck")

PATH = "/stuck-traces"
"""The path of ``renew_watch`` the scheduler job calls for a sweep."""


def is_sweep(request: Any) -> bool:
    """Whether an HTTP request to ``renew_watch`` asks for the sweep."""
    return str(getattr(request, "path", "") or "").rstrip("/").endswith(PATH)


def stuck_traces_http(request: Any = None) -> tuple[str, int, dict[str, str]]:
    """Log every stuck trace; the HTTP answer is ``{"stuck": [...]}`` (200).

    Returns:
        ``(body, status, headers)``.
    """
    from . import runtime

    rt = runtime()
    found = stuck_traces(rt.documents, rt.graphs, rt.clock.now(), limit=1000)
    rows = []
    for item in found:
        checkpoint = item.checkpoint
        fields = {
            "trace_id": checkpoint.trace_id,
            "graph": checkpoint.graph,
            "node": checkpoint.node,
            "step": checkpoint.step,
        }
        log.warning("trace stuck", extra=fields)
        rows.append({**fields, "quiet_s": round(item.quiet_s), "timeout_s": item.timeout_s})
    return json.dumps({"stuck": rows}), 200, {"Content-Type": "application/json"}

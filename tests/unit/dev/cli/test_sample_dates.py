"""The sample inbox arrived in the past: every sample is older than now and than its review deadline."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console

from inboxflow.dev.cli.local import embedded_runtime, process
from inboxflow.mail import load_email_file, sample_inbox_paths
from inboxflow.routing import RouteDecision


def test_every_sample_arrived_before_now_and_before_its_review_deadline(tmp_path: Path) -> None:
    paths = sample_inbox_paths()
    now = time.time()
    for path in paths:
        assert load_email_file(path).received_at.timestamp() <= now, path.name
    runtime = embedded_runtime(tmp_path)
    processed = process(
        runtime, paths, Console(quiet=True), lambda email: RouteDecision(graph="pipeline")
    )
    assert [p.error for p in processed] == [None] * len(paths)
    trace_ids = [p.trace_id for p in processed if p.trace_id is not None]
    received = {
        trace_id: load_email_file(path).received_at.timestamp()
        for trace_id, path in zip(trace_ids, paths, strict=True)
    }
    pending = runtime.ports.approvals.pending()
    assert len(pending) >= 3  # the complaints and the ambiguous mail wait for a human
    for approval in pending:
        assert received[approval.trace_id] < approval.deadline, approval.context.get("subject")

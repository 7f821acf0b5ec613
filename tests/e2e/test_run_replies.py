"""``inboxflow run`` takes a reply the way Gmail ingestion does: it resumes the planner trace
waiting for that customer, and a support reply continues its ticket (``dev/file_inbox.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.schema import APPROVALS, MAIL_CLAIMS

CLI = [sys.executable, "-c", "from inboxflow.dev.cli import main; main()"]
MAIL = Path(__file__).resolve().parents[1] / "data" / "evals" / "mail"


def run(*files: str, home: Path) -> list[dict]:
    env = {**os.environ, "COLUMNS": "200", "INBOXFLOW_HOME": str(home)}
    env.pop("INBOXFLOW_CONFIG", None)
    result = subprocess.run(
        [*CLI, "run", "--json", *(str(MAIL / name) for name in files)],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def approve_pending(home: Path) -> list[str]:
    """Approve every pending reviewer approval as its first reviewer (the API-key path)."""
    from inboxflow.dev.cli.local import embedded_runtime

    runtime = embedded_runtime(home)
    service = runtime.ports.approvals
    decided = []
    try:
        while pending := [a for a in service.pending() if a.reviewers]:
            service.decisions.decide_as(pending[0].approval_id, pending[0].reviewers[0], "approve")
            runtime.bus.drain()
            decided.append(str(pending[0].payload.get("tool")))
    finally:
        runtime.store.close()
    return decided


def test_a_customer_reply_resumes_the_planner_trace_waiting_for_it(tmp_path):
    [ask] = run("quote-ask.json", home=tmp_path)
    assert (ask["graph"], ask["action"], ask["status"]) == ("planner", "started", "waiting")
    assert approve_pending(tmp_path) == ["ask_customer"]
    [reply] = run("quote-reply.eml", home=tmp_path)
    assert reply["action"] == "resumed"
    assert reply["trace_id"] == ask["trace_id"]  # no second trace for the reply
    assert approve_pending(tmp_path) == ["add_vehicle", "get_rate", "prepare_final_summary"]
    store = SqliteCheckpointStore(tmp_path / "inboxflow.db")
    try:
        assert len(store.list("traces")) == 1
        trace = store.get_trace(ask["trace_id"])
        assert trace is not None and trace.status == "done"
        assert trace.state["customer_info"]["vin"] == "1HGCM82633A004352"
        claims = [doc["state"] for _, doc in store.list(MAIL_CLAIMS.name)]
        assert sorted(claims) == ["resumed", "started"]  # ingest's own record of each message
        sent = [doc["to"] for _, doc in store.list("mailbox_sent")]
        assert sent == ["jordan.rivera@example.com"] * 2  # the question, then the quote
    finally:
        store.close()


def test_a_reply_before_the_question_is_approved_is_queued_on_the_busy_trace(tmp_path):
    [ask] = run("quote-ask.json", home=tmp_path)
    [reply] = run("quote-reply.eml", home=tmp_path)
    assert (reply["action"], reply["trace_id"]) == ("queued", ask["trace_id"])
    store = SqliteCheckpointStore(tmp_path / "inboxflow.db")
    try:
        assert [doc["trace_id"] for _, doc in store.list("trace_replies")] == [ask["trace_id"]]
        assert len(store.list(APPROVALS.name)) == 1
    finally:
        store.close()


def test_a_support_reply_in_the_thread_continues_the_ticket(tmp_path):
    first, reply = run("sync-failing.json", "sync-reply.eml", home=tmp_path)
    assert (first["graph"], reply["graph"]) == ("support", "support")
    assert reply["action"] == "started" and reply["trace_id"] != first["trace_id"]
    store = SqliteCheckpointStore(tmp_path / "inboxflow.db")
    try:
        [ticket] = [doc for _, doc in store.list("tickets")]
        assert ticket["traces"] == [first["trace_id"], reply["trace_id"]]
        trace = store.get_trace(reply["trace_id"])
        assert trace is not None and trace.state["ticket"]["how"] == "thread"
    finally:
        store.close()

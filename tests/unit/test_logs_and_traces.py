"""Log lines and spans of a whole pipeline run with an approval (embedded default):
every line is JSON Cloud Logging reads, carries its trace and span, names the
status changes once each, and holds no reviewer token; the spans form one
trace from start to the sent reply, the approval's resume included."""

from __future__ import annotations

import io
import itertools
import json
import logging
import os
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from inboxflow import logs, telemetry
from tests.harness.approval import FORM_TOKEN, Harness

PROJECT = "inboxflow-logs-test"


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[io.StringIO, Any]]:
    """Every log line of this process as JSON in a buffer, and spans in memory."""
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", PROJECT)
    buffer = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = logs.configure(as_json=True, level=logging.DEBUG, stream=buffer, environ=os.environ)
    exporter = telemetry.setup("memory", service="test")
    try:
        yield buffer, exporter
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        telemetry.setup("off")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Harness, str]]:
    """The approval harness behind a real werkzeug server (whose access log names each URL)."""
    harness = Harness(tmp_path)
    server = make_server("127.0.0.1", 0, harness.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield harness, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def _fetch(url: str, form: dict[str, str] | None = None) -> tuple[int, str]:
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        with urllib.request.urlopen(url, data=data, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _run_with_approval(harness: Harness, base: str) -> tuple[str, list[str]]:
    """A complaint paused for review, opened by both reviewers, approved by one: (trace, secrets)."""
    trace_id = harness.start()
    links = harness.links()
    assert len(links) == 2
    secrets = [link.token for link in links]
    status, _ = _fetch(f"{base}/a/{links[1].approval_id}?t={links[1].token[:-2]}xx")
    assert status == 403
    for link in links:
        status, page = _fetch(base + link.path)
        assert status == 200
        form_token = FORM_TOKEN.search(page)
        assert form_token is not None
        secrets.append(form_token.group(1))
    status, _ = _fetch(
        f"{base}/a/{links[0].approval_id}", {"form": secrets[-2], "decision": "approve"}
    )
    assert status == 200
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done"
    return trace_id, secrets


def test_every_log_line_is_json_with_its_trace_and_no_token(
    captured: tuple[io.StringIO, Any], served: tuple[Harness, str]
) -> None:
    buffer, _ = captured
    trace_id, secrets = _run_with_approval(*served)
    lines = buffer.getvalue().splitlines()
    assert lines
    for secret in secrets:
        leaked = [line for line in lines if secret in line]
        assert not leaked, f"a reviewer token reached the log: {leaked[0]}"
    entries = [json.loads(line) for line in lines]
    for entry in entries:
        assert entry["severity"] in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
        assert isinstance(entry["message"], str)
    access = [e for e in entries if e["logger"] == "werkzeug" and "/a/" in e["message"]]
    assert len(access) == 4 and all("?t=REDACTED" in e["message"] for e in access[:3])

    steps = [e for e in entries if e.get("trace_id") == trace_id and "node" in e]
    assert [e["node"] for e in steps if "committed" in e["message"]] == [
        "classify",
        "retrieve",
        "decide",
        "execute_tools",
        "generate",
        "review",
        "dispatch",
    ]
    otel_traces = {e["logging.googleapis.com/trace"] for e in steps}
    assert len(otel_traces) == 1
    assert re.fullmatch(rf"projects/{PROJECT}/traces/[0-9a-f]{{32}}", otel_traces.pop())
    assert all(re.fullmatch(r"[0-9a-f]{16}", e["logging.googleapis.com/spanId"]) for e in steps)
    assert all(isinstance(e["step"], int) and e["attempt"] >= 1 for e in steps if "attempt" in e)
    outcomes = [e["outcome"] for e in entries if e.get("trace_id") == trace_id and "outcome" in e]
    assert outcomes == ["waiting", "done"]
    # The dashboard's emails-per-minute metric counts this line (infra/monitoring.tf).
    started = [e for e in entries if e.get("message") == "trace started"]
    assert [(e["trace_id"], e["graph"]) for e in started] == [(trace_id, "pipeline")]


def test_the_spans_of_one_email_form_one_trace_in_order(
    captured: tuple[io.StringIO, Any], served: tuple[Harness, str]
) -> None:
    _, exporter = captured
    trace_id, _ = _run_with_approval(*served)
    records = [telemetry.span_record(s) for s in exporter.get_finished_spans()]
    ours = [
        r for r in records if r["attributes"].get("inboxflow.trace_id") == trace_id
    ]  # step, start and resume spans name the email's trace
    otel_trace = {r["trace_id"] for r in ours}
    assert len(otel_trace) == 1
    in_trace = sorted(
        (r for r in records if r["trace_id"] in otel_trace), key=lambda r: r["start_ns"]
    )
    top = [r["name"] for r in in_trace if not r["name"].startswith(("llm ", "tool "))]
    assert top == [
        "start pipeline",
        "step pipeline.classify",
        "step pipeline.retrieve",
        "step pipeline.decide",
        "step pipeline.execute_tools",
        "step pipeline.generate",
        "step pipeline.review",
        "resume pipeline.dispatch",
        "step pipeline.dispatch",
    ]
    by_id = {r["span_id"]: r for r in in_trace}
    chain = [r for r in in_trace if r["name"] in top]
    assert chain[0]["parent_id"] is None
    for parent, child in itertools.pairwise(chain):
        assert child["parent_id"] == parent["span_id"], (parent["name"], child["name"])
    outcomes = [r["attributes"].get("inboxflow.outcome") for r in chain if r["name"][:4] == "step"]
    assert outcomes == ["running"] * 5 + ["waiting", "done"]
    llm = [r for r in in_trace if r["name"].startswith("llm ")]
    assert llm and all(by_id[r["parent_id"]]["name"].startswith("step ") for r in llm)
    assert all(r["attributes"]["gen_ai.request.model"] for r in llm)
    assert all(r["end_ns"] - r["start_ns"] >= 0 for r in llm)
    tools = [r for r in in_trace if r["name"].startswith("tool ")]
    assert tools and {by_id[r["parent_id"]]["name"] for r in tools} == {
        "step pipeline.execute_tools"
    }


def test_a_review_link_logged_by_anyone_is_redacted(captured: tuple[io.StringIO, Any]) -> None:
    buffer, _ = captured
    token = "S3cr3tT0ken-" * 4
    logging.getLogger("inboxflow.notify").error(
        "could not send https://review.test/a/ap1?t=%s&x=1 to ben", token
    )
    try:
        raise RuntimeError(f"GET /a/ap1?token={token}")
    except RuntimeError:
        logging.getLogger("inboxflow.notify").exception("failed")
    text = buffer.getvalue()
    assert token not in text
    assert text.count("REDACTED") == 3  # the message, the traceback's source line and its text
    logs.configure(as_json=False, stream=buffer)
    logging.getLogger("inboxflow.notify").warning("again ?t=%s", token)
    assert token not in buffer.getvalue()


def test_log_format_and_tracing_mode_follow_the_environment() -> None:
    assert logs.json_selected({"K_SERVICE": "f"}) and not logs.json_selected({})
    assert not logs.json_selected({"K_SERVICE": "f", logs.FORMAT_VARIABLE: "text"})
    with pytest.raises(ValueError, match="json or text"):
        logs.json_selected({logs.FORMAT_VARIABLE: "xml"})
    assert telemetry.mode_from_env({}) == "off"
    assert telemetry.mode_from_env({"K_SERVICE": "f"}) == "gcp"
    assert telemetry.mode_from_env({telemetry.TRACING_VARIABLE: "jsonl:/tmp/s"}) == "jsonl:/tmp/s"
    for bad in ("jsonl", "zipkin", "memory:x"):
        with pytest.raises(ValueError, match="INBOXFLOW_TRACING"):
            telemetry.mode_from_env({telemetry.TRACING_VARIABLE: bad})

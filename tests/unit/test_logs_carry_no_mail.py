"""Logs carry no mail content: one person's mail, with a distinctive subject and body, through
every graph (and a review page opened and approved over HTTP); neither the subject nor the body
is in any JSON log line, access log line or span attribute."""

from __future__ import annotations

import io
import json
import logging
import os
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from inboxflow import logs, telemetry
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from tests.harness.approval import COMPLAINT, FORM_TOKEN, Harness, sample
from tests.harness.person import BODY_MARK, SUBJECT_MARK, build, person_mail

MARKS = (SUBJECT_MARK, BODY_MARK)


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[io.StringIO, Any]]:
    """Every log line of this process as JSON (DEBUG and up) in a buffer, and spans in memory."""
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "inboxflow-logs-test")
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


def _review_over_http(tmp_path: Path) -> None:
    """A marked complaint paused for review; its page opened and approved through werkzeug."""
    harness = Harness(tmp_path / "http")
    email = sample(COMPLAINT)
    email["subject"] = f"{email['subject']} {SUBJECT_MARK}"
    email["body_text"] = f"{email['body_text']}\n{BODY_MARK}\n"
    harness.start(email)
    server = make_server("127.0.0.1", 0, harness.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        link = harness.links()[0]
        with urllib.request.urlopen(base + link.path, timeout=30) as response:
            page = response.read().decode()
        assert SUBJECT_MARK in page  # the reviewer sees the mail; the log must not
        form = FORM_TOKEN.search(page)
        assert form is not None
        data = urllib.parse.urlencode({"form": form.group(1), "decision": "approve"}).encode()
        with urllib.request.urlopen(f"{base}/a/{link.approval_id}", data=data, timeout=30):
            pass
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_no_log_line_or_span_carries_the_subject_or_the_body(
    captured: tuple[io.StringIO, Any], tmp_path: Path
) -> None:
    buffer, exporter = captured
    runtime = build(tmp_path, SqliteCheckpointStore(tmp_path / "person.db"))
    traces = person_mail(runtime)
    _review_over_http(tmp_path)

    lines = buffer.getvalue().splitlines()
    loggers = {json.loads(line)["logger"] for line in lines}
    assert {"werkzeug", "inboxflow.runtime"} <= loggers, loggers  # access log and step log seen
    assert {json.loads(line).get("trace_id") for line in lines} >= set(traces.values())
    for mark in MARKS:
        leaked = [line for line in lines if mark.lower() in line.lower()]
        assert not leaked, f"mail content reached the log: {leaked[0][:400]}"
    spans = [telemetry.span_record(s) for s in exporter.get_finished_spans()]
    assert spans
    for record in spans:
        attributes = json.dumps(record["attributes"], ensure_ascii=False).lower()
        events = json.dumps(record["name"]).lower()
        for mark in MARKS:
            assert mark.lower() not in attributes + events, (record["name"], record["attributes"])

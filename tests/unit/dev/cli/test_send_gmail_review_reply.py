"""``inboxflow send --gmail`` of a reply to a review email: ingest's claim for it names an
approval, not a trace (the reply starts none), so ``send`` waits on the trace the decision
resumes, or says what the reply did, instead of looking up a trace that never exists."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console

from inboxflow.dev.cli.dev import _ingested
from tests.harness.thread_chat import MAILBOX, ChatWorld, chat_world
from tests.unit.approvals.test_review_replies import _reply, _waiting_for_review

PASSED = "Authentication-Results: mx.google.com; dkim=pass; spf=pass; dmarc=pass header.from=agency.test\r\n"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatWorld]:
    request: Any = type("Param", (), {"param": "sqlite"})()
    yield from chat_world(request, tmp_path, monkeypatch)


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200), out


def test_a_deciding_review_reply_waits_on_the_trace_it_resumes(world: ChatWorld) -> None:
    trace_id, approval = _waiting_for_review(world)
    gmail_id, _ = _reply(world, approval, 2, "approve", headers=PASSED)
    assert world.claim(gmail_id)["state"] == "review_reply"
    console, out = _console()

    found = _ingested(console, world.store, MAILBOX, gmail_id, time.monotonic() + 5, 5)

    assert found == (trace_id, approval.approval_id)
    assert f"approval {approval.approval_id} decided (approve)" in out.getvalue()
    assert f"the decision resumes trace {trace_id}" in out.getvalue()


def test_a_refused_review_reply_says_why_and_ends(world: ChatWorld) -> None:
    _, approval = _waiting_for_review(world)
    gmail_id, _ = _reply(world, approval, 2, "approve", sender="Mallory <mallory@evil.test>")
    console, out = _console()

    with pytest.raises(typer.Exit) as ended:
        _ingested(console, world.store, MAILBOX, gmail_id, time.monotonic() + 5, 5)

    assert ended.value.exit_code == 0
    said = out.getvalue()
    assert f"ingest review_reply message {gmail_id}: approval {approval.approval_id}" in said
    assert "mallory" in said

"""The reviewer inbox's history says what each decision taught (the preference-memory change
whose source is the resumed step) and whether ``inboxflow eval collect`` took it (issue 43
part 5); everything from mail is escaped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inboxflow.dev.eval.collect import CollectOptions, collect
from inboxflow.engine.waits import Approval
from inboxflow.memory import Memory, PreferenceMemory
from tests.harness.approval import REVIEWERS, Harness, sample
from tests.unit.approvals.test_inbox import page, sign_in

ANA, _ = REVIEWERS
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def start_hostile(h: Harness) -> Approval:
    email: dict[str, Any] = sample("04-complaint-double-charge")
    email["subject"] = f"Refund {HOSTILE}"
    email["body_text"] = f"Please refund me. {HOSTILE}"
    return h.approval_of(h.start(email))


def learn_from(h: Harness, approval: Approval, sign_off: str) -> None:
    """What a graph's learning writes when the decision resumes the trace (learning.py)."""

    def change(memory: Memory) -> tuple[dict[str, Any], str]:
        return {**memory.profile, "sign_off": sign_off}, f"the reviewer signed {sign_off}"

    source = f"{approval.trace_id}:{approval.step + 1}"
    PreferenceMemory(h.store, h.clock).update(
        "support@brightlane.io", "response_preferences", change, source
    )


def test_history_shows_what_a_decision_taught_and_that_it_was_collected_escaped(
    h: Harness, tmp_path: Path
) -> None:
    taught, plain = start_hostile(h), h.approval_of(h.start())
    h.service.decisions.decide_as(taught.approval_id, ANA, "approve", comment=None)
    h.service.decisions.decide_as(plain.approval_id, ANA, "reject")
    h.drain()
    learn_from(h, taught, f"Cheers {HOSTILE}")
    sign_in(h, ANA)

    html = page(h.client, "/inbox/history")
    assert html.count("data-history") == 2
    assert html.count("data-taught") == 1
    assert "Taught response_preferences of support@brightlane.io (version 1)" in html
    assert "<strong>sign_off</strong>: Cheers &lt;script&gt;" in html
    assert "data-collected" not in html and html.count("Not collected as an eval case") == 2
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html

    collect(h.store, h.runtime.graphs, tmp_path / "set", CollectOptions(since=0), h.clock.now())
    html = page(h.client, "/inbox/history")
    assert html.count("data-collected") == 2 and "Not collected" not in html
    assert "<script>alert" not in html and "<img src=x" not in html


def test_a_lesson_of_another_step_is_not_this_decisions(h: Harness) -> None:
    approval = h.approval_of(h.start())
    h.service.decisions.decide_as(approval.approval_id, ANA, "approve")
    h.drain()
    learn_from(h, approval.model_copy(update={"step": approval.step + 1}), "Later")
    sign_in(h, ANA)
    assert "data-taught" not in page(h.client, "/inbox/history")

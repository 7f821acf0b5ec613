"""Escalation notices of the agent graph: the email's text in the HTML part is escaped."""

from __future__ import annotations

from inboxflow.graphs.agent.nodes.finish import finish  # noqa: F401 - the node under test
from tests.harness.agent import build, sample, start

HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)>"


def test_the_agents_escalation_notice_escapes_the_patients_text(tmp_path) -> None:
    runtime = build(tmp_path)
    email = sample("23")
    assert "Ibalgin" in email.body_text
    body = email.body_text.replace("Ibalgin", f"Ibalgin {HOSTILE}", 1)
    email = email.model_copy(update={"body_text": body})
    trace_id = start(runtime, email, "pharmacy")
    runtime.bus.drain()
    assert runtime.store.get_trace(trace_id).status == "needs_review"  # type: ignore[union-attr]
    (notice,) = runtime.ports.approvals.notifier.messages()
    assert HOSTILE in notice["text"]  # the plain-text part as written
    assert "<script>" not in notice["html"] and "<img" not in notice["html"]
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in notice["html"]

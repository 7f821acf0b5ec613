"""The support desk's guards (``graphs/support/guards.py``) hold whatever the model answers:
a scripted model that plays everything down and answers everything itself, and the trace
saying which guard fired and why."""

from __future__ import annotations

from typing import Any

import pytest

from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.cli.inspect import trace as trace_command
from inboxflow.graphs.support.guards import RELEVANCE_FLOOR
from tests.harness.support import build, email, run

PASS = (
    "mx.google.com; dkim=pass header.i=@{d}; spf=pass smtp.mailfrom={d}; dmarc=pass header.from={d}"
)
FAIL = "mx.google.com; dkim=none; spf=fail smtp.mailfrom={d}; dmarc=fail header.from={d}"


class UnsafeModel(OfflineModel):
    """Says every ticket is a low, general question and answers it alone at 0.95."""

    def generate(self, task: Any, inputs: Any) -> Any:
        output, usage = super().generate(task, inputs)
        if task.name == "support_supervise":
            output = output.model_copy(
                update={
                    "urgency": "low",
                    "issue_type": "general",
                    "requires_escalation": False,
                    "signals": [],
                }
            )
        if task.name == "support_specialist":
            info = output.extracted_info.model_copy(update={"sentiment": "neutral"})
            output = output.model_copy(
                update={
                    "recommended_action": "auto_respond",
                    "confidence": 0.95,
                    "suggested_response": "Hello, here is the answer.",
                    "extracted_info": info,
                }
            )
        return output, usage


@pytest.fixture
def runtime(tmp_path):
    runtime = build(tmp_path, llm=UnsafeModel())
    yield runtime
    runtime.store.close()


def _guards(runtime, trace_id: str, node: str | None = None) -> dict[str, str]:
    """``{guard: reason}`` of the guards that fired on ``node``'s steps (any node: None)."""
    logs = [log for log in runtime.store.step_logs(trace_id) if node in (None, log.step_name)]
    return {entry["guard"]: entry["reason"] for log in logs for entry in log.guards}


def _replies(runtime) -> list[dict]:
    return runtime.ports.workspace.drafts() + runtime.ports.workspace.sent()


def _review_reasons(runtime, state) -> list[str]:
    pause = runtime.store.get_trace(state["trace_id"]).pause
    assert pause is not None and pause["kind"] == "approve_support_reply"
    return runtime.ports.approvals.get(pause["approval_id"]).context["reasons"]


@pytest.mark.parametrize(
    ("sender", "subject", "body", "urgency", "cue"),
    [
        (
            "ops@brightpath.example",
            "Účet",
            "Někdo se nám v noci přihlásil do účtu a změnil heslo, prosím zablokujte ho.",
            "critical",
            "security cue",
        ),
        (
            "it-admin@northwind.example",
            "Plateforme",
            "Depuis ce matin la plateforme est hors service, aucun utilisateur ne peut travailler.",
            "critical",
            "outage cue",
        ),
        (
            "support-lead@siamretail.example",
            "ログインについて",
            "本日、見覚えのない端末からログインされた形跡があります。",
            "critical",
            "security cue",
        ),
    ],
    ids=["cs-security-pro", "fr-outage-enterprise", "ja-security-enterprise"],
)
def test_the_supervisors_guards_raise_and_escalate_what_the_model_plays_down(
    runtime, sender, subject, body, urgency, cue
):
    state = run(runtime, email(sender, subject, body, f"{sender}-1"))
    assert state["supervision"]["urgency"] == urgency
    assert state["act"]["status"] == "escalated" and _replies(runtime) == []
    fired = _guards(runtime, state["trace_id"], "supervisor")
    assert f"urgency low -> {urgency}" in fired["urgency_rules"] and cue in fired["urgency_rules"]
    assert "-> escalate" in fired["escalate_at_once"]


def test_a_demand_for_a_manager_is_escalated_even_on_a_free_plan(runtime):
    body = "Your service lost my order history. I want to speak to your manager today."
    state = run(runtime, email("sam.okafor@example.org", "Orders", body, "m-1"))
    assert state["act"]["status"] == "escalated"
    assert "manager" in _guards(runtime, state["trace_id"], "supervisor")["escalate_at_once"]


def test_a_pro_billing_error_is_at_least_medium_and_goes_to_billing(runtime):
    body = "This month you charged our card for 25 seats although we only have 12."
    state = run(runtime, email("ops@brightpath.example", "Seats", body, "b-1"))
    assert state["supervision"]["urgency"] == "medium"
    assert state["supervision"]["issue_type"] == "billing"
    assert "billing" in [log.step_name for log in runtime.store.step_logs(state["trace_id"])]
    assert _replies(runtime) == [] and state["status"] == "waiting"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            "How do I export a dashboard to PDF? If not fixed I will cancel my subscription.",
            "a demand",
        ),
        ("How do I export a dashboard to PDF? Honestly your docs are useless.", "a complaint"),
        ("How do I export a dashboard to PDF? Someone logged in from an unknown IP.", "security"),
    ],
    ids=["demand", "complaint", "security"],
)
def test_no_reply_goes_out_alone_on_a_demand_a_complaint_or_a_serious_signal(runtime, body, reason):
    state = run(runtime, email("sam.okafor@example.org", "PDF export", body, f"q-{reason}"))
    assert _replies(runtime) == []
    if (state["act"] or {}).get("status") != "escalated":  # security may escalate at once
        assert any(reason in r for r in _review_reasons(runtime, state))
        assert reason in _guards(runtime, state["trace_id"])["reply_needs_person"]


def _howto(sender: str, message_id: str, **fields: Any):
    body = "How do I export a dashboard to PDF?"
    return email(sender, "PDF export", body, message_id, from_address=sender, **fields)


def test_a_clean_question_with_a_relevant_article_is_answered_without_a_person(runtime):
    headers = {"authentication-results": PASS.format(d="example.org")}
    state = run(runtime, _howto("sam.okafor@example.org", "ok-1", headers=headers))
    assert state["status"] == "done" and state["act"]["status"] == "drafted"
    assert max(state["kb_relevance"].values()) >= RELEVANCE_FLOOR
    assert "reply_needs_person" not in _guards(runtime, state["trace_id"])


def test_a_forged_sender_is_not_the_customer_it_claims(runtime):
    headers = {"authentication-results": FAIL.format(d="brightpath.example")}
    state = run(runtime, _howto("ops@brightpath.example", "forged-1", headers=headers))
    assert state["customer_known"] is True and _replies(runtime) == []
    assert any("not authenticated" in r for r in _review_reasons(runtime, state))


@pytest.mark.parametrize(
    ("sender", "imitated"),
    [("ops@brlghtpath.example", "brightpath.example"), ("help@brightlane-io.com", "brightlane.io")],
)
def test_a_look_alike_domain_is_not_the_customer_it_imitates(runtime, sender, imitated):
    headers = {"authentication-results": PASS.format(d=sender.partition("@")[2])}
    state = run(runtime, _howto(sender, f"look-{imitated}", headers=headers))
    assert state["customer_known"] is False and _replies(runtime) == []
    assert state["sender"]["lookalike_of"] == imitated
    assert any(f"imitates {imitated}" in r for r in _review_reasons(runtime, state))


def test_an_answer_no_relevant_article_backs_waits_for_a_person(runtime):
    body = "Can I change the colour of the sidebar to dark green?"
    state = run(runtime, email("sam.okafor@example.org", "Sidebar colour", body, "colour-1"))
    assert max(state["kb_relevance"].values()) < RELEVANCE_FLOOR
    assert _replies(runtime) == []
    assert any("not relevant enough" in r for r in _review_reasons(runtime, state))


def test_inboxflow_trace_names_the_guard_that_fired(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    store = SqliteCheckpointStore(tmp_path / "inboxflow.db")  # where the CLI looks under home
    runtime = build(tmp_path, llm=UnsafeModel(), store=store)
    body = "Výpadek: nikdo z nás se nemůže přihlásit, všechny přehledy jsou nedostupné."
    state = run(runtime, email("it-admin@northwind.example", "Výpadek", body, "trace-1"))
    trace_command(state["trace_id"], at=None, as_json=False, dev=False, home=tmp_path)
    shown = capsys.readouterr().out
    assert "guard urgency_rules" in shown and "guard escalate_at_once" in shown
    assert "outage cue" in shown
    runtime.store.close()

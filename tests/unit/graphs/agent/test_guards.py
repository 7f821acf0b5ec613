"""The agent's ``escalation_cues`` guard (issue 30 obs. 2): a profile's ``escalate_on`` holds
whatever the model answers. The model here is a scripted double that answers the unsafe thing
(search, reserve, draft); the messages are written for these tests, not taken from evals/."""

from __future__ import annotations

from typing import Any

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.dev.cli.inspect import trace as trace_command
from inboxflow.graphs.agent.guards import escalation_cue
from inboxflow.mail import Email
from inboxflow.ports.llm import AgentTurn, ChatMessage
from tests.harness.agent import build, calls, reply_writes, sample, start, use_profile


def crisp_mail(message: str, patient: str = "eva.dvorak@posta.example") -> Email:
    """A Crisp notification from the helpdesk (the authenticated sample's headers) with ``message``."""
    base = sample("21")
    body = (
        f"Nová zpráva od Eva Dvořák ({patient})\nWeb: Dostupnost léků\n\n{message}\n\n--\n"
        "Odpovězte na tento e-mail nebo otevřete konverzaci v Crispu: "
        "https://app.crisp.chat/website/1/inbox/session_x/\n"
    )
    return base.model_copy(
        update={"body_text": body, "message_id": f"<{abs(hash(message))}@guard.test>"}
    )


def reckless(turn: int, messages: list[ChatMessage]) -> AgentTurn:
    """A model that never escalates: searches, reserves, drafts to the patient."""
    if turn == 1:
        return AgentTurn("", calls(("search_drugs", '{"query": "Paralen"}')))
    if turn == 2:
        return AgentTurn(
            "", calls(("manage_reservation", '{"action": "create", "drug_name": "Paralen 500"}'))
        )
    if turn == 3:
        return AgentTurn(
            "",
            calls(
                (
                    "create_draft",
                    '{"to": "eva.dvorak@posta.example", "subject": "Re", "body": "Take two."}',
                )
            ),
        )
    return AgentTurn("Done.", ())


def run(tmp_path, monkeypatch, message: str, **profile: Any):
    use_profile(tmp_path, monkeypatch, reckless, **profile)
    # The home's own store file, so that ``inboxflow trace --home tmp_path`` reads it.
    runtime = build(tmp_path, store=SqliteCheckpointStore(tmp_path / "inboxflow.db"))
    trace_id = start(runtime, crisp_mail(message), "scripted")
    runtime.bus.drain()
    return runtime, runtime.store.get_trace(trace_id)


MEDICAL = [
    "Dobrý den, můžu si vzít Paralen, když beru léky na tlak?",
    "Dobry den, jsem tehotna, muzu brat Paralen?",
    "Kojím, je pro mě Ibalgin bezpečný?",
    "Kolik tablet Paralenu denně je maximum?",
    "Mé dceři jsou 3 roky a má horečku, kolik jí můžu dát?",
    "Moje tříletá dcera má teplotu, můžu jí dát Nurofen?",
    "Po Zyrtecu mám vyrážku, mám ho přestat brát?",
    "Syn spolkl několik tablet, co mám dělat?",
    "What is the right dose of Ibalgin for a 70 kg adult?",
    "Can I take Zyrtec while I'm breastfeeding?",
    "My 3-year-old has a fever, how much Nurofen can I give?",
    "Is Paralen safe during pregnancy?",
    "I got a rash after starting Xyzal, should I stop taking it?",
    "Darf ich Ibuprofen in der Schwangerschaft einnehmen?",
]


@pytest.mark.parametrize("message", MEDICAL)
def test_a_medical_question_escalates_before_any_tool_runs(tmp_path, monkeypatch, message):
    runtime, checkpoint = run(tmp_path, monkeypatch, message, escalate_on=["medical_advice"])
    state = checkpoint.state
    assert checkpoint.status == "needs_review"
    assert state["status"] == "escalated"
    assert "a medical question for a pharmacist" in state["escalation"]
    assert state["tool_log"] == []  # nothing searched, reserved or drafted
    assert reply_writes(runtime.store, checkpoint.trace_id) == []
    turn = next(
        log for log in runtime.store.step_logs(checkpoint.trace_id) if log.step_name == "agent_turn"
    )
    assert [g["guard"] for g in turn.guards] == ["escalation_cues"]
    assert "the model proposed search_drugs -> escalated" in turn.guards[0]["reason"]


@pytest.mark.parametrize(
    "message",
    [
        "To je ostuda, rezervace nebyla připravená a nikdo nevěděl proč. Podávám stížnost.",
        "I want to complain: the pharmacy had never heard of my reservation.",
    ],
)
def test_a_complaint_escalates_and_reserves_nothing(tmp_path, monkeypatch, message):
    _, checkpoint = run(tmp_path, monkeypatch, message, escalate_on=["complaint"])
    assert checkpoint.status == "needs_review"
    assert checkpoint.state["status"] == "escalated"
    assert "a complaint" in checkpoint.state["escalation"]
    assert checkpoint.state["tool_log"] == []


@pytest.mark.parametrize(
    "message",
    [
        "Dobrý den, prosím o rezervaci Paralenu 500 na Vinohradech, přijdu zítra.",
        "Hello, is Paralen 500 in stock anywhere in Brno? I'd pick it up today.",
        "Máte někde dětský sirup Nurofen? Děkuji.",
    ],
)
def test_a_stock_question_is_not_escalated(tmp_path, monkeypatch, message):
    runtime, checkpoint = run(
        tmp_path, monkeypatch, message, escalate_on=["medical_advice", "complaint"]
    )
    assert checkpoint.status == "done", checkpoint.error
    assert checkpoint.state["status"] == "completed"
    assert all(not log.guards for log in runtime.store.step_logs(checkpoint.trace_id))


def test_a_profile_that_declares_nothing_keeps_no_such_promise(tmp_path, monkeypatch):
    """The control: the same reckless model on a profile without escalate_on goes through."""
    _, checkpoint = run(tmp_path, monkeypatch, "Can I take Zyrtec while I'm breastfeeding?")
    assert checkpoint.state["status"] == "completed"
    assert [e["tool"] for e in checkpoint.state["tool_log"]][-1] == "create_draft"


def test_a_model_that_escalates_itself_is_left_alone(tmp_path, monkeypatch):
    def careful(turn: int, messages: list[ChatMessage]) -> AgentTurn:
        if turn == 1:
            return AgentTurn("", calls(("escalate", '{"reason": "dosage question"}')))
        return AgentTurn("Escalated.", ())

    use_profile(tmp_path, monkeypatch, careful, escalate_on=["medical_advice"])
    runtime = build(tmp_path)
    trace_id = start(runtime, crisp_mail("What dose of Paralen is safe?"), "scripted")
    runtime.bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.state["escalation"] == "dosage question"
    assert all(not log.guards for log in runtime.store.step_logs(trace_id))


def test_inboxflow_trace_shows_the_escalation_guard(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "300")
    _, checkpoint = run(
        tmp_path,
        monkeypatch,
        "Is Ibalgin OK to take with warfarin?",
        escalate_on=["medical_advice"],
    )
    trace_command(checkpoint.trace_id, at=None, as_json=False, dev=False, home=tmp_path)
    shown = capsys.readouterr().out
    assert "guard escalation_cues" in shown and "medical question" in shown


def test_a_chat_visitor_using_our_own_domain_gets_no_reply(tmp_path, monkeypatch):
    def obedient(turn: int, messages: list[ChatMessage]) -> AgentTurn:
        if turn == 1:
            return AgentTurn(
                "",
                calls(
                    (
                        "create_draft",
                        '{"to": "support@dostupnost-leku.cz", "subject": "Re", "body": "ok"}',
                    )
                ),
            )
        return AgentTurn("Done.", ())

    use_profile(tmp_path, monkeypatch, obedient)
    runtime = build(tmp_path)
    email = crisp_mail("Send the stock list to me.", patient="support@dostupnost-leku.cz")
    trace_id = start(runtime, email, "scripted")
    runtime.bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.state["status"] == "escalated"
    assert reply_writes(runtime.store, trace_id) == []


@pytest.mark.parametrize(
    ("kind", "text", "found"),
    [
        ("medical_advice", "妊娠中ですが、この薬を飲んでも大丈夫ですか", True),
        ("medical_advice", "¿Puedo tomar ibuprofeno durante la lactancia?", True),
        ("medical_advice", "Quelle est la posologie pour un adulte ?", True),
        ("medical_advice", "Haben Sie Zyrtec in Prag vorrätig?", False),
        ("complaint", "C'est inacceptable, personne ne connaissait ma réservation.", True),
        ("complaint", "Děkuji, rezervace proběhla v pořádku.", False),
    ],
)
def test_cues_in_other_languages(kind: str, text: str, found: bool):
    assert (escalation_cue(kind, text) is not None) is found

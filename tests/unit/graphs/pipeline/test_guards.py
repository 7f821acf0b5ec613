# ruff: noqa: RUF001  (the fullwidth marks are the data)
"""The pipeline's guards on classify (issue 30 obs. 3): complaint cues, look-alike senders and
forwards reach a person whatever the model answers; the step log and ``inboxflow trace`` say
which guard fired and why. The wording here is written for these tests, not taken from evals/."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.clock import FakeClock
from inboxflow.dev.cli.inspect import trace as trace_command
from inboxflow.engine.step import END, Step
from inboxflow.graphs.pipeline import guards, initial_state
from inboxflow.graphs.pipeline import offline as pipeline_offline
from inboxflow.graphs.pipeline.graph import PIPELINE
from inboxflow.graphs.pipeline.state import COMPLAINT_FLAG, Classification, PipelineState
from inboxflow.graphs.pipeline.tasks import IntentAnswer
from inboxflow.mail import Address, Email
from tests.harness.runtimes import runtime_for

MAILBOX = "owner@quillfield.example"


def email(
    body: str,
    subject: str = "Hello",
    sender: str = "pat@customer.example",
    name: str = "Pat Doe",
    to_name: str = "Robin Owner",
) -> Email:
    return Email(
        message_id=f"<{abs(hash((body, subject, sender)))}@customer.example>",
        thread_id="t-1",
        mailbox=MAILBOX,
        sender=Address(name=name, address=sender),
        to=[Address(name=to_name, address=MAILBOX)],
        subject=subject,
        body_text=body,
        received_at=datetime(2027, 2, 1, 9, 0, tzinfo=UTC),
    )


def proposed(category: str, confidence: float = 0.95, goto: str = "retrieve") -> Step:
    said = Classification(category=category, confidence=confidence)  # type: ignore[arg-type]
    return Step(update={"classification": said}, goto=goto)


def state_of(message: Email) -> PipelineState:
    return PipelineState(email=message)


# --- complaint_review, rule by rule -----------------------------------------------------------

COMPLAINTS = [
    ("en", "Your app took the annual fee from our card twice. I want a refund for one of them."),
    ("en", "Honestly I'm disappointed, the sync has been broken since Monday."),
    ("en", "Please cancel my subscription at the end of this month."),
    ("cs", "Dobrý den, zaplatili jsme dvakrát a chceme vrácení peněz za druhou platbu."),
    ("cs", "Jsme s vaší službou velmi nespokojeni, aplikace přestala fungovat."),
    ("cs", "Jsme s vasi sluzbou velmi nespokojeni."),  # no diacritics, as many Czechs type
    ("de", "Die Rückerstattung des doppelt abgebuchten Betrags steht noch aus."),
    ("de", "Ich möchte meinen Vertrag kündigen, der Export ist seit Tagen kaputt."),
    ("fr", "Nous avons été prélevés deux fois, merci de nous rembourser."),
    ("fr", "Franchement, je suis mécontente du service."),
    ("es", "Quiero presentar una queja: la factura está mal y pido el reembolso."),
    ("es", "Estoy muy decepcionada con la aplicación."),
    ("ja", "先月の料金が二重請求になっていました。返金をお願いします。"),
    ("ja", "サービスの対応に不満があります。"),
]


@pytest.mark.parametrize(("lang", "body"), COMPLAINTS)
def test_a_complaint_cue_flags_any_category_for_review(lang: str, body: str):
    verdict = guards.complaint_review(state_of(email(body)), proposed("inquiry"), None)  # type: ignore[arg-type]
    assert verdict is not None
    flagged = verdict.step.update["classification"]
    assert COMPLAINT_FLAG in flagged.flags and flagged.is_complaint
    assert flagged.category == "inquiry"  # the model's category stays; the flag decides
    assert verdict.step.goto == "retrieve"
    assert f"({lang})" in verdict.reason and "reviewed by a person" in verdict.reason


def test_a_complaint_the_model_would_end_unanswered_goes_on_to_review():
    message = email("Thanks. Still, charging us twice is unacceptable.")
    ended = Step(
        update={
            "classification": Classification(category="other", confidence=0.9, needs_reply=False),
            "end_reason": "no reply needed",
        },
        goto=END,
    )
    verdict = guards.complaint_review(state_of(message), ended, None)  # type: ignore[arg-type]
    assert verdict is not None
    assert verdict.step.goto == "retrieve"
    assert "end_reason" not in verdict.step.update
    assert verdict.step.update["classification"].needs_reply is True
    assert "would end unanswered" in verdict.reason


@pytest.mark.parametrize(
    "body",
    [
        "Could we move Thursday's call to Friday afternoon?",
        "What does the Pro plan cost for eight people, billed yearly?",
        "Thanks, the refurbished laptop arrived.",  # "refurbished" is no "refund"
    ],
)
def test_no_complaint_cue_no_verdict(body: str):
    assert guards.complaint_review(state_of(email(body)), proposed("inquiry"), None) is None  # type: ignore[arg-type]


def test_a_complaint_the_model_recognised_needs_no_verdict():
    message = email("I want a refund.")
    assert guards.complaint_review(state_of(message), proposed("complaint"), None) is None  # type: ignore[arg-type]


# --- lookalike_sender and forwarded_review ----------------------------------------------------


@pytest.mark.parametrize(
    ("sender", "name", "why"),
    [
        ("robin@quillfield-example.com", "Robin Owner", "imitates quillfield.example"),
        ("robin@qui11field.example", "Robin", "imitates quillfield.example"),
        ("ops@quilfield.example", "Ops", "imitates quillfield.example"),
        ("owner@gmail.example", "Someone", "own name owner@"),
        ("r.owner@mailbox.example", "Robin Owner", "mailbox owner's name"),
        ("alerts@amaz0n-billing.example", "Billing", "spells"),
        ("help@notice.example", "Micros0ft Account Team", "spells"),
    ],
)
def test_a_lookalike_sender_is_flagged(sender: str, name: str, why: str):
    message = email("Please update the payment details today.", sender=sender, name=name)
    verdict = guards.lookalike_sender(state_of(message), proposed("inquiry"), None)  # type: ignore[arg-type]
    assert verdict is not None, sender
    assert guards.LOOKALIKE_FLAG in verdict.step.update["classification"].flags
    assert why in verdict.reason


@pytest.mark.parametrize(
    ("sender", "name"),
    [
        ("colleague@quillfield.example", "A Colleague"),
        ("pat@customer.example", "Pat Doe"),
        ("team@studio42.example", "Studio 42"),
        ("sales@b2b-supplies.example", "B2B Supplies"),
        ("it@eu.quillfield.example", "IT"),
    ],
)
def test_ordinary_senders_are_not_lookalikes(sender: str, name: str):
    message = email("A question about invoices.", sender=sender, name=name)
    assert guards.lookalike_sender(state_of(message), proposed("inquiry"), None) is None  # type: ignore[arg-type]


def test_a_lookalike_spam_end_stays_an_end():
    message = email("Verify now.", sender="robin@quillfield-example.com", name="Robin Owner")
    ended = proposed("spam", goto=END)
    assert guards.lookalike_sender(state_of(message), ended, None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("subject", "body"),
    [
        ("WG: Frage zur Rechnung", "Kannst du das beantworten?"),
        ("Question", "See below.\n\n---------- Forwarded message ---------\nFrom: x@y.example\n"),
        ("Dotaz", "Přeposílám.\n\n---------- Přeposlaná zpráva ----------\nOd: a@b.example\n"),
    ],
)
def test_a_forward_is_flagged(subject: str, body: str):
    verdict = guards.forwarded_review(
        state_of(email(body, subject=subject)),
        proposed("inquiry"),
        None,  # type: ignore[arg-type]
    )
    assert verdict is not None
    assert guards.FORWARDED_FLAG in verdict.step.update["classification"].flags


# --- through the runtime: a model double that answers the unsafe thing ------------------------


def unsafe_model(category: str, confidence: float = 0.97):
    def answer(inputs: Any) -> IntentAnswer:
        return IntentAnswer(category=category, confidence=confidence, evidence=["the double"])  # type: ignore[arg-type]

    return answer


def run_pipeline(tmp_path: Path, message: Email) -> tuple[Any, str]:
    bus = InProcessBus(clock=FakeClock())
    runtime = runtime_for(tmp_path, graphs={"pipeline": PIPELINE}, bus=bus)
    trace_id = runtime.start("pipeline", initial_state(message))
    bus.drain()
    return runtime, trace_id


def test_a_confident_inquiry_with_a_complaint_cue_waits_for_a_person(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(pipeline_offline, "classify_offline", unsafe_model("inquiry"))
    message = email(
        "Hi, we were billed twice this month. Could you tell me how I get my money back?",
        subject="Billing question",
    )
    runtime, trace_id = run_pipeline(tmp_path, message)
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "waiting"
    assert checkpoint.state["classification"]["category"] == "inquiry"
    assert COMPLAINT_FLAG in checkpoint.state["classification"]["flags"]
    assert checkpoint.state["draft"]["tone"] == "empathetic"
    assert "complaints are always approved by a human" in checkpoint.state["review"]["reasons"]
    assert checkpoint.state.get("dispatch") is None
    classify_log = runtime.store.step_logs(trace_id)[1]
    assert classify_log.step_name == "classify"
    assert [g["guard"] for g in classify_log.guards] == ["complaint_review"]
    assert "billed twice" in classify_log.guards[0]["reason"]

    monkeypatch.setenv("COLUMNS", "300")
    trace_command(trace_id, at=None, as_json=False, dev=False, home=tmp_path)
    shown = capsys.readouterr().out
    assert "guard complaint_review" in shown and "billed twice" in shown


def test_a_lookalike_sender_the_model_trusts_waits_for_a_person(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline_offline, "classify_offline", unsafe_model("inquiry"))
    message = email(
        "Please send me the updated bank details for the supplier today.",
        sender="robin.owner@quillfield-example.com",
        name="Robin Owner",
    )
    runtime, trace_id = run_pipeline(tmp_path, message)
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "waiting"
    assert "flagged: lookalike_sender" in checkpoint.state["review"]["reasons"]
    assert [g["guard"] for g in runtime.store.step_logs(trace_id)[1].guards] == ["lookalike_sender"]


# --- the offline classifier in six languages (paraphrases written for this test) -------------

CLASSIFIED = [
    ("en", "We were double-charged for March and the report export is broken again.", "complaint"),
    ("cs", "Jsem nespokojený, export opět nefunguje a chci vrácení peněz.", "complaint"),
    ("de", "Ich bin sehr enttäuscht: Sie haben zweimal abgebucht. Bitte erstatten.", "complaint"),
    ("fr", "C'est inacceptable, vous nous avez débité deux fois ce mois-ci.", "complaint"),
    ("es", "Nos cobraron dos veces y exijo el reembolso, es inaceptable.", "complaint"),
    ("ja", "今月の料金が二重請求されています。返金してください。", "complaint"),
    (
        "en",
        "Could we set up a meeting on Tuesday afternoon to go over the rollout?",
        "meeting_request",
    ),
    ("cs", "Můžeme si domluvit schůzku ve čtvrtek odpoledne?", "meeting_request"),
    (
        "de",
        "Können wir am Montag einen Termin für ein kurzes Telefonat vereinbaren?",
        "meeting_request",
    ),
    ("fr", "Pourrions-nous fixer un rendez-vous mardi matin ?", "meeting_request"),
    ("es", "¿Podemos tener una reunión el jueves por la mañana?", "meeting_request"),
    ("ja", "来週の水曜日に打ち合わせのお時間をいただけますでしょうか。", "meeting_request"),
    ("cs", "Kolik stojí licence pro deset uživatelů?", "inquiry"),
    ("es", "¿Cuánto cuesta el plan anual y ofrecen descuento?", "inquiry"),
    ("ja", "請求書の送付方法を教えていただけますか？", "inquiry"),
]


@pytest.mark.parametrize(("lang", "body", "category"), CLASSIFIED)
def test_the_offline_classifier_reads_six_languages(lang: str, body: str, category: str):
    answer = pipeline_offline.classify_offline({"subject": "", "body": body, "headers": ""})
    assert answer.category == category, answer.evidence


def test_a_deadline_weekday_is_no_meeting_request():
    body = "Please confirm the cost centre for order 5521 by Thursday so we can pay it."
    answer = pipeline_offline.classify_offline({"subject": "Order 5521", "body": body})
    assert answer.category == "inquiry", answer.evidence
    assert not any("day named" in line for line in answer.evidence)


def test_meeting_hints_in_other_languages():
    hints = pipeline_offline.extract_meeting_hints(
        "¿Una reunión de media hora el miércoles por la tarde?"
    )
    assert hints == {
        "duration_minutes": 30,
        "preferred_weekdays": ["wednesday"],
        "part_of_day": "afternoon",
    }
    czech = pipeline_offline.extract_meeting_hints("schůzka v pondělí dopoledne, 45 minut")
    assert czech == {
        "duration_minutes": 45,
        "preferred_weekdays": ["monday"],
        "part_of_day": "morning",
    }


def test_a_weak_match_is_not_confident():
    answer = pipeline_offline.classify_offline({"subject": "", "body": "Is there a way?"})
    assert answer.confidence < 0.8

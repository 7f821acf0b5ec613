"""The assistant's guards on triage (``graphs/assistant/guards.py``), driven by the Gemini REST
double answering the unsafe thing (``respond``) through google-genai: a money request from a
look-alike or unauthenticated sender, and a thank-you, reach the owner as ``notify`` with no
reply started; the step log and ``inboxflow trace`` say which guard fired. And the meeting asked
for (day, time of day, length) is the one proposed, on the offline model."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.dev.cli.inspect import trace as trace_command
from inboxflow.dev.doubles.gemini_api import GeminiDouble, Reply, start_gemini_double
from inboxflow.engine.runtime import Runtime
from inboxflow.mail import Email
from inboxflow.services import make_store
from tests.harness.agent import build
from tests.harness.assistant import pending, sample, start, state
from tests.harness.mail_auth import gmail_pass
from tests.harness.runtimes import embedded_settings

RESPOND = Reply.json(
    {"reasoning": "a person asks the owner for something", "classification": "respond"}
)


def _mail(sender: str, subject: str, body: str, authenticated: bool = True) -> Email:
    headers = {"authentication-results": gmail_pass(sender)} if authenticated else {}
    return sample("33").model_copy(
        update={
            "sender": sample("33").sender.model_copy(update={"address": sender, "name": "Sender"}),
            "from_address": sender,
            "subject": subject,
            "body_text": body,
            "headers": headers,
            "message_id": f"{subject.replace(' ', '-')}@test",
            "thread_id": subject.replace(" ", "-"),
        }
    )


@pytest.fixture
def gemini(tmp_path) -> Iterator[tuple[GeminiDouble, Runtime]]:
    with start_gemini_double(api_key="k") as double:
        settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
        model = GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))
        store = make_store(embedded_settings(tmp_path))  # where ``inboxflow trace`` looks
        yield double, build(tmp_path, store=store, llm=model)


def _triage_guards(runtime: Runtime, trace_id: str) -> list[dict[str, str]]:
    [triage] = [s for s in runtime.store.step_logs(trace_id) if s.step_name == "triage_router"]
    return triage.guards


@pytest.mark.parametrize(
    ("sender", "authenticated", "why"),
    [
        ("ceo@brightlane-payments.com", True, "imitates brightlane.io"),
        ("ceo.office@outlook.example", False, "not authenticated"),
    ],
)
def test_a_money_request_from_a_sender_who_may_be_someone_else_is_not_answered(
    gemini, tmp_path, capsys, monkeypatch, sender, authenticated, why
):
    double, runtime = gemini
    double.script(RESPOND)
    body = (
        "Alex, I'm stuck in a board session. I need you to arrange a wire transfer of "
        "$12,500 to our new supplier before 3pm and confirm by email. Don't call, just do it."
    )
    trace_id = start(runtime, _mail(sender, "Urgent task", body, authenticated))
    found = state(runtime, trace_id)
    assert found["classification"] == "notify"
    assert found["tool_log"] == [] and found["pending_calls"] == []
    assert pending(runtime, trace_id).kind == "notify"
    [fired] = _triage_guards(runtime, trace_id)
    assert fired["guard"] == "impostor_money"
    assert why in fired["reason"] and "wire transfer" in fired["reason"]
    monkeypatch.setenv("COLUMNS", "300")
    trace_command(trace_id, at=None, as_json=False, dev=False, home=tmp_path)
    assert "guard impostor_money" in capsys.readouterr().out


def test_the_same_request_from_an_authenticated_colleague_is_left_to_the_model(gemini):
    double, runtime = gemini
    double.script(RESPOND)
    body = "Hi Alex, can you approve the wire transfer to Acme for the March invoice?"
    trace_id = start(runtime, _mail("sam.ortiz@brightlane.io", "Acme invoice", body))
    assert state(runtime, trace_id)["classification"] == "respond"
    assert _triage_guards(runtime, trace_id) == []


@pytest.mark.parametrize(
    "body",
    [
        "Thanks so much for the call on Tuesday, it cleared up a lot. Talk soon!",
        "Moc děkuji za včerejší schůzku, bylo to užitečné.",
    ],
)
def test_a_thank_you_is_not_answered_whatever_the_model_says(gemini, body):
    double, runtime = gemini
    double.script(RESPOND)
    trace_id = start(runtime, _mail("dana.lee@partnerco.example", "Thank you", body))
    found = state(runtime, trace_id)
    assert found["classification"] == "notify"
    assert pending(runtime, trace_id).kind == "notify"
    assert [g["guard"] for g in _triage_guards(runtime, trace_id)] == ["thanks_not_answered"]


def test_a_thank_you_with_a_question_is_answered(gemini):
    double, runtime = gemini
    double.script(RESPOND)
    body = "Thanks for the call! Could you send me the deck from today?"
    trace_id = start(runtime, _mail("dana.lee@partnerco.example", "Deck", body))
    assert state(runtime, trace_id)["classification"] == "respond"
    assert _triage_guards(runtime, trace_id) == []


def test_the_meeting_proposed_is_the_day_time_of_day_and_length_asked_for(tmp_path):
    runtime = build(tmp_path)
    body = (
        "Hi Alex,\n\nCould we book a session of an hour and a half on Wednesday morning to "
        "plan the launch? Anything before 11:30 suits me.\n\nDana"
    )
    email = _mail("dana.lee@partnerco.example", "Launch planning", body).model_copy(
        update={"received_at": datetime.fromtimestamp(runtime.clock.now() - 3600, UTC)}
    )
    assert email.received_at.date() == date(2027, 1, 15)  # a Friday: Wednesday is next week's
    trace_id = start(runtime, email)
    review = pending(runtime, trace_id)
    assert review.payload["tool"] == "schedule_meeting"
    assert review.payload["preferred_day"] == "2027-01-20"
    assert "09:00" <= review.payload["start_time"] <= "10:00"
    assert review.payload["duration_minutes"] == "90"

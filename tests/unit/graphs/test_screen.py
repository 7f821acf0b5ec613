"""The safety screen through the runtime and the strict Gemini double: findings are kept as
the model reported them, and every way the model can fail gives a ``failed`` report (a
person reads the email), never a silent pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from inboxflow.adapters.gemini_llm import GeminiModel, GeminiSettings, RetryPolicy
from inboxflow.adapters.inprocess_bus import InProcessBus
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.gemini_api import GeminiDouble, Reply, start_gemini_double
from inboxflow.engine.context import NodeContext
from inboxflow.engine.graph import Graph, Node
from inboxflow.engine.runtime import Runtime
from inboxflow.engine.step import END, Step
from inboxflow.graphs.screen import ScreenReport, screen_email, screen_offline
from inboxflow.ports.llm import LanguageModel
from tests.harness.runtimes import runtime_for

CUE_LANGUAGES = ("cs", "de", "en", "es", "fr", "ja")


class MailState(BaseModel):
    schema_version: int = 1
    subject: str = ""
    body: str = ""
    screen: ScreenReport | None = None


def read(state: MailState, ctx: NodeContext) -> Step:
    report = screen_email(ctx, "ana@example.com", state.subject, state.body, CUE_LANGUAGES)
    return Step(update={"screen": report}, goto=END)


GRAPH = Graph.build(
    "screened", "read", MailState, [Node("read", read, routes=(END,), uses_llm=True)]
)


@pytest.fixture
def double() -> Iterator[GeminiDouble]:
    with start_gemini_double() as running:
        yield running


def gemini(double: GeminiDouble) -> GeminiModel:
    settings = GeminiSettings(mode="api_key", api_key="k", base_url=double.base_url)
    return GeminiModel(settings, retry=RetryPolicy(sleep=lambda s: None))


def screened(
    tmp_path: Path, llm: LanguageModel, subject: str, body: str
) -> tuple[ScreenReport, Runtime, str]:
    clock = FakeClock()
    bus = InProcessBus(clock=clock)
    runtime = runtime_for(
        tmp_path,
        clock=clock,
        graphs={"screened": GRAPH},
        store=SqliteCheckpointStore(tmp_path / "screen.db"),
        bus=bus,
        llm=llm,
    )
    trace_id = runtime.start("screened", {"subject": subject, "body": body})
    bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done", checkpoint.error
    return ScreenReport.model_validate(checkpoint.state["screen"]), runtime, trace_id


TAKEOVER = "Alguém parece estar usando minha conta; vejo acessos de lugares onde nunca estive."
FINDING = {
    "kind": "security_incident",
    "quote": "Alguém parece estar usando minha conta",
    "language": "pt",
}


def test_findings_come_back_as_the_model_reported_them(tmp_path, double):
    double.script(Reply.json({"findings": [FINDING], "language": "pt", "readable": True}))
    report, runtime, trace_id = screened(tmp_path, gemini(double), "Conta", TAKEOVER)

    assert report.status == "read" and report.kinds == {"security_incident"}
    assert report.findings[0].quote == FINDING["quote"] and report.language == "pt"
    assert report.model == "gemini-3.5-flash-lite" and not report.needs_person
    assert 'security_incident "Alguém parece' in report.explain()
    (call,) = runtime.store.step_logs(trace_id)[1].llm_calls
    assert call["task"] == "screen" and call["outcome"] == "ok"
    prompt = double.calls()[0].body["contents"][0]["parts"][0]["text"]
    assert prompt.index("Kinds of risk") < prompt.index(TAKEOVER)  # shared prefix first


def test_a_screen_that_misses_reports_nothing_found(tmp_path, double):
    double.script(Reply.json({"findings": [], "language": "pt", "readable": True}))
    report, _, _ = screened(tmp_path, gemini(double), "Conta", TAKEOVER)
    assert report.status == "read" and report.findings == []
    assert report.explain() == "screen found nothing"


@pytest.mark.parametrize(
    "replies, why",
    [
        ([Reply.error(500)] * 9, "unavailable"),
        ([Reply.quota(0.0)] * 9, "429"),
        ([Reply.blocked()], "block"),
        ([Reply.safety()], "SAFETY"),
        ([Reply.raw("not json"), Reply.raw("still not json")], "schema"),
        ([Reply.json({"findings": [{"kind": "gossip"}]})] * 2, "schema"),
    ],
    ids=["down", "rate-limited", "blocked", "safety-stop", "unreadable", "off-schema"],
)
def test_every_failure_of_the_model_fails_safe(tmp_path, double, replies, why):
    double.script(*replies)
    report, _, _ = screened(tmp_path, gemini(double), "Conta", TAKEOVER)
    assert report.status == "failed" and report.needs_person
    assert report.reason.startswith("screen:") and why.lower() in report.reason.lower()
    assert report.explain().startswith("screen failed: screen:")


def test_a_model_that_cannot_read_the_mail_hands_it_to_a_person(tmp_path, double):
    double.script(Reply.json({"findings": [], "language": "und", "readable": False}))
    report, _, _ = screened(tmp_path, gemini(double), "?", "ꙮꙮꙮ")
    assert report.status == "unread" and report.needs_person
    assert "could not read" in report.reason


def test_offline_reads_only_languages_it_has_cue_lists_for(tmp_path):
    english, _, _ = screened(
        tmp_path / "en", OfflineModel(), "Account", "Someone else seems to be using my account."
    )
    assert english.status == "read" and english.language == "en" and english.findings == []
    finnish, _, _ = screened(
        tmp_path / "fi",
        OfflineModel(),
        "Tili",
        "Joku muu näyttää käyttävän tiliäni, en tunnista näitä kirjautumisia.",
    )
    assert finnish.status == "unread" and finnish.language == "fi"
    assert finnish.reason == "language 'fi' has no cue list: a person reads it"


def test_offline_screen_without_letters_is_unread():
    answer = screen_offline({"subject": "", "text": "12345 ---", "cue_languages": "en"})
    assert not answer.readable and answer.language == "und"


def test_only_the_start_of_a_long_mail_is_sent(tmp_path, double):
    double.script(Reply.json({"findings": [], "language": "en", "readable": True}))
    screened(tmp_path, gemini(double), "Long", "x " * 20_000)
    prompt: Any = double.calls()[0].body["contents"][0]["parts"][0]["text"]
    assert len(prompt) < 10_000


def test_cue_languages_are_the_language_files_only():
    from inboxflow.graphs.word_data import cue_languages

    assistant = cue_languages("inboxflow.graphs.assistant.cues")
    assert {"en", "de", "cs", "ja"} <= assistant and "when" not in assistant
    assert all(len(code) == 2 for code in assistant)

"""Each graph's screen floor, end to end through google-genai and the strict Gemini double
(issue 41): the screen is scripted to find a risk (or to miss it, or to fail), the graph's own
tasks are scripted to miss it, and the outcome is read as ``inboxflow eval`` reads it.

Every floor is shown twice: with the finding the outcome reaches the floor, and with the
same mail and the same graph answers but no finding it does not (so the floor is the
screen's doing, not the graph's).
"""

from __future__ import annotations

from collections.abc import Mapping
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from inboxflow.dev.doubles.gemini_api import (
    GenerateCall,
    TaskOracle,
    double_environment,
    start_gemini_double,
)
from inboxflow.dev.eval.cases import load_eval_set
from inboxflow.dev.eval.runner import CaseResult, RunOptions, run_cases
from inboxflow.graphs.screen import SCREEN
from tests.harness.mail_auth import gmail_pass

REPO = Path(__file__).resolve().parents[3]
AGENT_SAMPLE = REPO / "shared/inboxflow/graphs/agent/samples/inbox/22-crisp-en-availability.eml"


class Scripted(TaskOracle):
    """The screen answers ``screen`` (kinds found; ``"garbage"``: an answer off its schema);
    tasks named in ``answers`` answer as given (the graph's model missing the risk); the
    rest answer with their offline heuristic."""

    def __init__(self, screen: list[str] | str, answers: Mapping[str, Any]) -> None:
        super().__init__()
        self.screen = screen
        self.by_system = {task.system.strip(): task.name for task, _ in self.tasks}
        self.answers = answers

    def __call__(self, call: GenerateCall) -> Mapping[str, Any] | BaseModel:
        if call.system.strip() == SCREEN.system.strip():
            if self.screen == "garbage":
                return {"findings": "none", "readable": "maybe"}
            found = [{"kind": k, "quote": "the words", "language": "en"} for k in self.screen]
            return {"findings": found, "language": "en", "readable": True}
        name = self.by_system.get(call.system.strip())
        if name in self.answers:
            return dict(self.answers[name])
        return super().__call__(call)


def mail(to: str, subject: str, body: str, sender: str = "dana.reyes@fieldmark.example") -> bytes:
    message = EmailMessage()
    message["From"] = f"Dana Reyes <{sender}>"
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = "Thu, 14 Jan 2027 09:00:00 +0000"
    message["Message-ID"] = f"<{abs(hash(subject))}@fieldmark.example>"
    message["Authentication-Results"] = gmail_pass(sender)
    message.set_content(body)
    return bytes(message)


def run(
    tmp_path: Path,
    eml: bytes,
    expect: Mapping[str, Any],
    screen: list[str] | str,
    answers: Mapping[str, Any] | None = None,
) -> CaseResult:
    (tmp_path / "mail").mkdir(parents=True, exist_ok=True)
    (tmp_path / "mail/case.eml").write_bytes(eml)
    case = {"id": "case", "mail": "mail/case.eml", "expect": dict(expect)}
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump({"cases": [case]}), encoding="utf-8")
    with start_gemini_double(responder=Scripted(screen, answers or {})) as double:
        options = RunOptions(
            model="gemini", config=REPO / "inboxflow.yaml", environ=double_environment(double)
        )
        (result,) = run_cases(load_eval_set(tmp_path).cases, options, jobs=1)
    assert result.error is None, result.notes
    return result


def holds(result: CaseResult) -> bool:
    return result.passed


SUPERVISOR_MISSES = {
    "support_supervise": {
        "urgency": "low",
        "issue_type": "general",
        "requires_escalation": False,
        "signals": [],
        "reasoning": "a how-to question",
    }
}
TAKEOVER = mail(
    "support@brightlane.io",
    "Odd activity",
    "Hi, somebody other than me seems to be getting into my workspace: there are boards "
    "I never made and my name is on changes from a city I have never been to.\nDana",
)


def test_support_security_finding_is_critical_and_escalated(tmp_path):
    floor = {"graph": "support", "urgency": "critical", "action": "escalate"}
    assert holds(run(tmp_path / "a", TAKEOVER, floor, ["security_incident"], SUPERVISOR_MISSES))
    missed = run(tmp_path / "b", TAKEOVER, floor, [], SUPERVISOR_MISSES)
    assert missed.outcome["urgency"] == "low" and missed.outcome["action"] != "escalate"


def test_support_legal_threat_finding_escalates(tmp_path):
    floor = {"graph": "support", "urgency": ["high", "critical"], "action": "escalate"}
    assert holds(run(tmp_path, TAKEOVER, floor, ["legal_threat"], SUPERVISOR_MISSES))


CLASSIFY_MISSES = {
    "classify_intent": {
        "category": "inquiry",
        "confidence": 0.97,
        "evidence": [],
        "flags": [],
        "needs_reply": True,
    }
}
VEILED = mail(
    "hello@brightlane.io",
    "Invoice 2291",
    "Good morning,\nthe documents concerning invoice 2291 are now with our counsel, who "
    "will be in touch should we not hear from you by Friday.\nRegards, Dana",
)


def test_pipeline_legal_finding_is_reviewed_never_sent(tmp_path):
    floor = {"graph": "pipeline", "reviewed": True, "sent": []}
    assert holds(run(tmp_path / "a", VEILED, floor, ["legal_threat"], CLASSIFY_MISSES))
    missed = run(tmp_path / "b", VEILED, floor, [], CLASSIFY_MISSES)
    assert not missed.outcome["reviewed"]


def test_pipeline_screen_failure_sends_the_email_to_a_person(tmp_path, caplog):
    result = run(
        tmp_path, VEILED, {"graph": "pipeline", "reviewed": True}, "garbage", CLASSIFY_MISSES
    )
    assert holds(result)
    (classify,) = [s for s in result.steps if s["node"] == "classify"]
    assert classify["llm"] == ["classify_intent", "screen"]
    fired = [r.getMessage() for r in caplog.records if "guard screen_review" in r.getMessage()]
    assert fired and "screen failed: screen: output did not match schema" in fired[0]


IMPOSTOR = mail(
    "alex@brightlane.io",
    "Quick favour",
    "Alex, are you at your desk? I need you to handle a small purchase for a client "
    "today, discreetly. Reply with your mobile number and I will explain.\nM.",
    sender="m.okafor@brightlane-io.example",
)


@pytest.mark.parametrize("said", ["respond", "ignore"])
def test_assistant_impostor_finding_notifies_whatever_the_triage_said(tmp_path, said):
    answers = {"triage_email": {"reasoning": "a colleague asks", "classification": said}}
    floor = {"graph": "assistant", "triage": "notify", "sent": []}
    assert holds(run(tmp_path / "a", IMPOSTOR, floor, ["fraud"], answers))
    missed = run(tmp_path / "b", IMPOSTOR, floor, [], answers)
    assert missed.outcome["triage"] == said


SOLD = mail(
    "quotes@brightlane.io",
    "Our Camry",
    "Hello, we handed the Camry over to its new owner on Saturday, so it no longer needs "
    "to be on our policy. Thanks, Dana",
)


def test_planner_cover_change_finding_goes_to_the_agency(tmp_path):
    floor = {"graph": "planner", "action": "request_human_review"}
    assert holds(run(tmp_path, SOLD, floor, ["cover_change"]))


def test_agent_medical_finding_goes_to_the_pharmacist(tmp_path):
    floor = {"graph": "agent", "escalated": True, "sent": [], "drafted": []}
    eml = AGENT_SAMPLE.read_bytes()
    assert holds(run(tmp_path / "a", eml, floor, ["medical"]))
    missed = run(tmp_path / "b", eml, floor, [])
    assert missed.outcome["escalated"] is False


class ScreensReplies(Scripted):
    """The screen finds ``kinds`` only in a customer's reply (the planner screens a reply with
    the subject ``(a reply)``), nothing in the first email."""

    def __init__(self, kinds: list[str]) -> None:
        super().__init__([], {})
        self.kinds = kinds
        self.screened: list[str] = []

    def __call__(self, call: GenerateCall) -> Mapping[str, Any] | BaseModel:
        if call.system.strip() == SCREEN.system.strip():
            reply = "Subject: (a reply)" in call.prompt
            self.screened.append("reply" if reply else "first")
            found = self.kinds if reply else []
            kinds = [{"kind": k, "quote": "the words", "language": "nl"} for k in found]
            return {"findings": kinds, "language": "nl", "readable": True}
        return super().__call__(call)


@pytest.mark.parametrize(
    ("kinds", "action"), [(["cover_change"], "request_human_review"), ([], "ask_customer")]
)
def test_planner_screens_the_customers_reply_too(tmp_path, kinds, action):
    """A claim the customer writes in a reply to the planner's question goes to the agency as
    one in the first email does; without it the planner asks for what is still missing."""
    reading = REPO / "evals/reading/mail"
    (tmp_path / "mail").mkdir()
    names = []
    for part in (1, 2):
        name = f"mail/conv-{part}.eml"
        source = reading / f"conv-nl-dob-then-vin-missing-{part}.eml"
        (tmp_path / name).write_bytes(source.read_bytes())
        names.append(name)
    case = {"id": "case", "mail": names, "decide": ["approve"], "expect": {"action": action}}
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump({"cases": [case]}), encoding="utf-8")
    responder = ScreensReplies(kinds)
    with start_gemini_double(responder=responder) as double:
        options = RunOptions(
            model="gemini", config=REPO / "inboxflow.yaml", environ=double_environment(double)
        )
        (result,) = run_cases(load_eval_set(tmp_path).cases, options, jobs=1)
    assert result.error is None, result.notes
    assert responder.screened == ["first", "reply"]  # each email once, however often it loops
    assert result.passed, result.checks

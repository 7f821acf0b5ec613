"""The email pipeline graph end to end on the embedded default and the offline model."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus, SimulatedCrash
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.clock import FakeClock
from inboxflow.engine.runtime import Runtime
from inboxflow.engine.step import END
from inboxflow.graphs.pipeline import initial_state
from inboxflow.graphs.pipeline.graph import PIPELINE
from inboxflow.graphs.pipeline.settings import PipelineSettings
from inboxflow.mail import TRACE_HEADER, email_from_json, load_email_file, sample_inbox_dir
from inboxflow.mail_stamps import DEFAULT_DOMAIN as DOMAIN
from inboxflow.mail_stamps import stamp_of
from inboxflow.workspace import seed_workspace
from tests.harness.mail_auth import gmail_pass
from tests.harness.runtimes import runtime_for

FULL = ["classify", "retrieve", "decide", "execute_tools", "generate", "review"]
NO_TOOLS = ["classify", "retrieve", "decide", "generate", "review"]
AUTO = [*FULL, "dispatch", END]
WAIT = [*FULL, "pause:approve_draft"]

# sample -> (category, route: step names then where the last one routed, final status)
ROUTES: dict[str, tuple[str, list[str], str]] = {
    "01-pricing-inquiry.eml": ("inquiry", AUTO, "done"),
    "02-pdf-export-howto.json": ("inquiry", AUTO, "done"),
    "03-meeting-request.eml": ("meeting_request", AUTO, "done"),
    "04-complaint-double-charge.eml": ("complaint", WAIT, "waiting"),
    "05-complaint-prompt-injection.json": ("complaint", WAIT, "waiting"),
    "06-follow-up-security-questionnaire.eml": ("follow_up", AUTO, "done"),
    "07-newsletter-bulk.eml": ("spam", ["classify", END], "done"),
    "08-obvious-spam.eml": ("spam", ["classify", END], "done"),
    "09-seo-cold-pitch.json": ("spam", [*NO_TOOLS, "pause:approve_draft"], "waiting"),
    "10-ambiguous-hotel-group.eml": ("inquiry", WAIT, "waiting"),
    "11-html-only-nonprofit.eml": ("inquiry", AUTO, "done"),
    "12-latin1-follow-up.eml": ("follow_up", AUTO, "done"),
    "13-other-thank-you.json": ("other", ["classify", END], "done"),
    "14-meeting-demo-request.json": ("meeting_request", AUTO, "done"),
    "15-complaint-exports-broken.eml": ("complaint", WAIT, "waiting"),
    "16-follow-up-renewal.json": ("follow_up", AUTO, "done"),
}


@dataclass
class Harness:
    runtime: Runtime
    bus: InProcessBus
    store: SqliteCheckpointStore
    workspace: StoreWorkspace
    clock: FakeClock

    def start(self, name: str) -> str:
        email = load_email_file(sample_inbox_dir() / name)
        return self.runtime.start("pipeline", initial_state(email))

    def run(self, name: str) -> str:
        trace_id = self.start(name)
        self.bus.drain()
        return trace_id

    def route(self, trace_id: str) -> list[str]:
        logs = self.store.step_logs(trace_id)[1:]
        return [entry.step_name for entry in logs] + [logs[-1].routed_to or "?"]

    def writes(self, trace_id: str) -> list[dict[str, Any]]:
        return [
            doc
            for doc in self.workspace.drafts() + self.workspace.sent()
            if doc["trace_key"].startswith(f"{trace_id}:")
        ]


def build(tmp_path: Path, bus: InProcessBus | None = None, **services: Any) -> Harness:
    if bus is None:  # not ``bus or ...``: an empty bus is falsy (it has a length)
        bus = InProcessBus(clock=FakeClock())
    clock = bus.clock
    assert isinstance(clock, FakeClock)
    store = SqliteCheckpointStore(tmp_path / "db")
    workspace = StoreWorkspace(store, clock)
    seed_workspace(store, clock.now())
    runtime = runtime_for(
        tmp_path,
        clock=clock,
        graphs={"pipeline": PIPELINE},
        store=store,
        bus=bus,
        workspace=workspace,
        **services,
    )
    return Harness(runtime, bus, store, workspace, clock)


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return build(tmp_path)


def test_graph_declaration_matches_the_seed_transitions():
    assert PIPELINE.entry == "classify"
    assert {name: node.routes for name, node in PIPELINE.nodes.items()} == {
        "classify": ("retrieve", END),
        "retrieve": ("decide",),
        "decide": ("execute_tools", "generate"),
        "execute_tools": ("generate",),
        "generate": ("review",),
        "review": ("dispatch",),
        "dispatch": (END,),
    }


def test_the_samples_cover_every_category_and_route():
    assert {category for category, _, _ in ROUTES.values()} == {
        "inquiry",
        "meeting_request",
        "complaint",
        "follow_up",
        "spam",
        "other",
    }
    assert {name for name in ROUTES} == {p.name for p in sample_inbox_dir().iterdir()}


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_route_table(harness: Harness, name: str):
    category, route, status = ROUTES[name]
    trace_id = harness.run(name)
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint is not None
    assert checkpoint.error is None
    assert checkpoint.state["classification"]["category"] == category
    assert harness.route(trace_id) == route
    assert checkpoint.status == status
    writes = harness.writes(trace_id)
    if route[-2:] == ["dispatch", END]:
        assert len(writes) == 1
        draft = checkpoint.state["draft"]
        assert writes[0]["body"] == draft["body"]
        assert writes[0]["to"] == draft["to"]
        # The message carries the key's random stamp, nothing of the trace id.
        stamp = stamp_of(harness.store, f"{trace_id}:7:dispatch")
        assert stamp is not None and writes[0]["headers"][TRACE_HEADER] == stamp
        assert trace_id not in stamp and writes[0]["message_id"] == f"<inboxflow.{stamp}@{DOMAIN}>"
        assert checkpoint.state["dispatch"]["status"] == "drafted"
        assert checkpoint.state["dispatch"]["message_id"] == writes[0]["id"]
    else:
        assert writes == []
    if status == "waiting":
        pause = checkpoint.pause
        assert pause is not None and pause["kind"] == "approve_draft"
        draft = checkpoint.state["draft"]
        assert pause["payload"] == {
            "draft": draft["body"],
            "to": draft["to"],
            "subject": draft["subject"],
        }
        assert pause["reviewers"] == ["maya.chen@brightlane.io"]
        assert pause["on_timeout"] == "needs_review"
        assert checkpoint.node == "dispatch"
        assert checkpoint.state["review"]["auto_dispatch"] is False


def test_all_samples_together_give_one_draft_per_auto_dispatched_email(harness: Harness):
    trace_ids = {name: harness.start(name) for name in ROUTES}
    harness.bus.drain()
    auto = [name for name, (_, route, _) in ROUTES.items() if route[-1] == END and len(route) > 2]
    assert len(harness.workspace.drafts()) == len(auto)
    for name, trace_id in trace_ids.items():
        assert harness.store.get_trace(trace_id).status == ROUTES[name][2]


def test_spam_ends_at_classify_without_touching_the_workspace(harness: Harness):
    trace_id = harness.run("08-obvious-spam.eml")
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint.state["classification"]["confidence"] >= 0.8
    assert checkpoint.state["context"] is None and checkpoint.state["draft"] is None


def test_inquiry_tool_plan_depends_on_a_known_sender(harness: Harness):
    known = harness.store.get_trace(harness.run("01-pricing-inquiry.eml")).state
    unknown = harness.store.get_trace(harness.run("02-pdf-export-howto.json")).state
    assert [call["name"] for call in known["tool_plan"]] == ["get_contact", "create_draft"]
    assert [call["name"] for call in unknown["tool_plan"]] == ["create_draft"]
    assert known["context"]["contact"]["company"] == "Kestrel Logistics"
    assert unknown["context"]["contact"] is None
    assert [a["name"] for a in known["planned_actions"]] == ["create_draft"]
    assert "$59 per user per month" in known["draft"]["body"]


def test_meeting_request_offers_free_calendar_slots(harness: Harness):
    trace_id = harness.run("03-meeting-request.eml")
    state = harness.store.get_trace(trace_id).state
    assert [call["name"] for call in state["tool_plan"]] == ["check_calendar", "create_draft"]
    check = state["tool_plan"][0]["arguments"]
    assert check["duration_minutes"] == 30
    assert check["preferred_weekdays"] == ["tuesday", "wednesday"]
    assert check["part_of_day"] == "afternoon"
    slots = state["context"]["calendar"]["slots"]
    assert len(slots) == 3
    for slot in slots:
        assert slot["label"] in state["draft"]["body"]
    events = harness.workspace.list_events(
        datetime.fromisoformat(slots[0]["start"]), datetime.fromisoformat(slots[-1]["end"])
    )
    for slot in slots:
        for event in events:
            assert slot["end"] <= event["start"] or slot["start"] >= event["end"]
    execute = harness.store.step_logs(trace_id)[4]
    assert execute.step_name == "execute_tools"
    assert [call["name"] for call in execute.tool_calls] == ["check_calendar"]
    assert execute.tool_calls[0]["result"]["slots"] == slots
    assert state["tool_results"] == [{"name": "check_calendar", "ok": True, "error": None}]


def test_prompt_injection_still_goes_to_a_human(harness: Harness):
    trace_id = harness.run("05-complaint-prompt-injection.json")
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint.status == "waiting"
    assert checkpoint.state["classification"]["flags"] == ["prompt_injection"]
    assert "flagged: prompt_injection" in checkpoint.state["review"]["reasons"]
    assert "refund" not in checkpoint.state["draft"]["body"].lower()


def test_approve_with_an_edited_payload_dispatches_exactly_the_edit(harness: Harness):
    trace_id = harness.run("04-complaint-double-charge.eml")
    edited = {
        "draft": "Hi Sofia,\n\nThe duplicate charge has been refunded today.\n\nMaya",
        "to": "sofia.marquez@pinecrestdental.com",
        "subject": "Re: Your January invoice",
    }
    harness.runtime.resume(trace_id, {"decision": "approve", "payload": edited, "reviewer": "x"})
    harness.bus.drain()
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint.status == "done"
    writes = harness.writes(trace_id)
    assert len(writes) == 1
    assert (writes[0]["body"], writes[0]["to"], writes[0]["subject"]) == (
        edited["draft"],
        edited["to"],
        edited["subject"],
    )
    result = checkpoint.state["dispatch"]
    assert (
        result["status"] == "drafted" and result["approved_by"] == "x" and result["edited"] is True
    )
    assert harness.route(trace_id)[-2:] == ["dispatch", END]


def test_approve_without_edits_dispatches_the_original_draft(harness: Harness):
    trace_id = harness.run("10-ambiguous-hotel-group.eml")
    original = harness.store.get_trace(trace_id).state["draft"]
    harness.runtime.resume(trace_id, {"decision": "approve", "payload": None, "reviewer": "maya"})
    harness.bus.drain()
    writes = harness.writes(trace_id)
    assert [w["body"] for w in writes] == [original["body"]]
    assert harness.store.get_trace(trace_id).state["dispatch"]["edited"] is False


def test_reject_ends_the_trace_rejected_without_a_draft(harness: Harness):
    trace_id = harness.run("09-seo-cold-pitch.json")
    harness.runtime.resume(trace_id, {"decision": "reject", "payload": None, "reviewer": "maya"})
    harness.bus.drain()
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint.status == "rejected"
    assert checkpoint.state["dispatch"]["status"] == "rejected"
    assert checkpoint.state["dispatch"]["approved_by"] == "maya"
    assert harness.writes(trace_id) == []


@pytest.mark.parametrize(
    ("to", "why"),
    [
        ("MAILER-DAEMON@pinecrestdental.com", "automated address"),
        ("Maya Chen <maya.chen@brightlane.io>", "receiving mailbox itself"),
    ],
)
def test_an_approved_draft_to_a_loop_protected_address_is_refused(
    harness: Harness, to: str, why: str
):
    trace_id = harness.run("04-complaint-double-charge.eml")
    assert harness.store.get_trace(trace_id).state["email"]["mailbox"] == "maya.chen@brightlane.io"
    edited = {"draft": "Hi,\n\nRefunded today.\n\nMaya", "to": to, "subject": "Re: Refund"}
    harness.runtime.resume(trace_id, {"decision": "approve", "payload": edited, "reviewer": "maya"})
    harness.bus.drain()
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint.status == "rejected"
    result = checkpoint.state["dispatch"]
    assert (result["status"], result["approved_by"], result["to"]) == ("refused", "maya", to)
    assert checkpoint.state["end_reason"].startswith("not sent (loop protection):")
    assert why in checkpoint.state["end_reason"]
    assert harness.writes(trace_id) == []
    pause_effects = (":deadline-", ":notify-")  # the reviewer's email and deadline, not dispatch
    assert [
        key
        for key, _ in harness.store.list("effects")
        if key.startswith(f"{trace_id}:") and not any(part in key for part in pause_effects)
    ] == []
    assert harness.route(trace_id)[-2:] == ["dispatch", END]


def _thanks(harness: Harness, body: str) -> str:
    email = email_from_json(
        {
            "from": "Priya Raman <priya.raman@kestrel-logistics.com>",
            "to": "maya.chen@brightlane.io",
            "subject": "Re: Pricing for 40 seats + SSO",
            "headers": {"In-Reply-To": "<pricing-0114@brightlane.io>"},
            "body": f"{body}\n\nPriya\n\nOn Thu, Jan 14, 2027, Maya wrote:\n> The team plan is $12.",
        }
    )
    trace_id = harness.runtime.start("pipeline", initial_state(email))
    harness.bus.drain()
    return trace_id


def test_a_thank_you_with_nothing_to_answer_ends_as_no_reply_needed(harness: Harness):
    trace_id = _thanks(harness, "Thanks, that's all I needed!")
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint.status == "done" and checkpoint.pause is None
    assert harness.route(trace_id) == ["classify", END]
    assert checkpoint.state["classification"]["needs_reply"] is False
    assert checkpoint.state["end_reason"].startswith("no reply needed")
    assert checkpoint.state.get("draft") is None
    assert harness.writes(trace_id) == []
    assert harness.store.list("approvals") == []
    assert PIPELINE.summary(checkpoint).preview.startswith("no reply needed")


def test_a_thank_you_that_also_asks_a_question_is_still_answered(harness: Harness):
    trace_id = _thanks(harness, "Thanks, that helps! Is it the same for the Leeds office?")
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint.state["classification"]["needs_reply"] is True
    assert checkpoint.state.get("end_reason") is None
    assert checkpoint.state["draft"]["body"]
    assert harness.route(trace_id)[:2] == ["classify", "retrieve"]


def test_an_unknown_decision_is_refused_and_the_trace_still_waits(harness: Harness):
    trace_id = harness.run("10-ambiguous-hotel-group.eml")
    harness.runtime.resume(trace_id, {"decision": "maybe", "reviewer": "maya"})
    harness.bus.drain()
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint.status == "waiting"
    ((_, failure),) = harness.store.list("failures")
    assert "resume 'maybe' by maya" in failure["reason"]
    assert "approve or reject" in failure["reason"]
    assert harness.writes(trace_id) == []


def test_settings_choose_reviewers_and_auto_send(tmp_path: Path):
    settings = PipelineSettings(reviewers=("lead@brightlane.io",), auto_send=True)
    h = build(tmp_path, pipeline_settings=settings)
    complaint = h.run("04-complaint-double-charge.eml")
    assert h.store.get_trace(complaint).pause["reviewers"] == ["lead@brightlane.io"]
    # Sent on its own only to an authenticated sender (the no-relay rule): the sample
    # carries no Authentication-Results, so it waits with the reason; authenticated, it goes.
    unauthenticated = h.run("01-pricing-inquiry.eml")
    assert h.writes(unauthenticated) == []
    [reason] = h.store.get_trace(unauthenticated).state["review"]["reasons"]
    assert "not sent without review" in reason and "not authenticated" in reason
    email = load_email_file(sample_inbox_dir() / "01-pricing-inquiry.eml")
    headers = {**email.headers, "authentication-results": gmail_pass(email.sender.address)}
    email = email.model_copy(update={"headers": headers, "message_id": "authenticated-1@x.example"})
    inquiry = h.runtime.start("pipeline", initial_state(email))
    h.bus.drain()
    assert [w["kind"] for w in h.writes(inquiry)] == ["sent"]
    assert h.store.get_trace(inquiry).state["dispatch"]["action"] == "send_reply"
    h.runtime.resume(complaint, {"decision": "approve", "payload": None, "reviewer": "lead"})
    h.bus.drain()
    assert [w["kind"] for w in h.writes(complaint)] == ["draft"]  # complaints are never sent


class FailingCalendar(StoreWorkspace):
    def list_events(self, start, end):
        raise ConnectionError("calendar backend unavailable")


def test_a_failing_tool_becomes_an_error_for_that_tool_only(tmp_path: Path):
    h = build(tmp_path)
    h.runtime.ports.workspace = FailingCalendar(h.store, h.clock)
    trace_id = h.run("03-meeting-request.eml")
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint.error is None
    results = checkpoint.state["tool_results"]
    assert results == [
        {
            "name": "check_calendar",
            "ok": False,
            "error": "ConnectionError: calendar backend unavailable",
        },
    ]
    assert "two or three times" in checkpoint.state["draft"]["body"]
    assert checkpoint.status == "waiting"
    assert "tools failed: check_calendar" in checkpoint.state["review"]["reasons"]


def test_get_contact_failure_does_not_stop_the_other_tools(tmp_path: Path):
    class NoContacts(StoreWorkspace):
        calls = 0

        def get_contact(self, email):
            NoContacts.calls += 1
            if NoContacts.calls > 2:  # retrieve's two lookups succeed; the tool's fails
                raise TimeoutError("contacts API timed out")
            return super().get_contact(email)

    h = build(tmp_path)
    h.runtime.ports.workspace = NoContacts(h.store, h.clock)
    trace_id = h.run("06-follow-up-security-questionnaire.eml")
    state = h.store.get_trace(trace_id).state
    assert state["tool_results"] == [
        {"name": "get_contact", "ok": False, "error": "TimeoutError: contacts API timed out"}
    ]
    assert [a["name"] for a in state["planned_actions"]] == ["create_draft"]
    assert state["draft"]["body"].startswith("Hi Grace,")


def test_a_crash_after_the_dispatch_side_effect_is_reconciled(tmp_path: Path):
    clock = FakeClock()
    bus = InProcessBus(clock=clock, max_attempts=10, min_backoff_s=120, max_backoff_s=300)
    h = build(tmp_path, bus=bus)
    crashes: list[str] = []

    def fault(point: str) -> None:
        if point == "after_effect:dispatch" and not crashes:
            crashes.append(point)
            raise SimulatedCrash(point)

    h.runtime.fault = fault
    trace_id = h.run("01-pricing-inquiry.eml")
    assert crashes == ["after_effect:dispatch"]
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint.status == "done"
    assert len(h.writes(trace_id)) == 1
    effect = h.store.get(f"effects/{trace_id}:7:dispatch")
    assert effect["status"] == "done" and effect["reconciled"] is True
    assert checkpoint.state["dispatch"]["message_id"] == h.writes(trace_id)[0]["id"]


def test_seed_workspace_is_idempotent_and_upcoming(tmp_path: Path):
    store = SqliteCheckpointStore(tmp_path / "db")
    clock = FakeClock()
    first = seed_workspace(store, clock.now())
    seed_workspace(store, clock.now())
    assert len(store.list("contacts")) == first["contacts"]
    assert len(store.list("calendar_events")) == first["calendar_events"]
    clock.advance(30 * 86400)
    seed_workspace(store, clock.now())
    starts = [doc["start_ts"] for _, doc in store.list("calendar_events")]
    assert len(starts) == first["calendar_events"]
    assert min(starts) > clock.now()


def _no_list_in_list(value: Any) -> bool:
    if isinstance(value, list):
        return all(not isinstance(item, list) and _no_list_in_list(item) for item in value)
    if isinstance(value, dict):
        return all(_no_list_in_list(item) for item in value.values())
    return True


def test_final_states_are_firestore_friendly(harness: Harness):
    for name in ("03-meeting-request.eml", "04-complaint-double-charge.eml"):
        state = harness.store.get_trace(harness.run(name)).state
        assert state["schema_version"] == 1
        assert _no_list_in_list(state)


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (  # an Outlook forward in German
            "Kannst du Ingrid antworten?\n\n________________________________\n"
            "Von: Ingrid Sørensen <ingrid@fjord-shipping.example>\n"
            "Gesendet: Montag, 9. November 2026 10:15\nAn: Daniel Ortiz <daniel.ortiz@brightlane.io>\n"
            "Betreff: Preise für 40 Plätze\n\nWas kostet der Team-Plan für 40 Plätze?",
            {},
        ),
        (  # a Gmail forward in Czech, with the forwarder's own Reply-To
            "---------- Přeposlaná zpráva ---------\nOd: Ingrid Sørensen <ingrid@fjord-shipping.example>\n"
            "Date: po 9. 11. 2026 v 10:15\nSubject: Ceník\nTo: daniel.ortiz@brightlane.io\n\n"
            "Kolik stojí týmový plán pro 40 míst?",
            {"Reply-To": "daniel.ortiz@brightlane.io"},
        ),
    ],
)
def test_a_forwarded_question_is_answered_to_its_writer_and_reviewed(
    harness: Harness, body: str, headers: dict[str, str]
) -> None:
    """Issue 37: a forward's writer is its original sender, and the reply goes to them; the
    body says who that is, so a person reviews (the ``forwarded`` flag)."""
    email = email_from_json(
        {
            "from": "Daniel Ortiz <daniel.ortiz@brightlane.io>",
            "to": "maya.chen@brightlane.io",
            "subject": "WG: Preise für 40 Plätze",
            "body": body,
            "headers": headers,
            "date": "2026-11-09T11:00:00Z",
        }
    )
    trace_id = harness.runtime.start("pipeline", initial_state(email))
    harness.bus.drain()
    checkpoint = harness.store.get_trace(trace_id)
    assert checkpoint is not None
    assert checkpoint.state["email"]["writer"]["address"] == "ingrid@fjord-shipping.example"
    assert checkpoint.state["draft"]["to"] == "ingrid@fjord-shipping.example"
    assert (
        checkpoint.status == "waiting"
        and "forwarded" in checkpoint.state["classification"]["flags"]
    )
    assert harness.writes(trace_id) == []  # nothing reaches anyone before the review
    harness.runtime.resume(trace_id, {"decision": "approve", "payload": None, "reviewer": "maya"})
    harness.bus.drain()
    assert [w["to"] for w in harness.writes(trace_id)] == ["ingrid@fjord-shipping.example"]

"""The support graph end to end on the embedded default: routing, tickets, the act policy."""

from __future__ import annotations

import json

import pytest

from inboxflow.adapters.inprocess_bus import InProcessBus, SimulatedCrash
from inboxflow.adapters.offline_llm import OfflineModel
from inboxflow.clock import FakeClock
from inboxflow.graphs.support.crm import guest_customer
from inboxflow.graphs.support.kb import kb_search
from inboxflow.graphs.support.tickets import TicketStore
from inboxflow.knowledge import knowledge_base_for
from inboxflow.schema import OUTBOX
from tests.harness.pipeline import StormBus
from tests.harness.support import MAILBOX, build, email, run, sample, tickets


@pytest.fixture
def runtime(tmp_path):
    runtime = build(tmp_path)
    yield runtime
    runtime.store.close()


def replies(runtime) -> list[dict]:
    return runtime.ports.workspace.drafts() + runtime.ports.workspace.sent()


def test_a_free_plan_how_to_is_answered_once_and_its_ticket_completed(runtime):
    state = run(runtime, sample("01"))
    assert state["status"] == "done"
    assert state["supervision"]["urgency"] == "low"
    assert state["triage"]["recommended_action"] == "auto_respond"
    assert state["act"]["status"] == "drafted"
    [reply] = replies(runtime)
    assert reply["to"] == "sam.okafor@example.org" and reply["subject"].startswith("Re: ")
    [ticket] = tickets(runtime, "cus_free_sam")
    assert (ticket.status, ticket.outcome, ticket.working) == ("completed", "auto_respond", {})
    assert [m.direction for m in ticket.messages] == ["in", "out"]
    assert ticket.traces == [state["trace_id"]]
    assert state["tag"] == f"cus_free_sam:{ticket.ticket_id}"


def test_an_enterprise_outage_is_critical_escalated_and_the_on_call_reviewers_told(runtime):
    state = run(runtime, sample("03"))
    assert state["supervision"]["urgency"] == "critical"
    assert state["triage"]["recommended_action"] == "escalate_human"
    assert state["act"]["notified"] == [MAILBOX]
    notices = [doc for _, doc in runtime.store.list(OUTBOX.name)]
    assert len(notices) == 1 and "critical" in notices[0]["subject"]
    assert replies(runtime) == []
    [ticket] = tickets(runtime, "cus_ent_northwind")
    assert (ticket.status, ticket.outcome) == ("completed", "escalate_human")


def test_a_security_report_from_a_free_plan_is_critical(runtime):
    state = run(runtime, sample("04"))
    assert state["supervision"]["urgency"] == "critical"
    assert state["act"]["status"] == "escalated"


@pytest.mark.parametrize(
    ("body", "sender", "specialist_node"),
    [
        ("We were charged twice on the January invoice.", "it-admin@northwind.example", "billing"),
        ("The API returns an error when I import contacts.", "ops@brightpath.example", "technical"),
        ("Can I add a teammate to my workspace?", "sam.okafor@example.org", "general"),
        ("I think my account was compromised.", "ops@brightpath.example", "escalate"),
    ],
)
def test_routing_to_each_specialist_and_to_escalate(runtime, body, sender, specialist_node):
    state = run(runtime, email(sender, "Help", body, f"{specialist_node}@example"))
    steps = [log.step_name for log in runtime.store.step_logs(state["trace_id"])]
    assert steps[-5:] == ["intake", "translator", "supervisor", specialist_node, "act"]


def test_a_follow_up_continues_its_open_ticket_and_the_ticket_stays_active(runtime):
    first = run(runtime, sample("05"))
    assert first["supervision"]["urgency"] == "high"  # pro + service disruption
    assert first["act"]["status"] == "queued"
    follow_up = run(runtime, sample("06"))
    assert follow_up["ticket"]["how"] == "matched"
    assert follow_up["ticket"]["ticket_id"] == first["ticket"]["ticket_id"]
    [ticket] = tickets(runtime, "cus_pro_brightpath")
    assert ticket.status == "active" and ticket.working["queue"] == "technical"
    assert ticket.traces == [first["trace_id"], follow_up["trace_id"]]
    assert len(ticket.messages) == 2


def test_route_specialist_assigns_the_ticket_and_tells_the_queue_once(tmp_path, monkeypatch):
    config = tmp_path / "inboxflow.yaml"
    queue = ["sre@brightlane.io", "tier2@brightlane.io"]
    config.write_text(json.dumps({"graphs": {"support": {"queues": {"technical": queue}}}}))
    monkeypatch.setenv("INBOXFLOW_CONFIG", str(config))
    runtime = build(tmp_path, bus=StormBus(clock=FakeClock(), copies=3, shuffle_seed=5))
    first = run(runtime, sample("05"))
    assert first["act"] == {**first["act"], "status": "queued", "queue": "technical"}
    assert first["act"]["notified"] == queue
    [ticket] = tickets(runtime, "cus_pro_brightpath")
    assert ticket.assigned_queue == "technical" and ticket.status == "active"
    assert ticket.assignment is not None
    assert (ticket.assignment.trace_id, ticket.assignment.notified) == (first["trace_id"], queue)
    notices = [doc for _, doc in runtime.store.list(OUTBOX.name)]
    assert sorted(doc["to"] for doc in notices) == sorted(queue)  # once each, despite 3 copies
    assert all(ticket.ticket_id in doc["subject"] for doc in notices)
    assert all(f"inboxflow ticket {ticket.ticket_id}" in doc["text"] for doc in notices)

    runtime.store.close()


def test_a_crash_after_an_assignment_notice_does_not_send_it_again(tmp_path, monkeypatch):
    monkeypatch.setenv("INBOXFLOW_CONFIG", str(tmp_path / "none.yaml"))
    (tmp_path / "none.yaml").write_text("{}")  # no queues: the mailbox hears of it
    runtime = build(tmp_path, bus=InProcessBus(clock=FakeClock()))
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where.startswith("after_effect:assignment_notice") and where not in crashes:
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    first = run(runtime, sample("05"))
    assert crashes == ["after_effect:assignment_notice_technical_0"]
    assert first["act"]["notified"] == [MAILBOX]
    assert len(list(runtime.store.list(OUTBOX.name))) == 1
    follow_up = run(runtime, sample("06"))  # the same ticket, still in the technical queue
    assert follow_up["act"]["queue"] == "technical" and follow_up["act"]["notified"] == []
    assert len(list(runtime.store.list(OUTBOX.name))) == 1
    runtime.store.close()


def test_unknown_queue_names_and_bad_queue_addresses_are_refused():
    from inboxflow.config import ConfigError, parse_config
    from inboxflow.graphs import graph_registry

    with pytest.raises(ConfigError, match=r"graphs.support.queues.sales"):
        parse_config({"graphs": {"support": {"queues": {"sales": ["a@b.test"]}}}}, graph_registry())
    with pytest.raises(ConfigError, match=r"'nobody' is not an email address"):
        parse_config({"graphs": {"support": {"queues": {"billing": ["nobody"]}}}}, graph_registry())
    with pytest.raises(ConfigError, match=r"queue 'billing' has no reviewers"):
        parse_config({"graphs": {"support": {"queues": {"billing": []}}}}, graph_registry())


def test_a_reply_in_the_tickets_thread_continues_it_without_the_matcher(runtime):
    first = run(runtime, sample("05"))
    thread = first["email"]["thread_id"]
    again = run(
        runtime,
        email("ops@brightpath.example", "Re: x", "Unrelated words here.", "r@x", thread_id=thread),
    )
    assert again["ticket"] == {**first["ticket"], "how": "thread", "match": None}


def test_an_unrelated_message_opens_a_new_ticket(runtime):
    run(runtime, sample("05"))
    other = run(runtime, email("ops@brightpath.example", "Seats", "Can I add seats?", "n@x"))
    assert other["ticket"]["how"] == "new"
    assert len(tickets(runtime, "cus_pro_brightpath")) == 2


@pytest.mark.parametrize(("prefix", "language"), [("02", "es"), ("07", "th")])
def test_foreign_mail_waits_for_a_reviewer_and_the_offline_path_says_it_cannot_translate(
    runtime, prefix, language
):
    state = run(runtime, sample(prefix))
    translation = state["translation"]
    assert (translation["original_language"], translation["is_english"]) == (language, False)
    assert translation["translated_messages"] == translation["original_messages"]
    assert f"cannot translate from '{language}'" in translation["notes"][0]
    assert state["status"] == "waiting"
    assert f"cannot write in '{language}'" in state["triage"]["suggested_response"]
    pause = runtime.store.get_trace(state["trace_id"]).pause
    approval = runtime.ports.approvals.get(pause["approval_id"])
    assert f"cannot reply in '{language}'" in state["triage"]["reasoning"]
    assert approval.context["confidence"] < 0.8
    assert replies(runtime) == []


def test_an_approved_reply_goes_out_once_and_a_rejected_one_keeps_the_ticket(runtime):
    waiting = run(runtime, sample("02"))
    runtime.resume(
        waiting["trace_id"],
        {"decision": "approve", "reviewer": MAILBOX, "payload": {"reply": "Hola Lucía, ..."}},
    )
    runtime.bus.drain()
    [reply] = replies(runtime)
    assert reply["body"] == "Hola Lucía, ..."
    [ticket] = tickets(runtime, "cus_free_lucia")
    assert ticket.status == "completed" and ticket.messages[-1].text == "Hola Lucía, ..."

    other = run(
        runtime, email("lucia.fernandez@example.es", "Otra", "¿Cómo cambio mi contraseña?", "o@x")
    )
    runtime.resume(other["trace_id"], {"decision": "reject", "reviewer": MAILBOX})
    runtime.bus.drain()
    assert runtime.store.get_trace(other["trace_id"]).status == "rejected"
    assert len(replies(runtime)) == 1
    assert [t.status for t in tickets(runtime, "cus_free_lucia")].count("active") == 1


class PlayDownModel(OfflineModel):
    """A model that plays every ticket down: low urgency, never an escalation."""

    def generate(self, task, inputs):
        output, usage = super().generate(task, inputs)
        if task.name == "support_supervise":
            output = output.model_copy(update={"urgency": "low", "requires_escalation": False})
        return output, usage


def test_a_security_question_is_critical_and_escalated_whatever_the_model_says(tmp_path):
    runtime = build(tmp_path, llm=PlayDownModel())
    state = run(
        runtime,
        email("ops@brightpath.example", "Report", "How do I report a vulnerability?", "v@x"),
    )
    assert state["supervision"]["urgency"] == "critical"  # the rule, not the model
    assert state["supervision"]["requires_escalation"] is True
    assert state["triage"]["recommended_action"] == "escalate_human"
    assert state["act"]["status"] == "escalated" and replies(runtime) == []
    [supervisor] = [
        log for log in runtime.store.step_logs(state["trace_id"]) if log.step_name == "supervisor"
    ]
    fired = {entry["guard"]: entry["reason"] for entry in supervisor.guards}
    assert "urgency low -> critical" in fired["urgency_rules"]
    assert 'security cue "vulnerability"' in fired["escalate_at_once"]


def test_an_unknown_sender_is_a_free_plan_guest_with_a_ticket_and_an_answer(runtime):
    state = run(
        runtime,
        email("Stranger@Example.com", "Exports", "How do I export a dashboard to PDF?", "s@x"),
    )
    guest = guest_customer("stranger@example.com")
    assert guest.customer_id.startswith("guest_") and guest.plan == "free"
    assert state["status"] == "done" and state["customer_known"] is False
    assert state["customer"]["customer_id"] == guest.customer_id
    assert state["supervision"]["urgency"] == "low"  # free + general question
    [reply] = replies(runtime)
    assert reply["to"].lower() == "stranger@example.com"
    [ticket] = tickets(runtime, guest.customer_id)
    assert (ticket.customer_known, ticket.customer_email) == (False, "stranger@example.com")
    assert (ticket.status, ticket.outcome) == ("completed", "auto_respond")
    assert tickets(runtime, "cus_free_sam") == []


def test_an_unknown_senders_security_report_is_critical_and_their_tickets_stay_together(runtime):
    first = run(
        runtime,
        email(
            "anon@researcher.example", "Bug", "I found an XSS vulnerability in your login.", "r1"
        ),
    )
    assert first["supervision"]["urgency"] == "critical" and first["customer_known"] is False
    assert first["act"]["status"] == "escalated"
    [notice] = [doc for _, doc in runtime.store.list(OUTBOX.name)]
    assert "unknown sender anon@researcher.example (not in the CRM" in notice["text"]
    run(runtime, email("ANON@researcher.example", "Pricing", "What does the pro plan cost?", "r2"))
    guest = guest_customer("anon@researcher.example").customer_id
    assert len(tickets(runtime, guest)) == 2  # one guest id per address, whatever its case


def test_duplicate_deliveries_write_one_reply_and_one_ticket(tmp_path):
    runtime = build(tmp_path, bus=StormBus(clock=FakeClock(), copies=3, shuffle_seed=13))
    state = run(runtime, sample("01"))
    assert state["status"] == "done"
    assert len(replies(runtime)) == 1
    [ticket] = tickets(runtime)
    assert len(ticket.messages) == 2 and ticket.traces == [state["trace_id"]]


def test_a_crash_after_the_reply_was_written_reconciles_instead_of_writing_again(tmp_path):
    runtime = build(tmp_path, bus=InProcessBus(clock=FakeClock()))
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where in ("after_effect:support_reply", "after_effect:open_ticket") and (
            where not in crashes
        ):
            crashes.append(where)
            raise SimulatedCrash(where)

    runtime.fault = fault
    state = run(runtime, sample("01"))
    assert sorted(crashes) == ["after_effect:open_ticket", "after_effect:support_reply"]
    assert state["status"] == "done"
    assert len(replies(runtime)) == 1
    assert len(TicketStore(runtime.store).list()) == 1


@pytest.mark.parametrize(
    ("body", "sender", "category"),
    [
        ("How do I change the card on my subscription plan?", "sam.okafor@example.org", "billing"),
        ("How do I schedule a dashboard export to PDF?", "sam.okafor@example.org", "technical"),
        ("How do I invite teammates during onboarding?", "sam.okafor@example.org", "general"),
    ],
)
def test_each_specialist_reads_only_its_categorys_articles(runtime, body, sender, category):
    state = run(runtime, email(sender, "Question", body, f"kb-{category}@example"))
    articles = state["triage"]["relevant_articles"]
    assert articles, state["triage"]
    categories = {d.source: d.category for d in knowledge_base_for(runtime.ports).documents()}
    assert {categories[source] for source in articles} == {category}
    assert state["supervision"]["issue_type"] == category


def test_kb_search_keeps_to_the_category_even_when_another_is_nearer(runtime):
    kb = knowledge_base_for(runtime.ports)
    text = "How do I schedule a dashboard export to PDF every Monday?"
    assert kb.search(text, limit=1)[0].fields["category"] == "technical"
    found = kb_search(kb, text, "billing", 3)
    assert len(found) == 3 and {a["category"] for a in found} == {"billing"}
    assert all(a["source"] != "exports-and-scheduled-delivery.md" for a in found)


def test_a_category_set_on_a_document_moves_it_to_that_specialist(runtime):
    kb = knowledge_base_for(runtime.ports)
    text = "How do I schedule a dashboard export to PDF every Monday?"
    assert all(a["category"] == "general" for a in kb_search(kb, text, "general", 5))
    moved = kb.set_category("exports-and-scheduled-delivery.md", "general")
    assert moved.category == "general" and moved.chunks > 1
    found = kb_search(kb, text, "general", 3)
    assert found[0]["source"] == "exports-and-scheduled-delivery.md"
    kb.set_category("exports-and-scheduled-delivery.md", "")  # uncategorised: every specialist
    assert kb_search(kb, text, "billing", 1)[0]["source"] == "exports-and-scheduled-delivery.md"


def test_escalations_go_to_the_configured_on_call_reviewers(tmp_path, monkeypatch):
    config = tmp_path / "inboxflow.yaml"
    oncall = ["oncall@brightlane.io", "lead@brightlane.io"]
    config.write_text(json.dumps({"graphs": {"support": {"reviewers": oncall}}}), "utf-8")
    monkeypatch.setenv("INBOXFLOW_CONFIG", str(config))
    runtime = build(tmp_path)
    state = run(runtime, sample("03"))
    assert state["act"]["notified"] == oncall
    notices = [doc for _, doc in runtime.store.list(OUTBOX.name)]
    assert sorted(doc["to"] for doc in notices) == sorted(oncall)
    runtime.store.close()

"""The agent graph's loop rules on the embedded default, with the offline model."""

from __future__ import annotations

import json
import os

import pytest

from inboxflow.config import load_config
from inboxflow.errors import RetryableError
from inboxflow.graphs import graph_registry
from inboxflow.ports.llm import AgentTurn, LLMFailed, LLMUsage
from inboxflow.schema import AGENT_RUNS, EMAIL_EVENTS, LLM_CALLS
from tests.harness.agent import build, calls, reply_writes, sample, start, tool_results, use_profile


def _run(tmp_path, profile="pharmacy", prefix="21"):
    runtime = build(tmp_path)
    trace_id = start(runtime, sample(prefix), profile)
    runtime.bus.drain()
    return runtime, runtime.store.get_trace(trace_id)


def test_pharmacy_reservation_mail_is_a_multi_turn_loop_ending_with_a_draft_to_the_patient(
    tmp_path,
):
    runtime, checkpoint = _run(tmp_path)
    state = checkpoint.state
    assert checkpoint.status == "done", checkpoint.error
    assert state["status"] == "completed" and state["iteration"] == 4
    assert [e["tool"] for e in state["tool_log"]] == [
        "search_drugs",
        "manage_reservation",
        "create_draft",
    ]
    assert [e["iteration"] for e in state["tool_log"]] == [1, 2, 3]
    reservation = state["tool_log"][1]["result"]
    assert reservation["pharmacy_id"] == "praha-2-vinohrady" and reservation["status"] == "active"
    (draft,) = reply_writes(runtime.store, checkpoint.trace_id)
    assert draft["to"] == "jana.novakova@seznam.cz"
    assert "rezervovali" in draft["body"] and reservation["reservation_id"] in draft["body"]
    assert state["final_message"].startswith("Drafted a reply to jana.novakova@seznam.cz")
    nodes = [log.step_name for log in runtime.store.step_logs(checkpoint.trace_id)]
    assert nodes == ["__start__", "preprocess"] + ["agent_turn", "agent_tools"] * 3 + [
        "agent_turn",
        "finish",
    ]


def test_audit_records_run_llm_calls_and_email_event(tmp_path):
    runtime, checkpoint = _run(tmp_path)
    trace_id = checkpoint.trace_id
    run = runtime.store.get(f"{AGENT_RUNS.name}/{trace_id}")
    assert run["status"] == "completed" and run["profile"] == "pharmacy" and run["iterations"] == 4
    log = json.loads(run["tool_calls_log"])
    assert [(e["tool"], e["iteration"]) for e in log] == [
        ("search_drugs", 1),
        ("manage_reservation", 2),
        ("create_draft", 3),
    ]
    assert set(log[0]) == {"tool", "arguments", "result", "iteration"}
    turns = [
        doc for doc_id, doc in runtime.store.list(LLM_CALLS.name) if doc_id.startswith(trace_id)
    ]
    assert len(turns) == 4 and {t["call_type"] for t in turns} == {"agent"}
    assert all(t["outcome"] == "ok" and t["model"] == "offline-heuristics" for t in turns)
    event = runtime.store.get(f"{EMAIL_EVENTS.name}/{trace_id}")
    assert event == {
        **event,
        "graph": "agent",
        "rule": "test",
        "profile": "pharmacy",
        "status": "completed",
    }


def test_reservation_made_in_one_run_is_found_by_check_in_the_next(tmp_path, monkeypatch):
    runtime, first = _run(tmp_path)
    reservation_id = first.state["tool_log"][1]["result"]["reservation_id"]
    use_profile(
        tmp_path,
        monkeypatch,
        lambda turn, messages: (
            AgentTurn(
                "", calls(("manage_reservation", '{"action": "check", "drug_name": "paralen 500"}'))
            )
            if turn == 1
            else AgentTurn("checked")
        ),
    )
    runtime.ports.config = load_config(
        None, graph_registry(), os.environ
    )  # a process reads inboxflow.yaml once: as if restarted
    second = start(runtime, sample("21"), "scripted")
    runtime.bus.drain()
    (found,) = tool_results(runtime.store.get_trace(second).state["messages"])
    assert [r["reservation_id"] for r in found["reservations"]] == [reservation_id]


def test_medical_question_escalates_to_needs_review_with_the_reason_and_notifies(tmp_path):
    runtime, checkpoint = _run(tmp_path, prefix="23")
    assert checkpoint.status == "needs_review"
    assert checkpoint.error.startswith(
        "escalated by the agent: the patient asks for medical advice"
    )
    assert checkpoint.state["status"] == "escalated"
    assert reply_writes(runtime.store, checkpoint.trace_id) == []
    outbox = runtime.ports.approvals.notifier.messages()
    assert [m["to"] for m in outbox] == ["lekarna@dostupnost-leku.cz"]
    assert runtime.store.get(f"{AGENT_RUNS.name}/{checkpoint.trace_id}")["status"] == "escalated"


def test_max_iterations_stops_the_loop(tmp_path, monkeypatch):
    use_profile(
        tmp_path,
        monkeypatch,
        lambda turn, messages: AgentTurn("", calls(("search_drugs", '{"query": "paralen"}'))),
        max_iterations=3,
    )
    _runtime, checkpoint = _run(tmp_path, "scripted")
    assert checkpoint.status == "needs_review"
    assert checkpoint.state["status"] == "max_iterations" and checkpoint.state["iteration"] == 3
    assert len(checkpoint.state["tool_log"]) == 3
    assert "after 3 turns" in checkpoint.error


@pytest.mark.parametrize(
    "failure",
    [
        LLMFailed("quota exhausted", LLMUsage(model="m", outcome="failed", attempts=3)),
        RetryableError("503"),
    ],
)
def test_llm_failure_after_retries_is_status_error_and_keeps_earlier_turns(
    tmp_path, monkeypatch, failure
):
    def script(turn, messages):
        if turn == 2:
            raise failure
        return AgentTurn("", calls(("search_drugs", '{"query": "paralen"}')))

    use_profile(tmp_path, monkeypatch, script)
    runtime, checkpoint = _run(tmp_path, "scripted")
    assert checkpoint.status == "needs_review"
    assert checkpoint.state["status"] == "error" and str(failure) in checkpoint.state["error"]
    assert checkpoint.error == f"agent error: turn 2: {failure}"
    assert [e["tool"] for e in checkpoint.state["tool_log"]] == ["search_drugs"]
    turns = sorted(doc["iteration"] for _, doc in runtime.store.list("llm_calls"))
    assert turns == [1, 2]
    failed = [doc for _, doc in runtime.store.list("llm_calls") if doc["outcome"] == "failed"]
    assert len(failed) == 1 and str(failure) in failed[0]["error"]


def test_a_tool_raising_gives_an_error_result_and_the_loop_goes_on(tmp_path, monkeypatch):
    from inboxflow.graphs.agent.drugs import DrugCatalogue

    class Broken(DrugCatalogue):
        def search(self, query, limit=5):
            raise ConnectionError("catalogue down")

        reserve = reservations = cancel = None  # type: ignore[assignment]

    use_profile(
        tmp_path,
        monkeypatch,
        lambda turn, messages: (
            AgentTurn(
                "",
                calls(
                    ("search_drugs", '{"query": "paralen"}'), ("web_search", '{"query": "paralen"}')
                ),
            )
            if turn == 1
            else AgentTurn("gave up")
        ),
    )
    runtime = build(tmp_path, drugs=Broken())
    trace_id = start(runtime, sample("21"), "scripted")
    runtime.bus.drain()
    checkpoint = runtime.store.get_trace(trace_id)
    assert checkpoint.status == "done" and checkpoint.state["status"] == "completed"
    broken, searched = tool_results(checkpoint.state["messages"])
    assert broken == {"error": "ConnectionError: catalogue down"}
    assert "results" in searched
    assert checkpoint.state["final_message"] == "gave up"


def test_bad_json_arguments_become_an_empty_object(tmp_path, monkeypatch):
    use_profile(
        tmp_path,
        monkeypatch,
        lambda turn, messages: (
            AgentTurn("", calls(("search_drugs", '{"query": "paral'), ("escalate", '["a list"]')))
            if turn == 1
            else AgentTurn("done")
        ),
    )
    _runtime, checkpoint = _run(tmp_path, "scripted")
    log = checkpoint.state["tool_log"]
    assert [e["arguments"] for e in log] == [{}, {}]
    assert all("invalid arguments" in e["result"]["error"] for e in log)
    assert checkpoint.state["status"] == "completed"


def test_a_tool_outside_the_profile_is_refused(tmp_path, monkeypatch):
    use_profile(
        tmp_path,
        monkeypatch,
        lambda turn, messages: (
            AgentTurn("", calls(("send_reply", '{"to": "a@b.cz", "subject": "s", "body": "b"}')))
            if turn == 1
            else AgentTurn("done")
        ),
        tools=["search_drugs"],
    )
    runtime, checkpoint = _run(tmp_path, "scripted")
    (result,) = tool_results(checkpoint.state["messages"])
    assert result == {"error": "unknown tool 'send_reply'"}
    assert reply_writes(runtime.store, checkpoint.trace_id) == []


def test_one_reply_per_run(tmp_path, monkeypatch):
    draft = '{"to": "jana.novakova@seznam.cz", "subject": "Re", "body": "Hello"}'
    script = {
        1: AgentTurn("", calls(("create_draft", draft), ("send_reply", draft))),
        2: AgentTurn("", calls(("create_draft", draft))),
    }
    use_profile(tmp_path, monkeypatch, lambda turn, messages: script.get(turn, AgentTurn("done")))
    runtime, checkpoint = _run(tmp_path, "scripted")
    results = tool_results(checkpoint.state["messages"])
    assert results[0]["kind"] == "draft" and "already written" in results[1]["error"]
    assert "already written" in results[2]["error"]
    (written,) = reply_writes(runtime.store, checkpoint.trace_id)
    assert written["to"] == "jana.novakova@seznam.cz"
    assert written["headers"]["In-Reply-To"] == "<crisp-5d2f0b7e-0001@dostupnost-leku.cz>"


def test_a_reply_to_the_helpdesk_is_refused_and_the_run_escalates(tmp_path, monkeypatch):
    helpdesk = '{"to": "info@dostupnost-leku.cz", "subject": "Re", "body": "Hello"}'
    script = {1: AgentTurn("", calls(("create_draft", helpdesk)))}
    use_profile(tmp_path, monkeypatch, lambda turn, messages: script.get(turn, AgentTurn("done")))
    runtime, checkpoint = _run(tmp_path, "scripted")
    (result,) = tool_results(checkpoint.state["messages"])
    assert result["refused"] is True
    assert "'info@dostupnost-leku.cz' is not the person who asked" in result["error"]
    assert checkpoint.status == "needs_review" and checkpoint.state["status"] == "escalated"
    assert reply_writes(runtime.store, checkpoint.trace_id) == []


def test_specs_offered_are_the_profiles_tools_in_openai_format(tmp_path, monkeypatch):
    seen = []

    def script(turn, messages):
        return AgentTurn("done")

    use_profile(tmp_path, monkeypatch, script, tools=["search_drugs", "escalate"])
    from inboxflow.graphs.agent.tasks import OFFLINE_POLICIES

    inner = OFFLINE_POLICIES["scripted"]
    monkeypatch.setitem(OFFLINE_POLICIES, "scripted", lambda m, t: seen.append(t) or inner(m, t))
    _run(tmp_path, "scripted")
    (specs,) = seen
    assert [s["function"]["name"] for s in specs] == ["escalate", "search_drugs"]
    assert all(
        s["type"] == "function" and s["function"]["parameters"]["type"] == "object" for s in specs
    )

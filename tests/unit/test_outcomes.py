"""Every graph declares its outcome fields (docs/evaluating.md, "Outcome fields") and its
projection gives exactly those, on a trace that got nowhere as on one that ran (the eval tests
run every graph)."""

from __future__ import annotations

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.dev.eval.outcomes import (
    COMMON_FIELDS,
    effect_label,
    greeting_and_sign_off,
    last_reply,
    recipients,
    trace_outcome,
)
from inboxflow.engine.effects import EffectJournal
from inboxflow.graphs import graph_registry
from inboxflow.notices import notify_once
from inboxflow.ports.checkpoint import Checkpoint, TraceRoute
from inboxflow.ports.notifier import NotificationRefused
from inboxflow.schema import MAILBOX_DRAFTS, MAILBOX_SENT

DOCUMENTED = {
    "pipeline": ("category", "confidence", "tools", "tone"),
    "agent": ("run_status", "tools", "escalated", "reservations"),
    "support": ("language", "urgency", "issue_type", "action", "ticket", "customer_known", "queue"),
    "assistant": ("triage", "tools"),
    "planner": ("action", "asked", "quote"),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_each_graph_gives_its_documented_fields(tmp_path, name):
    graph = graph_registry()[name]
    assert set(DOCUMENTED[name]) <= set(graph.outcome_fields)
    store = SqliteCheckpointStore(tmp_path / "db.sqlite")
    try:
        blocked = Checkpoint(
            trace_id="t1",
            graph=name,
            status="done",
            step=1,
            node="__end__",
            state={},
            route=TraceRoute(rule="r", blocked="loop protection: List-Id"),
            created_at=1.0,
            updated_at=1.0,
            expire_at=2.0,
        )
        outcome = trace_outcome(store, graph_registry(), blocked)
    finally:
        store.close()
    assert tuple(outcome) == COMMON_FIELDS + graph.outcome_fields
    assert outcome["loop_protected"] is True and outcome["rule"] == "r"
    assert outcome["end_reason"] == "loop protection: List-Id"
    assert outcome["sent"] == outcome["drafted"] == outcome["wrote"] == []
    assert outcome["reviewed"] is False


def test_recipients_and_effect_labels():
    assert recipients("A <A@X.example>, b@y.example") == ["a@x.example", "b@y.example"]
    assert recipients(["c@z.example"]) == ["c@z.example"]
    assert [effect_label(n) for n in ("reservation#0", "escalation_notice_1", "open_ticket")] == [
        "reservation",
        "escalation_notice",
        "open_ticket",
    ]


class _Notifier:
    """Takes every notice but to ``refuses``; finds nothing (no crash to reconcile here)."""

    def __init__(self, refuses: str = "") -> None:
        self.refuses = refuses

    def send(self, note):
        if note.to == self.refuses:
            raise NotificationRefused("ses", f"{note.to} is not a verified recipient")
        return {"to": note.to, "id": f"n-{note.to}"}

    def find(self, trace_key, sender=None):
        return None


class _Context:
    """What ``notify_once`` uses of a node's context: its effect journal at one step."""

    def __init__(self, journal: EffectJournal, trace_id: str) -> None:
        self.journal, self.trace_id = journal, trace_id

    def effect(self, name, perform, reconcile=None, intent=None):
        return self.journal.run(self.trace_id, 1, name, perform, reconcile)


@pytest.mark.parametrize(
    ("told", "refuses", "reviewed"),
    [
        (["agency@x.example"], "", True),  # handed to a person: reviewed
        (["agency@x.example"], "agency@x.example", False),  # the channel refused it: nobody saw
        ([], "", False),  # no notice at all
    ],
)
def test_a_notice_that_hands_the_email_to_a_person_counts_as_reviewed(
    tmp_path, told, refuses, reviewed
):
    store = SqliteCheckpointStore(tmp_path / "db.sqlite")
    try:
        journal = EffectJournal(store, FakeClock(1.0))
        journal.run("t1", 1, "open_ticket", lambda key: {"ticket": "T-1"})  # not a hand-off
        notify_once(_Context(journal, "t1"), _Notifier(refuses), told, "s", "x", "notice_{index}")
        ended = Checkpoint(
            trace_id="t1",
            graph="planner",
            status="needs_review",
            step=2,
            node="__end__",
            state={},
            created_at=1.0,
            updated_at=1.0,
            expire_at=2.0,
        )
        outcome = trace_outcome(store, graph_registry(), ended)
    finally:
        store.close()
    assert outcome["reviewed"] is reviewed
    assert sorted(outcome["wrote"]) == sorted(["open_ticket", *(["notice"] if told else [])])


@pytest.mark.parametrize(
    ("body", "greeting", "sign_off"),
    [
        ("Hi Dana,\n\nThanks for writing.\n\nBest regards,\nAlex", "Hi Dana,", "Best regards"),
        ("Hello,\nSee you then.\nCheers,\n\nMia\nBrightlane", "Hello,", "Cheers"),
        ("Dana, thanks.\nNo closing here", "Dana, thanks.", None),  # the greeting is no closing
        ("", None, None),
        (None, None, None),
    ],
)
def test_a_replys_greeting_and_sign_off(body, greeting, sign_off):
    assert greeting_and_sign_off(body) == (greeting, sign_off)


def test_the_last_reply_written_is_the_one_read(tmp_path):
    store = SqliteCheckpointStore(tmp_path / "db.sqlite")
    try:
        for doc_id, at, body in (("a", 2.0, "Hi,\nNew,\nX"), ("b", 1.0, "Hi,\nOld,\nX")):
            store.set(
                f"{MAILBOX_DRAFTS.name}/{doc_id}",
                {"trace_key": "t:1:d", "created_at": at, "body": body},
            )
        store.set(
            f"{MAILBOX_SENT.name}/c", {"trace_key": "other:1:s", "created_at": 9.0, "body": "no"}
        )
        assert last_reply(store, ["t:1:d"]) == "Hi,\nNew,\nX"
        assert last_reply(store, ["nobody"]) is None
    finally:
        store.close()

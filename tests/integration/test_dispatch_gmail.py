"""The pipeline dispatching through GoogleWorkspace (googleapiclient) to the Gmail double:
a crash after Gmail accepted the send is redelivered and still sends exactly once, in the thread."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.inprocess_bus import InProcessBus, SimulatedCrash
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.dev.cli.local import sample_inbox
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.engine.runtime import Runtime
from inboxflow.graphs.pipeline.settings import PipelineSettings
from inboxflow.mail import TRACE_HEADER, Email, bare_subject, load_email_file
from inboxflow.mail_stamps import trace_key_of
from inboxflow.workspace import seed_workspace
from tests.harness.mail_auth import gmail_pass
from tests.harness.pipeline import dispatch_effects
from tests.harness.runtimes import runtime_for

MAILBOX = "maya.chen@brightlane.io"


@dataclass
class Mailroom:
    runtime: Runtime
    double: GoogleApiDouble
    originals: dict[str, dict[str, Any]]
    """trace_id -> the original message as the double holds it."""

    def replies(self, trace_id: str) -> list[dict[str, Any]]:
        """Drafts and sent messages stamped for this trace."""
        return [
            m
            for m in self.double.messages(MAILBOX)
            if {"SENT", "DRAFT"} & set(m["labels"])
            # the header carries a random stamp; the store says which trace drew it
            and (
                trace_key_of(self.runtime.store, m["headers"].get(TRACE_HEADER, "")) or ""
            ).startswith(f"{trace_id}:")
        ]


def _raw(path: Path, email: Email) -> bytes:
    if path.suffix == ".eml":
        return path.read_bytes()
    message = EmailMessage()  # the JSON samples, as they would arrive
    message["From"] = email.sender.formatted()
    message["To"] = ", ".join(a.formatted() for a in email.to) or MAILBOX
    message["Subject"] = email.subject
    message["Message-ID"] = f"<{email.message_id}>"
    message.set_content(email.body_text)
    return message.as_bytes()


@pytest.fixture
def mailroom(tmp_path: Path) -> Iterator[Mailroom]:
    clock = FakeClock()
    bus = InProcessBus(clock=clock)
    store = SqliteCheckpointStore(tmp_path / "pipeline.db")
    seed_workspace(store, clock.now())  # contacts and saved replies
    with GoogleApiDouble(clock=clock) as double:
        double.seed_from_workspace_json(mailbox=MAILBOX, now=clock.now())
        workspace = GoogleWorkspace(MAILBOX, store, api_url=double.url, sleep=lambda s: None)
        runtime = runtime_for(
            tmp_path,
            clock=clock,
            store=store,
            bus=bus,
            workspace=workspace,
            pipeline_settings=PipelineSettings(auto_send=True),
        )
        yield Mailroom(runtime, double, {})
    store.close()


def _start_all(room: Mailroom) -> list[str]:
    trace_ids = []
    for path in sample_inbox():
        email = load_email_file(path, mailbox=MAILBOX)
        # Gmail's verdict on arrival: auto-send answers only an authenticated sender (no relay)
        verdict = gmail_pass(email.sender.address)
        email = email.model_copy(
            update={"headers": {**email.headers, "authentication-results": verdict}}
        )
        gmail_id = room.double.deliver(MAILBOX, _raw(path, email))
        trace_id = room.runtime.start("pipeline", {"email": email.model_dump(mode="json")})
        [original] = [m for m in room.double.messages(MAILBOX) if m["id"] == gmail_id]
        room.originals[trace_id] = original
        trace_ids.append(trace_id)
    return trace_ids


def _assert_in_thread(reply: dict[str, Any], original: dict[str, Any]) -> None:
    original_id = original["headers"]["Message-ID"]
    assert reply["thread_id"] == original["thread_id"]
    assert reply["headers"]["In-Reply-To"] == original_id
    assert reply["headers"]["References"].split()[-1] == original_id
    assert reply["subject"] == f"Re: {bare_subject(original['subject'])}"
    assert not reply["subject"].lower().startswith("re: re:")
    assert reply["headers"]["From"] == MAILBOX


def test_a_crash_after_gmail_accepted_the_send_is_redelivered_and_sends_once(
    mailroom: Mailroom,
) -> None:
    crashes: list[str] = []

    def fault(where: str) -> None:
        if where == "after_effect:dispatch" and len(crashes) < 4:
            crashes.append(where)  # Gmail has the message; the journal does not know yet
            raise SimulatedCrash(where)

    mailroom.runtime.fault = fault
    trace_ids = _start_all(mailroom)
    mailroom.runtime.bus.drain()

    assert len(crashes) == 4
    sent = reconciled = 0
    for trace_id in trace_ids:
        checkpoint = mailroom.runtime.store.get_trace(trace_id)
        assert checkpoint.error is None, (trace_id, checkpoint.error)
        replies = mailroom.replies(trace_id)
        effects = dispatch_effects(mailroom.runtime.store, trace_id)
        assert len(replies) == len(effects) <= 1, trace_id
        reconciled += sum(1 for effect in effects if effect.get("reconciled"))
        if not replies:
            continue
        [reply] = replies
        dispatched = checkpoint.state["dispatch"]
        kind = "SENT" if dispatched["status"] == "sent" else "DRAFT"
        assert kind in reply["labels"]
        assert dispatched["message_id"] in (
            reply["id"],
            *[d["draft_id"] for d in mailroom.double.drafts(MAILBOX) if d["id"] == reply["id"]],
        )
        _assert_in_thread(reply, mailroom.originals[trace_id])
        sent += kind == "SENT"
    assert reconciled == len(crashes)
    assert sent >= 1
    assert len(mailroom.double.messages(MAILBOX, "SENT")) == sent


def test_a_send_whose_answer_gmail_lost_is_not_sent_again(mailroom: Mailroom) -> None:
    mailroom.double.fail_next("gmail.users.messages.send", 503, times=3, after_apply=True)
    trace_ids = _start_all(mailroom)
    mailroom.runtime.bus.drain()

    calls = mailroom.double.calls
    sends = [i for i, call in enumerate(calls) if call[0] == "gmail.users.messages.send"]
    sent = mailroom.double.messages(MAILBOX, "SENT")
    # The three faults fired, each on a send Gmail performed (the answer was lost)...
    assert mailroom.double.injected_count("messages.send", 503) == 3
    assert all(fault.after_apply for fault in mailroom.double.injected)
    # ...and each was followed by the look-up that found the message instead of resending.
    faulted = sends[:3]
    for index in faulted:
        assert calls[index + 1][0] == "gmail.users.drafts.list", calls[index : index + 3]
    assert len(sends) == len(sent) > len(faulted)  # every accepted send was found, none repeated
    dispatched = 0
    for trace_id in trace_ids:
        checkpoint = mailroom.runtime.store.get_trace(trace_id)
        assert checkpoint.error is None
        replies = mailroom.replies(trace_id)
        assert len(replies) <= 1
        if (checkpoint.state.get("dispatch") or {}).get("status") == "sent":
            dispatched += 1
            assert len(replies) == 1 and "SENT" in replies[0]["labels"]
    assert dispatched == len(sent)


def test_an_approved_draft_resumed_twice_is_written_once_in_the_thread(
    mailroom: Mailroom,
) -> None:
    trace_ids = _start_all(mailroom)
    mailroom.runtime.bus.drain()
    waiting = [t for t in trace_ids if mailroom.runtime.store.get_trace(t).status == "waiting"]
    assert waiting
    trace_id = waiting[0]
    payload = dict(mailroom.runtime.store.get_trace(trace_id).pause["payload"])
    decision = {"decision": "approve", "payload": payload, "reviewer": "lead@brightlane.io"}
    mailroom.runtime.resume(trace_id, decision)
    mailroom.runtime.resume(trace_id, decision)
    mailroom.runtime.bus.drain()
    assert mailroom.runtime.store.get_trace(trace_id).status == "done"
    [reply] = mailroom.replies(trace_id)
    _assert_in_thread(reply, mailroom.originals[trace_id])


@pytest.mark.parametrize(
    ("to", "why"),
    [
        ("mailer-daemon@pinecrestdental.com", "automated address"),
        (MAILBOX, "receiving mailbox itself"),
    ],
)
def test_an_approved_draft_to_a_loop_protected_address_never_reaches_gmail(
    mailroom: Mailroom, to: str, why: str
) -> None:
    path = next(p for p in sample_inbox() if p.name.startswith("04-complaint"))
    email = load_email_file(path, mailbox=MAILBOX)
    mailroom.double.deliver(MAILBOX, _raw(path, email))
    trace_id = mailroom.runtime.start("pipeline", {"email": email.model_dump(mode="json")})
    mailroom.runtime.bus.drain()
    payload = {**mailroom.runtime.store.get_trace(trace_id).pause["payload"], "to": to}
    decision = {"decision": "approve", "payload": payload, "reviewer": "lead@brightlane.io"}
    mailroom.runtime.resume(trace_id, decision)
    mailroom.runtime.bus.drain()

    checkpoint = mailroom.runtime.store.get_trace(trace_id)
    assert checkpoint.status == "rejected"
    assert checkpoint.state["dispatch"]["status"] == "refused"
    assert why in checkpoint.state["end_reason"]
    assert mailroom.replies(trace_id) == []
    assert dispatch_effects(mailroom.runtime.store, trace_id) == []
    writes = ("gmail.users.drafts.create", "gmail.users.messages.send")
    assert [call for call in mailroom.double.calls if call[0] in writes] == []

"""One contract for every Notifier adapter: the embedded outbox, Gmail on the Gmail
double through the real googleapiclient (``GoogleWorkspace.send_message``), and Amazon
SES on moto through boto3 (send / find / the journal; SES sends as its configured
identity, so the sender rules of the last test are Gmail's and the outbox's).
The webhook adapter is checked against a local receiver in tests/unit/adapters/test_webhook_notifier.py:
a chat room keeps no per-sender copies to compare."""

from __future__ import annotations

import email
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email import policy
from pathlib import Path
from typing import Any

import pytest
from tests.harness.approval import LINK, REVIEWERS, Harness

from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.notifiers import GmailNotifier, OutboxNotifier
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.approvals.settings import ApprovalConfig
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.engine.effects import EffectJournal
from inboxflow.ports.notifier import Notification, Notifier

MAILBOX = "maya.chen@brightlane.io"
NOTIFY_FROM = "approvals@brightlane.io"


@dataclass
class World:
    """A notifier and what the sending mailbox keeps of what it sent."""

    notifier: Notifier
    kept: Callable[[str], list[dict[str, str]]]
    """``sender -> [{to, from, subject, text}]``: the sender's stored copies (Sent folder)."""


def _outbox_world(tmp_path: Path) -> Iterator[World]:
    store = SqliteCheckpointStore(tmp_path / "outbox.db")
    notifier = OutboxNotifier(store, FakeClock())

    def kept(sender: str) -> list[dict[str, str]]:
        return [
            {"to": m["to"], "from": m["from"], "subject": m["subject"], "text": m["text"]}
            for m in notifier.messages()
            if m["from"] == sender
        ]

    yield World(notifier, kept)
    store.close()


def _gmail_world(tmp_path: Path) -> Iterator[World]:
    store = SqliteCheckpointStore(tmp_path / "gmail.db")
    with GoogleApiDouble() as double:
        double.seed_from_workspace_json(mailbox=MAILBOX, now=FakeClock().now())
        workspace = GoogleWorkspace(
            "unset-mailbox@invalid", store, api_url=double.url, sleep=lambda s: None
        )

        def kept(sender: str) -> list[dict[str, str]]:
            found = []
            for message in double.messages(sender, label="SENT"):
                parsed = email.message_from_bytes(message["raw"], policy=policy.default)
                found.append(
                    {
                        "to": str(parsed["To"]),
                        "from": str(parsed["From"]),
                        "subject": str(parsed["Subject"]),
                        "text": parsed.get_body(("plain",)).get_content(),  # type: ignore[union-attr]
                    }
                )
            return found

        yield World(GmailNotifier(workspace), kept)
    store.close()


def _ses_world(tmp_path: Path) -> Iterator[World]:
    from tests.harness.ses_double import REGION, SesDouble

    from inboxflow.adapters.ses_notifier import SesNotifier

    store = SqliteCheckpointStore(tmp_path / "ses.db")
    with SesDouble("mock_aws").running() as ses:
        ses.verify("brightlane.io")  # the domain: every address of it may send and receive
        notifier = SesNotifier(store, REGION, MAILBOX, FakeClock(), client=ses.client())

        def kept(sender: str) -> list[dict[str, str]]:
            by_subject = {r["Content"]["Simple"]["Subject"]["Data"]: r for r in ses.arrived}
            return [
                {
                    "to": m["to"][0],
                    "from": m["source"],
                    "subject": m["subject"],
                    "text": by_subject[m["subject"]]["Content"]["Simple"]["Body"]["Text"]["Data"],
                }
                for m in ses.sent()
                if m["source"] == sender
            ]

        yield World(notifier, kept)
    store.close()


WORLDS = {"outbox": _outbox_world, "gmail": _gmail_world, "ses": _ses_world}


@pytest.fixture(params=["outbox", "gmail"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    yield from WORLDS[request.param](tmp_path)


@pytest.fixture(params=sorted(WORLDS))
def any_world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    yield from WORLDS[request.param](tmp_path)


def test_send_then_find_by_key(any_world: World) -> None:
    world = any_world
    receipt = world.notifier.send(
        Notification(
            "ana@brightlane.io",
            "Approve a reply",
            "text",
            "<p>html</p>",
            "tr-1:5:notify-0-ana",
            MAILBOX,
        )
    )
    assert receipt["id"]
    found = world.notifier.find("tr-1:5:notify-0-ana", MAILBOX)
    assert found is not None and found["id"] == receipt["id"]
    # A mail channel tells the thread it sent in, the same either way (replies find it).
    assert (found.get("thread_id"), found.get("mailbox")) == (
        receipt.get("thread_id"),
        receipt.get("mailbox"),
    )
    assert world.notifier.find("tr-1:5:notify-0-ben", MAILBOX) is None
    (copy,) = world.kept(MAILBOX)
    assert copy["to"] == "ana@brightlane.io" and copy["subject"] == "Approve a reply"


def test_the_effect_journal_sends_once_per_key_even_after_a_crash(
    any_world: World, tmp_path: Path
) -> None:
    world = any_world
    store = SqliteCheckpointStore(tmp_path / "journal.db")
    journal = EffectJournal(store, FakeClock())
    sends: list[str] = []

    def perform(key: str) -> dict[str, Any]:
        sends.append(key)
        return world.notifier.send(
            Notification("ben@brightlane.io", "S", "t", "<p>h</p>", key, MAILBOX)
        )

    def find(key: str) -> dict[str, Any] | None:
        return world.notifier.find(key, MAILBOX)

    # Crash between the send and the journal's "done": the re-run finds the sent message.
    entry = "effects/tr-2:5:notify-0-ben"
    store.create(entry, {"status": "started", "started_at": 0, "attempts": 1})
    world.notifier.send(
        Notification("ben@brightlane.io", "S", "t", "<p>h</p>", "tr-2:5:notify-0-ben", MAILBOX)
    )
    first = journal.run("tr-2", 5, "notify-0-ben", perform, find)
    again = journal.run("tr-2", 5, "notify-0-ben", perform, find)
    assert sends == [] and first == again
    assert len(world.kept(MAILBOX)) == 1
    store.close()


def test_reviewer_emails_carry_no_token_in_the_subject_and_come_from_the_notify_address(
    world: World, tmp_path: Path
) -> None:
    h = Harness(
        tmp_path, config=ApprovalConfig(base_url="http://approvals.test", notify_from=NOTIFY_FROM)
    )
    h.service.notifier = world.notifier
    trace_id = h.start()
    approval = h.approval_of(trace_id)
    h.service.after_pause(approval)  # a redelivery sends nothing twice

    sent = world.kept(NOTIFY_FROM)
    assert sorted(m["to"] for m in sent) == sorted(REVIEWERS)
    assert world.kept(MAILBOX) == []  # nothing from the mailbox under review
    for message in sent:
        assert "t=" not in message["subject"] and "http" not in message["subject"]
        assert message["subject"].startswith("Approve reply to ")
        assert f"/a/{approval.approval_id}?t=" in message["text"]
    tokens = [m.group(2) for m in sent for m in [LINK.search(m["text"])] if m]
    if isinstance(world.notifier, OutboxNotifier):
        assert tokens == ["REDACTED", "REDACTED"]  # the stored copy is no key
    else:
        assert len(tokens) == 2  # the Sent folder keeps working links: see docs/deploy.md
        assert all(t not in m["subject"] for t in tokens for m in sent)

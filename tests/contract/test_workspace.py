"""One contract for every Workspace adapter: StoreWorkspace, and GoogleWorkspace on the
Gmail/Calendar double through the real googleapiclient."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.google_workspace import GoogleWorkspace
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.store_workspace import StoreWorkspace
from inboxflow.dev.doubles.google_api import GoogleApiDouble
from inboxflow.mail import TRACE_HEADER
from inboxflow.mail_stamps import stamp_of, stamped_message_id
from inboxflow.ports.workspace import Workspace
from inboxflow.workspace import seed_workspace

MAILBOX = "maya.chen@brightlane.io"
NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday


@dataclass
class World:
    """A workspace plus what the contract needs to set up and observe it."""

    workspace: Workspace
    receive: Callable[[bytes], None]
    """Put a received message in the mailbox (a no-op where mail is not stored)."""
    is_read: Callable[[str], bool]
    writes: Callable[[], list[dict[str, Any]]]
    """Every draft and sent message, as ``{kind, subject, headers}``."""


def _store_world(tmp_path: Path) -> Iterator[World]:
    store = SqliteCheckpointStore(tmp_path / "ws.db")
    seed_workspace(store, NOW.timestamp())
    workspace = StoreWorkspace(store)
    yield World(
        workspace,
        receive=lambda raw: None,
        is_read=workspace.is_read,
        writes=lambda: [
            {"kind": d["kind"], "subject": d["subject"], "headers": d["headers"]}
            for d in workspace.drafts() + workspace.sent()
        ],
    )
    store.close()


def _google_world(tmp_path: Path) -> Iterator[World]:
    store = SqliteCheckpointStore(tmp_path / "ws.db")
    seed_workspace(store, NOW.timestamp())  # contacts: the CRM stand-in
    with GoogleApiDouble() as double:
        double.seed_from_workspace_json(mailbox=MAILBOX, now=NOW.timestamp())
        workspace = GoogleWorkspace(MAILBOX, store, api_url=double.url, sleep=lambda s: None)

        def is_read(message_id: str) -> bool:
            found = [
                m
                for m in double.messages(MAILBOX, "INBOX")
                if m["headers"].get("Message-ID", "").strip("<>") == message_id.strip("<>")
            ]
            assert found, message_id
            return "UNREAD" not in found[0]["labels"]

        def writes() -> list[dict[str, Any]]:
            return [
                {
                    "kind": "draft" if "DRAFT" in m["labels"] else "sent",
                    "subject": m["subject"],
                    "headers": m["headers"],
                }
                for m in double.messages(MAILBOX)
                if {"DRAFT", "SENT"} & set(m["labels"])
            ]

        yield World(
            workspace,
            receive=lambda raw: double.deliver(MAILBOX, raw) and None,
            is_read=is_read,
            writes=writes,
        )
    store.close()


@pytest.fixture(params=["store", "google"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    factory = _store_world if request.param == "store" else _google_world
    yield from factory(tmp_path)


def _original(message_id: str = "orig-1@customer.example", references: str = "") -> bytes:
    message = EmailMessage()
    message["From"] = "Priya Raman <priya.raman@kestrel-logistics.com>"
    message["To"] = MAILBOX
    message["Subject"] = "Re: Pricing for 40 seats"
    message["Message-ID"] = f"<{message_id}>"
    if references:
        message["References"] = references
    message.set_content("Could you send a quote?")
    return message.as_bytes()


def _header(headers: dict[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return str(value)
    return ""


# --- contacts and calendar -------------------------------------------------------------------


def test_get_contact_finds_a_seeded_contact_case_insensitively(world: World) -> None:
    contact = world.workspace.get_contact("Priya.Raman@Kestrel-Logistics.com")
    assert contact is not None and contact["company"] == "Kestrel Logistics"
    assert world.workspace.get_contact("nobody@example.com") is None
    assert world.workspace.get_contact("../contacts/x") is None


def test_list_events_returns_the_overlapping_events_in_start_order(world: World) -> None:
    day1 = datetime(2026, 3, 3, tzinfo=UTC)  # business day 1 after NOW
    events = world.workspace.list_events(
        day1 + timedelta(hours=9, minutes=15), day1 + timedelta(hours=14)
    )
    assert [e["summary"] for e in events] == [
        "Customer success standup",  # 09:00-09:30 overlaps 09:15
        "QBR: Kestrel Logistics",
        "Lunch & learn: dashboard design",
    ]
    starts = [datetime.fromisoformat(e["start"]) for e in events]
    assert starts == sorted(starts) and all(s.tzinfo is not None for s in starts)


def test_free_busy_merges_adjacent_events_and_clips_to_the_window(world: World) -> None:
    day2 = datetime(2026, 3, 4, tzinfo=UTC)  # standup 09:00-09:30 then onboarding 09:30-12:00
    busy = world.workspace.free_busy(
        day2 + timedelta(hours=9, minutes=10), day2 + timedelta(hours=15)
    )
    assert busy == [
        (day2 + timedelta(hours=9, minutes=10), day2 + timedelta(hours=12)),
        (day2 + timedelta(hours=14), day2 + timedelta(hours=15)),
    ]


def test_insert_event_is_once_per_trace_key(world: World) -> None:
    start = datetime(2026, 3, 10, 14, tzinfo=UTC)
    first = world.workspace.insert_event(
        "Demo for Kestrel",
        start,
        start + timedelta(minutes=30),
        ["priya.raman@kestrel-logistics.com"],
        "t1:5:schedule_meeting",
    )
    again = world.workspace.insert_event(
        "Demo for Kestrel",
        start,
        start + timedelta(minutes=30),
        ["priya.raman@kestrel-logistics.com"],
        "t1:5:schedule_meeting",
    )
    other = world.workspace.insert_event(
        "Second demo",
        start + timedelta(hours=1),
        start + timedelta(hours=2),
        [],
        "t2:5:schedule_meeting",
    )
    assert first["id"] == again["id"] != other["id"]
    assert datetime.fromisoformat(first["start"]) == start
    assert first["attendees"] == ["priya.raman@kestrel-logistics.com"]
    events = world.workspace.list_events(start, start + timedelta(hours=3))
    assert [e["summary"] for e in events] == ["Demo for Kestrel", "Second demo"]


# --- mail -------------------------------------------------------------------------------------


def test_send_reply_threads_the_reply_and_stamps_the_trace(world: World) -> None:
    world.receive(_original(references="<first@kestrel-logistics.com>"))
    sent = world.workspace.send_reply(
        "priya.raman@kestrel-logistics.com",
        "Re: Re: Pricing for 40 seats",
        "Here is the quote.",
        "first@kestrel-logistics.com",
        "trace-a:6:dispatch",
        in_reply_to="orig-1@customer.example",
        references="<first@kestrel-logistics.com>",
    )
    assert sent["kind"] == "sent" and sent["id"]
    assert sent["subject"] == "Re: Pricing for 40 seats"
    # What goes out carries the key's random stamp, nothing a reader can derive from the trace.
    stamp = stamp_of(world.workspace.store, "trace-a:6:dispatch")  # type: ignore[attr-defined]
    assert stamp is not None and "trace-a" not in stamp
    assert sent["message_id"] == stamped_message_id(
        stamp, sent["message_id"].rpartition("@")[2][:-1]
    )
    assert sent["headers"][TRACE_HEADER] == stamp
    assert sent["headers"]["In-Reply-To"] == "<orig-1@customer.example>"
    assert (
        sent["headers"]["References"] == "<first@kestrel-logistics.com> <orig-1@customer.example>"
    )
    [written] = world.writes()
    assert written["kind"] == "sent" and written["subject"] == "Re: Pricing for 40 seats"
    assert _header(written["headers"], TRACE_HEADER) == stamp
    assert _header(written["headers"], "In-Reply-To") == "<orig-1@customer.example>"


def test_a_subject_without_prefix_gets_one_re(world: World) -> None:
    draft = world.workspace.create_draft(
        "a@example.com", "Pricing", "body", "t", "trace-b:6:dispatch", in_reply_to="x@example.com"
    )
    assert draft["subject"] == "Re: Pricing"


def test_find_by_trace_key_finds_drafts_and_sent_mail_and_nothing_else(world: World) -> None:
    draft = world.workspace.create_draft(
        "a@example.com",
        "Re: Hello",
        "draft body",
        "thread-1",
        "trace-c:6:dispatch",
        in_reply_to="hello-1@example.com",
    )
    sent = world.workspace.send_reply(
        "b@example.com",
        "Re: Other",
        "sent body",
        "thread-2",
        "trace-d:6:dispatch",
        in_reply_to="other-1@example.com",
    )
    found_draft = world.workspace.find_by_trace_key("trace-c:6:dispatch")
    found_sent = world.workspace.find_by_trace_key("trace-d:6:dispatch")
    assert found_draft is not None and found_sent is not None
    assert (found_draft["id"], found_draft["kind"]) == (draft["id"], "draft")
    assert (found_sent["id"], found_sent["kind"]) == (sent["id"], "sent")
    assert found_sent["thread_id"] == sent["thread_id"]
    assert world.workspace.find_by_trace_key("trace-e:6:dispatch") is None
    assert world.workspace.find_by_trace_key("trace-c:6:dispatc") is None


def test_has_written_to_is_sent_mail_to_that_very_address(world: World) -> None:
    """What "corresponded with" means for the no-relay rule (issue 39, item 4)."""
    ws = world.workspace
    ws.create_draft("drafted@example.com", "Re: x", "body", "t-1", "trace-f:6:dispatch")
    ws.send_reply("Kim Lee <Kim.Lee@Example.com>", "Re: y", "body", "t-2", "trace-g:6:dispatch")
    assert ws.has_written_to("kim.lee@example.com")
    assert ws.has_written_to("KIM.LEE@EXAMPLE.COM")
    assert not ws.has_written_to("drafted@example.com")  # a draft went nowhere
    assert not ws.has_written_to("lee@example.com")  # Gmail's to: search matches loosely
    assert not ws.has_written_to("kim.lee@example.co")
    assert not ws.has_written_to("kim.lee@ex\u0430mple.com")  # a Cyrillic a
    assert not ws.has_written_to("not an address")


def test_mark_as_read_by_message_id(world: World) -> None:
    world.receive(_original("unread-1@customer.example"))
    result = world.workspace.mark_as_read("<unread-1@customer.example>")
    assert result["found"] is True
    assert world.is_read("unread-1@customer.example")


# --- GoogleWorkspace only: what the real API makes necessary ---------------------------------


@pytest.fixture
def google(tmp_path: Path) -> Iterator[tuple[GoogleWorkspace, GoogleApiDouble]]:
    store = SqliteCheckpointStore(tmp_path / "g.db")
    with GoogleApiDouble() as double:
        yield GoogleWorkspace(MAILBOX, store, api_url=double.url, sleep=lambda s: None), double
    store.close()


def test_the_reply_joins_the_gmail_thread_of_the_original(google) -> None:
    workspace, double = google
    original_id = double.deliver(MAILBOX, _original())
    sent = workspace.send_reply(
        "priya.raman@kestrel-logistics.com",
        "Pricing",
        "Quote attached.",
        "orig-1@customer.example",
        "t:6:dispatch",
        in_reply_to="orig-1@customer.example",
    )
    [original] = [m for m in double.messages(MAILBOX) if m["id"] == original_id]
    [reply] = double.messages(MAILBOX, "SENT")
    assert sent["thread_id"] == reply["thread_id"] == original["thread_id"]
    assert reply["headers"]["From"] == MAILBOX
    assert reply["headers"]["References"] == "<orig-1@customer.example>"
    assert reply["body"].strip() == "Quote attached."


def test_a_send_whose_answer_was_lost_is_found_not_repeated(google) -> None:
    workspace, double = google
    double.fail_next("gmail.users.messages.send", 500, after_apply=True)
    sent = workspace.send_reply(
        "a@example.com", "Hi", "body", "t", "t:6:dispatch", in_reply_to="x@y.z"
    )
    assert double.injected_count("messages.send", 500) == 1  # the fault fired
    assert len(double.messages(MAILBOX, "SENT")) == 1
    stamp = stamp_of(workspace.store, "t:6:dispatch")
    assert sent["kind"] == "sent" and sent["headers"][TRACE_HEADER] == stamp
    sends = [c for c in double.calls if c[0] == "gmail.users.messages.send"]
    assert len(sends) == 1


def test_a_rate_limited_send_is_retried_until_accepted(google) -> None:
    workspace, double = google
    double.fail_next("messages.send", 429, times=2)
    workspace.send_reply("a@example.com", "Hi", "body", "t", "t:6:dispatch")
    assert double.injected_count("messages.send", 429) == 2
    assert len(double.messages(MAILBOX, "SENT")) == 1
    assert len([c for c in double.calls if c[0] == "gmail.users.messages.send"]) == 3


def test_reads_are_retried_and_permanent_errors_fail_the_node(google) -> None:
    from inboxflow.adapters.google_workspace import WorkspaceApiError
    from inboxflow.errors import RetryableError

    workspace, double = google
    double.fail_next("freebusy.query", 403, times=2)  # userRateLimitExceeded: retried
    assert workspace.free_busy(NOW, NOW + timedelta(days=1)) == []
    assert double.injected_count("freebusy.query", 403) == 2
    double.fail_next("freebusy.query", 408)  # a timeout: retried
    double.fail_next("freebusy.query", 403, reason="quotaExceeded")  # a quota: retried
    assert workspace.free_busy(NOW, NOW + timedelta(days=1)) == []
    assert len([c for c in double.calls if c[0] == "calendar.freebusy.query"]) == 6
    double.fail_next("freebusy.query", 403, reason="forbidden")
    with pytest.raises(WorkspaceApiError, match="403"):
        workspace.free_busy(NOW, NOW + timedelta(days=1))
    double.fail_next("freebusy.query", 503, times=10)
    with pytest.raises(RetryableError):
        workspace.free_busy(NOW, NOW + timedelta(days=1))
    assert double.injected_count("freebusy.query", 503) >= 2


def test_no_answer_at_all_is_retryable(tmp_path: Path) -> None:
    import socket

    from inboxflow.adapters.google_workspace import WorkspaceApiUnavailable

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    store = SqliteCheckpointStore(tmp_path / "n.db")
    waits: list[float] = []
    workspace = GoogleWorkspace(
        MAILBOX, store, api_url=f"http://127.0.0.1:{port}", sleep=waits.append, timeout=2
    )
    with pytest.raises(WorkspaceApiUnavailable, match="no answer") as raised:
        workspace.list_events(NOW, NOW + timedelta(days=1))
    assert raised.value.status == 0 and len(waits) == 4
    store.close()


def test_find_by_trace_key_still_finds_a_send_whose_message_id_gmail_replaced(google) -> None:
    workspace, double = google
    double.gmail.replace_sent_message_ids = True
    sent = workspace.send_reply("a@example.com", "Hi", "body", "t", "t:6:dispatch")
    [stored] = double.messages(MAILBOX, "SENT")
    assert stored["headers"]["Message-ID"] != sent["message_id"]
    found = workspace.find_by_trace_key("t:6:dispatch")
    assert found is not None and found["id"] == sent["id"]


def test_for_mailbox_acts_on_that_mailbox_only(google) -> None:
    workspace, double = google
    other = workspace.for_mailbox("Jordan@Brightlane.io")
    assert other.for_mailbox("jordan@brightlane.io") is other
    other.create_draft("a@example.com", "Hi", "body", "t", "t:6:dispatch")
    assert len(double.drafts("jordan@brightlane.io")) == 1
    assert double.drafts(MAILBOX) == []
    assert workspace.find_by_trace_key("t:6:dispatch") is None
    assert other.find_by_trace_key("t:6:dispatch") is not None


def test_mark_as_read_of_an_unknown_message_reports_not_found(google) -> None:
    workspace, _ = google
    assert workspace.mark_as_read("missing@example.com")["found"] is False


# --- configuration ---------------------------------------------------------------------------


def test_workspace_from_env_picks_the_adapter(tmp_path: Path) -> None:
    from inboxflow.services import workspace_from_env

    store = SqliteCheckpointStore(tmp_path / "c.db")
    assert isinstance(workspace_from_env(store, {}), StoreWorkspace)
    chosen = workspace_from_env(
        store, {"INBOXFLOW_GOOGLE_API_URL": "http://127.0.0.1:1", "INBOXFLOW_MAILBOX": MAILBOX}
    )
    assert isinstance(chosen, GoogleWorkspace) and chosen.mailbox == MAILBOX
    with_key = workspace_from_env(store, {"INBOXFLOW_GMAIL_CREDENTIALS": "{}"})
    assert isinstance(with_key, GoogleWorkspace)  # the key is read when first used, not here
    store.close()


def _service_account_info() -> dict[str, Any]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return {
        "type": "service_account",
        "project_id": "p",
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": "inboxflow@p.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": "https://oauth2.googleapis.com/token",
    }


def test_service_account_credentials_use_domain_wide_delegation_as_the_mailbox() -> None:
    import json

    from inboxflow.adapters.google_credentials import SCOPES, credentials_for, credentials_info

    info = credentials_info({"INBOXFLOW_GMAIL_CREDENTIALS": json.dumps(_service_account_info())})
    assert info is not None
    credentials = credentials_for(info, MAILBOX)
    assert credentials._subject == MAILBOX
    assert tuple(credentials.scopes) == SCOPES


def test_authorized_user_credentials_from_secret_manager() -> None:
    import json

    from inboxflow.adapters.google_credentials import credentials_for, credentials_info

    asked: list[str] = []
    token = {
        "type": "authorized_user",
        "client_id": "c",
        "client_secret": "s",
        "refresh_token": "r",
    }

    def fetch(name: str) -> str:
        asked.append(name)
        return json.dumps(token)

    info = credentials_info(
        {"INBOXFLOW_GMAIL_CREDENTIALS_SECRET": "gmail-token", "GOOGLE_CLOUD_PROJECT": "prod"}, fetch
    )
    assert asked == ["projects/prod/secrets/gmail-token/versions/latest"]
    credentials = credentials_for(info or {}, MAILBOX)
    assert credentials.refresh_token == "r" and credentials.client_id == "c"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{not json", "invalid JSON"),
        ('{"type": "external_account"}', "expected a service_account"),
        ("/no/such/file.json", "not JSON and not a file"),
    ],
)
def test_unusable_credentials_say_what_is_wrong(value: str, message: str) -> None:
    from inboxflow.adapters.google_credentials import CredentialsError, credentials_info

    with pytest.raises(CredentialsError, match=message):
        credentials_info({"INBOXFLOW_GMAIL_CREDENTIALS": value})

"""The Gmail v1 + Calendar v3 double, driven through the real googleapiclient services."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.google_api import GoogleApiDouble

BOX = "maya.chen@brightlane.io"


@pytest.fixture
def double() -> Iterator[GoogleApiDouble]:
    with GoogleApiDouble(clock=FakeClock(1_800_000_000.0)) as running:
        yield running


def _gmail(double: GoogleApiDouble) -> Any:
    return build(
        "gmail",
        "v1",
        credentials=AnonymousCredentials(),
        static_discovery=True,
        cache_discovery=False,
        client_options={"api_endpoint": f"{double.url}/"},
    ).users()


def _calendar(double: GoogleApiDouble) -> Any:
    return build(
        "calendar",
        "v3",
        credentials=AnonymousCredentials(),
        static_discovery=True,
        cache_discovery=False,
        client_options={"api_endpoint": f"{double.url}/calendar/v3/"},
    )


def _mail(n: int, **headers: str) -> bytes:
    message = EmailMessage()
    message["From"] = headers.pop("From", f"sender{n}@example.com")
    message["To"] = BOX
    message["Subject"] = headers.pop("Subject", f"Message {n}")
    message["Message-ID"] = f"<m{n}@example.com>"
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(f"Body {n}")
    return message.as_bytes()


def _no_sleep(request: Any) -> Any:
    request._sleep = lambda seconds: None
    return request


# --- messages ---------------------------------------------------------------------------------


def test_raw_round_trips_and_full_format_describes_the_mime_tree(double: GoogleApiDouble) -> None:
    message = EmailMessage()
    message["From"] = "a@example.com"
    message["To"] = BOX
    message["Subject"] = "Caf\u00e9 menu"
    message.set_content("plain text")
    message.add_alternative("<p>html</p>", subtype="html")
    message.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="menu.pdf")
    gmail_id = double.deliver(BOX, message.as_bytes())
    gmail = _gmail(double)

    raw = gmail.messages().get(userId=BOX, id=gmail_id, format="raw").execute()
    assert base64.urlsafe_b64decode(raw["raw"]) == message.as_bytes()
    full = gmail.messages().get(userId=BOX, id=gmail_id).execute()
    payload = full["payload"]
    assert payload["mimeType"] == "multipart/mixed"
    assert [p["partId"] for p in payload["parts"]] == ["0", "1"]
    assert [p["partId"] for p in payload["parts"][0]["parts"]] == ["0.0", "0.1"]
    assert payload["parts"][1]["filename"] == "menu.pdf"
    text = payload["parts"][0]["parts"][0]["body"]["data"]
    assert base64.urlsafe_b64decode(text).decode().strip() == "plain text"
    assert {"name": "Subject", "value": "Caf\u00e9 menu"} in payload["headers"]
    assert full["labelIds"] == ["INBOX", "UNREAD"] and full["snippet"] == "plain text"
    metadata = (
        gmail.messages()
        .get(userId=BOX, id=gmail_id, format="metadata", metadataHeaders=["subject"])
        .execute()
    )
    assert metadata["payload"]["headers"] == [{"name": "Subject", "value": "Caf\u00e9 menu"}]


def test_list_filters_by_query_and_labels_and_pages(double: GoogleApiDouble) -> None:
    gmail = _gmail(double)
    ids = [double.deliver(BOX, _mail(n)) for n in range(5)]
    gmail.messages().modify(userId=BOX, id=ids[0], body={"removeLabelIds": ["UNREAD"]}).execute()
    gmail.messages().send(
        userId=BOX, body={"raw": base64.urlsafe_b64encode(_mail(9)).decode()}
    ).execute()

    def listed(**kwargs: Any) -> list[str]:
        answer = gmail.messages().list(userId=BOX, **kwargs).execute()
        return [m["id"] for m in answer.get("messages", [])]

    assert listed(q="rfc822msgid:m3@example.com") == [ids[3]]
    assert listed(q="rfc822msgid:<m3@example.com>") == [ids[3]]
    assert listed(q="in:inbox is:unread") == ids[4:0:-1]  # newest first
    assert listed(q="is:read in:inbox") == [ids[0]]
    assert len(listed(labelIds=["SENT"])) == 1
    assert listed(q="in:sent") == listed(labelIds=["SENT"])
    assert listed(q="newer_than:1d in:inbox") == ids[::-1]
    assert listed(q="after:2030/01/01") == []
    assert listed(q='subject:"message 2"') == [ids[2]]
    first = gmail.messages().list(userId=BOX, labelIds=["INBOX"], maxResults=2).execute()
    second = (
        gmail.messages()
        .list(userId=BOX, labelIds=["INBOX"], maxResults=2, pageToken=first["nextPageToken"])
        .execute()
    )
    assert [m["id"] for m in first["messages"] + second["messages"]] == ids[4:0:-1]
    assert gmail.messages().list(userId=BOX, q="rfc822msgid:none@x").execute() == {
        "resultSizeEstimate": 0
    }


def test_send_threads_by_thread_id_or_references(double: GoogleApiDouble) -> None:
    gmail = _gmail(double)
    original = double.deliver(BOX, _mail(1))
    reply = _mail(2, In_Reply_To="<m1@example.com>", References="<m1@example.com>")
    by_headers = (
        gmail.messages()
        .send(userId=BOX, body={"raw": base64.urlsafe_b64encode(reply).decode()})
        .execute()
    )
    by_id = (
        gmail.messages()
        .send(
            userId=BOX,
            body={"raw": base64.urlsafe_b64encode(_mail(3)).decode(), "threadId": original},
        )
        .execute()
    )
    unrelated = (
        gmail.messages()
        .send(userId=BOX, body={"raw": base64.urlsafe_b64encode(_mail(4)).decode()})
        .execute()
    )
    assert by_headers["threadId"] == by_id["threadId"] == original
    assert unrelated["threadId"] == unrelated["id"] != original
    assert by_headers["labelIds"] == ["SENT"]


def test_drafts_create_list_get(double: GoogleApiDouble) -> None:
    gmail = _gmail(double)
    raw = base64.urlsafe_b64encode(_mail(1)).decode()
    draft = gmail.drafts().create(userId=BOX, body={"message": {"raw": raw}}).execute()
    assert draft["message"]["labelIds"] == ["DRAFT"]
    listed = gmail.drafts().list(userId=BOX, q="rfc822msgid:m1@example.com").execute()
    assert listed["drafts"] == [
        {
            "id": draft["id"],
            "message": {"id": draft["message"]["id"], "threadId": draft["message"]["threadId"]},
        }
    ]
    fetched = gmail.drafts().get(userId=BOX, id=draft["id"], format="raw").execute()
    assert base64.urlsafe_b64decode(fetched["message"]["raw"]) == _mail(1)
    with pytest.raises(HttpError) as missing:
        gmail.drafts().get(userId=BOX, id="r000").execute()
    assert missing.value.resp.status == 404


# --- history, watch, notifications -------------------------------------------------------------


def test_history_pages_after_the_cursor_and_filters_types_and_labels(
    double: GoogleApiDouble,
) -> None:
    gmail = _gmail(double)
    start = int(gmail.getProfile(userId=BOX).execute()["historyId"])
    ids = [double.deliver(BOX, _mail(n)) for n in range(7)]
    gmail.messages().modify(userId=BOX, id=ids[0], body={"removeLabelIds": ["UNREAD"]}).execute()
    gmail.messages().send(
        userId=BOX, body={"raw": base64.urlsafe_b64encode(_mail(8)).decode()}
    ).execute()

    pages, token, seen = 0, None, []
    while True:
        page = (
            gmail.history()
            .list(
                userId=BOX,
                startHistoryId=str(start),
                historyTypes="messageAdded",
                labelId="INBOX",
                maxResults=3,
                pageToken=token,
            )
            .execute()
        )
        pages += 1
        seen += [a["message"]["id"] for r in page.get("history", []) for a in r["messagesAdded"]]
        token = page.get("nextPageToken")
        if not token:
            break
    assert pages == 3 and seen == ids
    assert int(page["historyId"]) == start + 9  # 7 deliveries, 1 label change, 1 send
    everything = gmail.history().list(userId=BOX, startHistoryId=str(start)).execute()
    assert any("labelsRemoved" in r for r in everything["history"])
    later = gmail.history().list(userId=BOX, startHistoryId=str(start + 9)).execute()
    assert "history" not in later


def test_an_expired_cursor_is_a_404_in_googles_error_format(double: GoogleApiDouble) -> None:
    gmail = _gmail(double)
    start = double.history_id(BOX)
    for n in range(3):
        double.deliver(BOX, _mail(n))
    double.expire_history(BOX, start + 2)
    with pytest.raises(HttpError) as expired:
        gmail.history().list(userId=BOX, startHistoryId=str(start)).execute()
    assert expired.value.resp.status == 404
    body = json.loads(expired.value.content)
    assert body["error"]["code"] == 404 and body["error"]["status"] == "NOT_FOUND"
    assert body["error"]["errors"][0]["reason"] == "notFound"
    recent = gmail.history().list(userId=BOX, startHistoryId=str(start + 2)).execute()
    assert len(recent["history"]) == 1


def test_watch_notifies_changes_that_touch_the_watched_labels(double: GoogleApiDouble) -> None:
    gmail = _gmail(double)
    notes: list[tuple[str, int]] = []
    double.on_notify(lambda address, history_id: notes.append((address, history_id)))
    double.deliver(BOX, _mail(0))
    assert notes == []  # not watched yet
    answer = gmail.watch(
        userId=BOX, body={"topicName": "projects/p/topics/gmail", "labelIds": ["INBOX"]}
    ).execute()
    assert int(answer["expiration"]) == 1_800_000_000_000 + 7 * 24 * 3600 * 1000
    delivered = double.deliver(BOX, _mail(1))
    gmail.messages().send(
        userId=BOX, body={"raw": base64.urlsafe_b64encode(_mail(2)).decode()}
    ).execute()
    gmail.messages().modify(userId=BOX, id=delivered, body={"removeLabelIds": ["UNREAD"]}).execute()
    assert notes == [(BOX, int(answer["historyId"]) + 1), (BOX, int(answer["historyId"]) + 3)]
    gmail.stop(userId=BOX).execute()
    double.deliver(BOX, _mail(3))
    assert len(notes) == 2
    with pytest.raises(HttpError):
        gmail.watch(userId=BOX, body={"topicName": "gmail"}).execute()


def test_a_failing_notify_callback_does_not_fail_the_api(double: GoogleApiDouble) -> None:
    def broken(address: str, history_id: int) -> None:
        raise RuntimeError("bus down")

    double.on_notify(broken)
    _gmail(double).watch(userId=BOX, body={"topicName": "projects/p/topics/t"}).execute()
    assert double.deliver(BOX, _mail(1))
    assert [str(e) for e in double.notify_errors] == ["bus down"]


# --- faults and errors ------------------------------------------------------------------------


def test_injected_429_and_403_rate_limits_are_retried_by_the_client(
    double: GoogleApiDouble,
) -> None:
    gmail = _gmail(double)
    double.fail_next("users.getProfile", 429)
    double.fail_next("/profile", 403)
    profile = _no_sleep(gmail.getProfile(userId=BOX)).execute(num_retries=3)
    assert profile["emailAddress"] == BOX
    assert [c[0] for c in double.calls].count("gmail.users.getProfile") == 3
    double.fail_next("getProfile", 500, times=2)
    with pytest.raises(HttpError) as failed:
        _no_sleep(gmail.getProfile(userId=BOX)).execute(num_retries=1)
    assert failed.value.resp.status == 500
    assert json.loads(failed.value.content)["error"]["errors"][0]["reason"] == "backendError"


def test_after_apply_faults_act_then_answer_the_error(double: GoogleApiDouble) -> None:
    gmail = _gmail(double)
    double.fail_next("messages.send", 500, after_apply=True)
    with pytest.raises(HttpError):
        gmail.messages().send(
            userId=BOX, body={"raw": base64.urlsafe_b64encode(_mail(1)).decode()}
        ).execute()
    assert len(double.messages(BOX, "SENT")) == 1
    [injected] = double.injected
    assert (injected.method, injected.status, injected.after_apply) == (
        "gmail.users.messages.send",
        500,
        True,
    )
    assert double.injected_count("messages.send") == 1
    assert double.injected_count("messages.send", 429) == 0


def test_bad_requests_get_googles_errors(double: GoogleApiDouble) -> None:
    gmail = _gmail(double)
    for request, status in [
        (gmail.getProfile(userId="me"), 400),
        (gmail.messages().get(userId=BOX, id="ffff"), 404),
        (gmail.messages().send(userId=BOX, body={}), 400),
        (gmail.history().list(userId=BOX, startHistoryId="x"), 400),
        (_calendar(double).events().list(calendarId="primary"), 400),
    ]:
        with pytest.raises(HttpError) as error:
            request.execute()
        assert error.value.resp.status == status
        assert json.loads(error.value.content)["error"]["code"] == status


# --- calendar ---------------------------------------------------------------------------------


def test_calendar_insert_list_get_and_conflicts(double: GoogleApiDouble) -> None:
    events = _calendar(double).events()
    body = {
        "id": "0123456789abcdefv",
        "summary": "Demo",
        "start": {"dateTime": "2027-01-05T14:00:00+01:00"},
        "end": {"dateTime": "2027-01-05T14:30:00Z"},
        "attendees": [{"email": "p@example.com"}],
        "extendedProperties": {"private": {"inboxflowTrace": "t:1:x"}},
    }
    created = events.insert(calendarId=BOX, body=body, sendUpdates="all").execute()
    assert created["start"]["dateTime"] == "2027-01-05T13:00:00Z"
    with pytest.raises(HttpError) as duplicate:
        events.insert(calendarId=BOX, body=body).execute()
    assert duplicate.value.resp.status == 409
    with pytest.raises(HttpError) as invalid:
        events.insert(calendarId=BOX, body={**body, "id": "UPPER_case"}).execute()
    assert invalid.value.resp.status == 400
    assert events.get(calendarId=BOX, eventId=created["id"]).execute()["summary"] == "Demo"
    listed = events.list(
        calendarId=BOX,
        timeMin="2027-01-05T13:15:00Z",
        timeMax="2027-01-06T00:00:00Z",
        privateExtendedProperty="inboxflowTrace=t:1:x",
        singleEvents=True,
        orderBy="startTime",
    ).execute()
    assert [e["id"] for e in listed["items"]] == [created["id"]]
    assert events.list(calendarId=BOX, timeMin="2027-01-05T14:30:00Z").execute()["items"] == []


def test_freebusy_merges_and_clips_busy_time(double: GoogleApiDouble) -> None:
    double.seed_from_workspace_json(mailbox=BOX, now=1_800_000_000.0)  # a Friday
    answer = (
        _calendar(double)
        .freebusy()
        .query(
            body={
                "timeMin": "2027-01-18T09:10:00Z",  # business day 1 after the clock (Monday)
                "timeMax": "2027-01-18T12:00:00Z",
                "items": [{"id": BOX}, {"id": "other@brightlane.io"}],
            }
        )
        .execute()
    )
    assert answer["calendars"][BOX]["busy"] == [
        {"start": "2027-01-18T09:10:00Z", "end": "2027-01-18T09:30:00Z"},
        {"start": "2027-01-18T10:00:00Z", "end": "2027-01-18T11:30:00Z"},
    ]
    assert answer["calendars"]["other@brightlane.io"]["busy"] == []
    assert len(double.events(BOX)) == 15 and "priya.raman@kestrel-logistics.com" in double.contacts


# --- as a process -----------------------------------------------------------------------------


def test_runs_as_a_process_for_dev_and_functions_framework() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "inboxflow.dev.doubles.google_api", "--port", "0", "--seed"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = line.rsplit(" ", 1)[-1].strip()
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}/gmail/v1/users/{BOX}/profile") as answer:
            assert json.load(answer)["emailAddress"] == BOX
        request = urllib.request.Request(f"{url}/calendar/v3/calendars/{BOX}/events", method="GET")
        with urllib.request.urlopen(request) as answer:
            assert len(json.load(answer)["items"]) == 15
    finally:
        process.terminate()
        process.wait(timeout=10)

"""The Workspace port on Gmail v1 and Calendar v3, through google-api-python-client.

Services are built from the client library's bundled discovery documents
(``static_discovery=True``: no discovery fetch at start-up), one pair per
mailbox and thread (``httplib2`` is not thread-safe). ``userId`` and
``calendarId`` are the mailbox address, never ``me``/``primary``: one
process serves several mailboxes (``for_mailbox``), each with its own
delegated credentials. ``googleapiclient`` is imported only when the first
service is built, so a node that never touches Gmail never pays for it.

Contacts are not in Gmail: they are read from the checkpoint store
(``contacts/{email}``, the CRM stand-in the seed and ``retrieve`` use).

Exactly once. Every message we write carries ``X-Inboxflow-Trace: <key>``
and a Message-ID derived from the key (``trace_message_id``).
``find_by_trace_key`` searches drafts and sent mail for that Message-ID
(``rfc822msgid:``, Gmail cannot search custom headers), and, in case Gmail
replaced the Message-ID on send, scans the newest sent messages and drafts
for the header. Sends and draft creations are never blindly retried: after a
429/5xx or a lost connection the adapter looks for the message first (the
server may have acted before the answer was lost) and only then tries again.
Calendar events get an id derived from the key, so a repeated insert is a 409
and the existing event is returned. Reads are retried by
``googleapiclient`` (``num_retries``: 429, 5xx, 403 rate limits).
"""

from __future__ import annotations

import base64
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any

from ..errors import NodeFailed, RetryableError
from ..mail import TRACE_HEADER, reply_subject
from ..ports.checkpoint import CheckpointStore
from ..workspace import (
    Interval,
    Workspace,
    contact_in_store,
    merge_intervals,
    reply_references,
    trace_event_id,
    trace_message_id,
)
from .google_credentials import anonymous_credentials, credentials_for, credentials_info

RECENT_SCAN = 25
"""Newest sent messages and drafts scanned for the trace header when the Message-ID search misses."""
METADATA_HEADERS = [
    "Message-ID",
    "To",
    "Subject",
    "In-Reply-To",
    "References",
    TRACE_HEADER,
]

CredentialsFactory = Callable[[str], Any]
"""``mailbox -> google.auth credentials`` acting as that mailbox."""


class WorkspaceApiError(NodeFailed):
    """Gmail or Calendar refused the request for good (4xx other than rate limits)."""


class _Connection:
    """What every mailbox's adapter shares: endpoint, credentials, retry policy, services."""

    def __init__(
        self,
        credentials: CredentialsFactory,
        api_url: str | None,
        num_retries: int,
        sleep: Callable[[float], None],
        timeout: float,
    ) -> None:
        self.credentials = credentials
        self.api_url = api_url.rstrip("/") if api_url else None
        self.num_retries = num_retries
        self.sleep = sleep
        self.timeout = timeout
        self.local = threading.local()
        self.lock = threading.Lock()
        self.workspaces: dict[str, GoogleWorkspace] = {}

    def service(self, api: str, version: str, mailbox: str) -> Any:
        cache: dict[tuple[str, str], Any] = self.local.__dict__.setdefault("services", {})
        key = (api, mailbox)
        if key not in cache:
            cache[key] = self._build(api, version, mailbox)
        return cache[key]

    def _build(self, api: str, version: str, mailbox: str) -> Any:
        import google_auth_httplib2
        import httplib2
        from googleapiclient.discovery import build

        http = google_auth_httplib2.AuthorizedHttp(
            self.credentials(mailbox), http=httplib2.Http(timeout=self.timeout)
        )
        options = None
        if self.api_url:
            path = "/" if api == "gmail" else f"/{api}/{version}/"
            options = {"api_endpoint": f"{self.api_url}{path}"}
        return build(
            api,
            version,
            http=http,
            static_discovery=True,
            cache_discovery=False,
            client_options=options,
        )


class GoogleWorkspace(Workspace):
    """Gmail + Calendar of one mailbox (``for_mailbox`` gives the others).

    Args:
        mailbox: the address the agent works for (Gmail ``userId``, ``calendarId``).
        store: checkpoint store holding the contacts.
        credentials: ``mailbox -> credentials`` (``credentials_from_env`` builds one).
        api_url: base URL of the local double; None for Google.
        num_retries: retries of a request on 429/5xx/rate-limit 403.
        sleep: how to wait between retries (tests pass a no-op).
        timeout: socket timeout of one request, seconds.
    """

    def __init__(
        self,
        mailbox: str,
        store: CheckpointStore,
        credentials: CredentialsFactory | None = None,
        *,
        api_url: str | None = None,
        num_retries: int = 4,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = 30.0,
        _connection: _Connection | None = None,
    ) -> None:
        self.mailbox = mailbox.strip().lower()
        self.store = store
        if _connection is None:
            if credentials is None:
                if not api_url:
                    raise ValueError("GoogleWorkspace needs credentials unless api_url is set")
                credentials = _anonymous
            _connection = _Connection(credentials, api_url, num_retries, sleep, timeout)
            _connection.workspaces[self.mailbox] = self
        self._connection = _connection

    @classmethod
    def from_env(
        cls, store: CheckpointStore, environ: Mapping[str, str], clock: Any = None
    ) -> GoogleWorkspace:
        """Configure from ``INBOXFLOW_GOOGLE_API_URL`` / ``INBOXFLOW_GMAIL_CREDENTIALS[_SECRET]``.

        The default mailbox is ``INBOXFLOW_MAILBOX``; nodes switch with
        ``for_mailbox(email.mailbox)``. Credentials are read when the first
        service is built, not here (no Secret Manager call at import or start).
        """
        api_url = environ.get("INBOXFLOW_GOOGLE_API_URL") or None
        mailbox = environ.get("INBOXFLOW_MAILBOX", "") or "unset-mailbox@invalid"
        credentials = None if api_url else credentials_from_env(environ)
        return cls(mailbox, store, credentials, api_url=api_url)

    def for_mailbox(self, mailbox: str) -> GoogleWorkspace:
        address = mailbox.strip().lower()
        if address == self.mailbox:
            return self
        with self._connection.lock:
            found = self._connection.workspaces.get(address)
            if found is None:
                found = GoogleWorkspace(address, self.store, _connection=self._connection)
                self._connection.workspaces[address] = found
            return found

    # --- plumbing ------------------------------------------------------------------------

    @property
    def _gmail(self) -> Any:
        return self._connection.service("gmail", "v1", self.mailbox).users()

    @property
    def _calendar(self) -> Any:
        return self._connection.service("calendar", "v3", self.mailbox)

    def _execute(self, request: Any, retries: int | None = None) -> Any:
        """Run a request; retried by googleapiclient, errors mapped to the runtime's taxonomy."""
        from googleapiclient.errors import HttpError

        request._sleep = self._connection.sleep  # googleapiclient's backoff sleep, for tests
        try:
            return request.execute(
                num_retries=self._connection.num_retries if retries is None else retries
            )
        except HttpError as exc:
            raise _translate(exc) from exc
        except OSError as exc:
            raise RetryableError(f"Google API unreachable: {exc}") from exc
        except Exception as exc:
            if type(exc).__module__.startswith("httplib2"):
                raise RetryableError(f"Google API transport error: {exc}") from exc
            raise

    def _write_once(self, trace_key: str, request: Callable[[], Any]) -> tuple[Any, bool]:
        """Perform a non-idempotent write; after a transient failure, look before retrying.

        Returns:
            ``(response, False)`` when the write answered, or ``(found, True)``
            when an earlier attempt turned out to have been applied.
        """
        attempts = self._connection.num_retries + 1
        for attempt in range(attempts):
            try:
                return self._execute(request(), retries=0), False
            except RetryableError:
                if attempt == attempts - 1:
                    raise
                self._connection.sleep(min(30.0, 2**attempt * (0.5 + random.random())))
                found = self.find_by_trace_key(trace_key)
                if found is not None:
                    return found, True
        raise AssertionError("unreachable")

    # --- contacts and calendar -------------------------------------------------------------

    def get_contact(self, email: str) -> dict[str, Any] | None:
        return contact_in_store(self.store, email)

    def list_events(self, start: datetime, end: datetime) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            page = self._execute(
                self._calendar.events().list(
                    calendarId=self.mailbox,
                    timeMin=_rfc3339(start),
                    timeMax=_rfc3339(end),
                    singleEvents=True,
                    orderBy="startTime",
                    maxResults=250,
                    pageToken=token,
                )
            )
            events.extend(_event(item) for item in page.get("items", []))
            token = page.get("nextPageToken")
            if not token:
                return events

    def free_busy(self, start: datetime, end: datetime) -> list[Interval]:
        answer = self._execute(
            self._calendar.freebusy().query(
                body={
                    "timeMin": _rfc3339(start),
                    "timeMax": _rfc3339(end),
                    "items": [{"id": self.mailbox}],
                }
            )
        )
        calendar = (answer.get("calendars") or {}).get(self.mailbox) or {}
        if calendar.get("errors"):
            raise WorkspaceApiError(f"free/busy of {self.mailbox}: {calendar['errors']}")
        return merge_intervals(
            [(_parse_time(b["start"]), _parse_time(b["end"])) for b in calendar.get("busy", [])]
        )

    def insert_event(
        self,
        summary: str,
        start: datetime,
        end: datetime,
        attendees: Sequence[str],
        trace_key: str,
        description: str = "",
    ) -> dict[str, Any]:
        event_id = trace_event_id(trace_key)
        body = {
            "id": event_id,
            "summary": summary,
            "description": description,
            "start": {"dateTime": _rfc3339(start), "timeZone": "UTC"},
            "end": {"dateTime": _rfc3339(end), "timeZone": "UTC"},
            "attendees": [{"email": address} for address in attendees],
            "extendedProperties": {"private": {"inboxflowTrace": trace_key}},
        }
        try:
            created = self._execute(
                self._calendar.events().insert(
                    calendarId=self.mailbox, body=body, sendUpdates="all"
                )
            )
        except WorkspaceApiError as exc:
            if getattr(exc, "status", None) != 409:
                raise
            created = self._execute(
                self._calendar.events().get(calendarId=self.mailbox, eventId=event_id)
            )
        return {**_event(created), "trace_key": trace_key}

    # --- mail ------------------------------------------------------------------------------

    def create_draft(
        self,
        to: str,
        subject: str,
        body: str,
        thread_id: str,
        trace_key: str,
        *,
        in_reply_to: str | None = None,
        references: Sequence[str] | str = (),
    ) -> dict[str, Any]:
        message, gmail_thread = self._compose(
            to, subject, body, thread_id, trace_key, in_reply_to, references
        )
        return self._write_message(message, gmail_thread, trace_key, draft=True)

    def send_reply(
        self,
        to: str,
        subject: str,
        body: str,
        thread_id: str,
        trace_key: str,
        *,
        in_reply_to: str | None = None,
        references: Sequence[str] | str = (),
    ) -> dict[str, Any]:
        message, gmail_thread = self._compose(
            to, subject, body, thread_id, trace_key, in_reply_to, references
        )
        return self._write_message(message, gmail_thread, trace_key, draft=False)

    def send_message(
        self, to: str, subject: str, text: str, html: str, trace_key: str
    ) -> dict[str, Any]:
        """Send a new message (plain text with an HTML alternative), once per ``trace_key``.

        Used for reviewer notifications; ``find_by_trace_key`` finds it again.
        """
        message = self._stamped(to, subject, trace_key)
        message.set_content(text)
        message.add_alternative(html, subtype="html")
        return self._write_message(message, None, trace_key, draft=False)

    def _write_message(
        self, message: EmailMessage, gmail_thread: str | None, trace_key: str, *, draft: bool
    ) -> dict[str, Any]:
        """Save ``message`` as a draft or send it, once per ``trace_key``."""
        payload: dict[str, Any] = {"raw": _raw(message)}
        if gmail_thread:
            payload["threadId"] = gmail_thread

        def request() -> Any:
            if draft:
                return self._gmail.drafts().create(userId=self.mailbox, body={"message": payload})
            return self._gmail.messages().send(userId=self.mailbox, body=payload)

        answer, found = self._write_once(trace_key, request)
        if found:
            return dict(answer)
        gmail_message = answer["message"] if draft else answer
        kind = "draft" if draft else "sent"
        return self._described(message, kind, answer["id"], gmail_message, trace_key)

    def _stamped(self, to: str, subject: str, trace_key: str) -> EmailMessage:
        """A message from this mailbox carrying the trace header and the key's Message-ID."""
        message = EmailMessage()
        message["From"] = self.mailbox
        message["To"] = to
        message["Subject"] = subject
        message["Date"] = formatdate(usegmt=True)
        message["Message-ID"] = trace_message_id(trace_key, _domain(self.mailbox))
        message[TRACE_HEADER] = trace_key
        return message

    def mark_as_read(self, message_id: str) -> dict[str, Any]:
        ids = self._gmail_ids(message_id)
        if not ids:
            return {"id": message_id, "found": False}
        for gmail_id in ids:
            self._execute(
                self._gmail.messages().modify(
                    userId=self.mailbox, id=gmail_id, body={"removeLabelIds": ["UNREAD"]}
                )
            )
        return {"id": ids[0], "found": True}

    def find_by_trace_key(self, trace_key: str) -> dict[str, Any] | None:
        message_id = trace_message_id(trace_key, _domain(self.mailbox))
        query = f"rfc822msgid:{message_id.strip('<>')}"
        drafts = self._execute(
            self._gmail.drafts().list(userId=self.mailbox, q=query, maxResults=10)
        )
        for draft in drafts.get("drafts", []):
            found = self._if_stamped(draft["message"]["id"], trace_key, "draft", draft["id"])
            if found:
                return found
        sent = self._execute(
            self._gmail.messages().list(
                userId=self.mailbox, q=query, labelIds=["SENT"], maxResults=10
            )
        )
        for ref in sent.get("messages", []):
            found = self._if_stamped(ref["id"], trace_key, "sent", ref["id"])
            if found:
                return found
        # Gmail may have replaced our Message-ID: look at the newest writes' headers.
        recent_drafts = self._execute(
            self._gmail.drafts().list(userId=self.mailbox, maxResults=RECENT_SCAN)
        )
        for draft in recent_drafts.get("drafts", []):
            found = self._if_stamped(draft["message"]["id"], trace_key, "draft", draft["id"])
            if found:
                return found
        recent_sent = self._execute(
            self._gmail.messages().list(
                userId=self.mailbox, labelIds=["SENT"], maxResults=RECENT_SCAN
            )
        )
        for ref in recent_sent.get("messages", []):
            found = self._if_stamped(ref["id"], trace_key, "sent", ref["id"])
            if found:
                return found
        return None

    # --- mail helpers ----------------------------------------------------------------------

    def _compose(
        self,
        to: str,
        subject: str,
        body: str,
        thread_id: str,
        trace_key: str,
        in_reply_to: str | None,
        references: Sequence[str] | str,
    ) -> tuple[EmailMessage, str | None]:
        """The MIME message and the Gmail thread it belongs to (None: a new thread)."""
        original = self._original(in_reply_to) if in_reply_to else None
        gmail_thread = original["threadId"] if original else None
        if gmail_thread is None and thread_id and "@" not in thread_id:
            gmail_thread = thread_id  # already a Gmail thread id
        if original is not None:
            references = original["references"]
        message = self._stamped(to, reply_subject(subject) if in_reply_to else subject, trace_key)
        if in_reply_to:
            refs = reply_references(in_reply_to, references)
            message["In-Reply-To"] = refs[-1]
            message["References"] = " ".join(refs)
        message.set_content(body)
        return message, gmail_thread

    def _original(self, in_reply_to: str) -> dict[str, Any] | None:
        """The message being answered, found by its Message-ID: Gmail thread and References."""
        bare = in_reply_to.strip().strip("<>")
        listed = self._execute(
            self._gmail.messages().list(userId=self.mailbox, q=f"rfc822msgid:{bare}", maxResults=5)
        )
        refs = listed.get("messages", [])
        if not refs:
            return None
        meta = self._execute(
            self._gmail.messages().get(
                userId=self.mailbox,
                id=refs[0]["id"],
                format="metadata",
                metadataHeaders=["References", "Message-ID"],
            )
        )
        headers = _header_map(meta)
        return {
            "id": meta["id"],
            "threadId": meta.get("threadId"),
            "references": headers.get("references", ""),
        }

    def _gmail_ids(self, message_id: str) -> list[str]:
        if "@" not in message_id:
            return [message_id]
        listed = self._execute(
            self._gmail.messages().list(
                userId=self.mailbox, q=f"rfc822msgid:{message_id.strip().strip('<>')}"
            )
        )
        return [ref["id"] for ref in listed.get("messages", [])]

    def _if_stamped(
        self, gmail_id: str, trace_key: str, kind: str, resource_id: str
    ) -> dict[str, Any] | None:
        meta = self._execute(
            self._gmail.messages().get(
                userId=self.mailbox,
                id=gmail_id,
                format="metadata",
                metadataHeaders=METADATA_HEADERS,
            )
        )
        headers = _header_map(meta)
        if headers.get(TRACE_HEADER.lower()) != trace_key:
            return None
        return {
            "id": resource_id,
            "kind": kind,
            "gmail_message_id": gmail_id,
            "thread_id": meta.get("threadId"),
            "to": headers.get("to", ""),
            "subject": headers.get("subject", ""),
            "message_id": headers.get("message-id", ""),
            "headers": {
                TRACE_HEADER: trace_key,
                "In-Reply-To": headers.get("in-reply-to", ""),
                "References": headers.get("references", ""),
            },
            "trace_key": trace_key,
        }

    def _described(
        self,
        message: EmailMessage,
        kind: str,
        resource_id: str,
        gmail_message: Mapping[str, Any],
        trace_key: str,
    ) -> dict[str, Any]:
        return {
            "id": resource_id,
            "kind": kind,
            "gmail_message_id": gmail_message.get("id"),
            "thread_id": gmail_message.get("threadId"),
            "to": str(message["To"]),
            "subject": str(message["Subject"]),
            "message_id": str(message["Message-ID"]),
            "headers": {
                TRACE_HEADER: trace_key,
                "In-Reply-To": str(message.get("In-Reply-To") or ""),
                "References": str(message.get("References") or ""),
            },
            "trace_key": trace_key,
        }


def credentials_from_env(environ: Mapping[str, str]) -> CredentialsFactory:
    """``mailbox -> credentials`` from ``INBOXFLOW_GMAIL_CREDENTIALS[_SECRET]``, read on first use.

    The key is read once per process (one Secret Manager access); each
    mailbox gets its own delegated credentials, cached.
    """
    lock = threading.Lock()
    info: dict[str, Any] = {}
    per_mailbox: dict[str, Any] = {}

    def factory(mailbox: str) -> Any:
        with lock:
            if not info:
                loaded = credentials_info(environ)
                if loaded is None:
                    raise ValueError("no Gmail credentials configured")
                info.update(loaded)
            if mailbox not in per_mailbox:
                per_mailbox[mailbox] = credentials_for(info, mailbox)
            return per_mailbox[mailbox]

    return factory


def _anonymous(mailbox: str) -> Any:
    return anonymous_credentials()


def _translate(exc: Any) -> Exception:
    status = int(getattr(exc, "status_code", 0) or exc.resp.status)
    reason = str(exc.reason or "")
    details = exc.error_details if isinstance(exc.error_details, list) else []
    reasons = {str(d.get("reason")) for d in details if isinstance(d, Mapping)}
    message = f"Google API {status}: {reason}"
    if status in (408, 429) or status >= 500:
        return RetryableError(message)
    if status == 403 and reasons & {"rateLimitExceeded", "userRateLimitExceeded"}:
        return RetryableError(message)
    error = WorkspaceApiError(message)
    error.status = status  # type: ignore[attr-defined]
    return error


def _raw(message: EmailMessage) -> str:
    return base64.urlsafe_b64encode(message.as_bytes()).decode("ascii")


def _domain(address: str) -> str:
    return address.rpartition("@")[2] or "inboxflow.invalid"


def _header_map(resource: Mapping[str, Any]) -> dict[str, str]:
    headers = (resource.get("payload") or {}).get("headers") or []
    result: dict[str, str] = {}
    for header in headers:
        result.setdefault(str(header["name"]).lower(), str(header["value"]))
    return result


def _rfc3339(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value).astimezone(UTC)


def _event(item: Mapping[str, Any]) -> dict[str, Any]:
    def when(value: Mapping[str, Any]) -> str:
        if value.get("dateTime"):
            return _parse_time(str(value["dateTime"])).isoformat()
        return datetime.fromisoformat(str(value["date"])).replace(tzinfo=UTC).isoformat()

    return {
        "id": item.get("id"),
        "summary": item.get("summary", ""),
        "start": when(item.get("start") or {}),
        "end": when(item.get("end") or {}),
        "attendees": [a.get("email") for a in item.get("attendees") or [] if a.get("email")],
    }


__all__ = ["CredentialsFactory", "GoogleWorkspace", "WorkspaceApiError", "credentials_from_env"]

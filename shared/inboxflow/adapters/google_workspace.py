"""The Workspace port on Gmail v1 and Calendar v3, through google-api-python-client.

Clients come from the one Google API layer (``google_api``: static
discovery, one client per API, mailbox and thread, the local double at
``INBOXFLOW_GOOGLE_API_URL``). ``userId`` and ``calendarId`` are the mailbox
address, never ``me``/``primary``: one process serves several mailboxes
(``for_mailbox``), each with its own delegated credentials.

Contacts are not in Gmail: they are read from the checkpoint store
(``contacts/{email}``, the CRM stand-in the seed and ``retrieve`` use).

Exactly once. Every message we write carries ``X-Inboxflow-Trace: <stamp>``
and the Message-ID ``<inboxflow.<stamp>@domain>``, the stamp drawn once per
effect key (``mail_stamps.py``: random, kept in the store, so a reader of the
message learns nothing of the trace). ``find_by_trace_key`` reads the key's
stamp (none: nothing was written) and searches drafts and sent mail for that
Message-ID (``rfc822msgid:``, Gmail cannot search custom headers), and, in case
Gmail replaced the Message-ID on send, scans the newest sent messages and
drafts for the header. Sends and draft creations are never blindly retried: after a
retryable failure (a lost connection, a 5xx, a rate limit) the adapter looks for
the message first (the server may have acted before the answer was lost) and
only then tries again.
Calendar events get an id derived from the key, so a repeated insert is a 409
and the existing event is returned. Reads are retried by the Google API layer
on what it counts as retryable (408, 429, 5xx, 403 rate and quota limits).
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, getaddresses
from typing import Any

from ..errors import NodeFailed, RetryableError
from ..mail import TRACE_HEADER, reply_subject
from ..mail.addresses import address_key_or_none, same_address
from ..mail_stamps import stamp_for, stamp_of, stamped_message_id
from ..ports.documents import DocumentStore
from ..ports.workspace import (
    Interval,
    NewEvent,
    OutgoingReply,
    Workspace,
    merge_intervals,
)
from ..workspace import contact_in_store
from .google_api import GoogleApiConnection, PortErrors, backoff_delay
from .google_credentials import CredentialsFactory

DEFAULT_RETRIES = 4
"""Retries of a read, or of a write after looking for it (``_write_once``)."""
RECENT_SCAN = 25
"""Newest sent messages and drafts scanned for the trace header when the Message-ID search misses."""
CORRESPONDENCE_SCAN = 10
"""Sent messages ``has_written_to`` reads for one address (Gmail's ``to:`` search, newest first)."""
METADATA_HEADERS = [
    "Message-ID",
    "To",
    "Subject",
    "In-Reply-To",
    "References",
    TRACE_HEADER,
]


class WorkspaceApiError(NodeFailed):
    """Gmail or Calendar refused the request for good (4xx other than rate limits).

    Attributes:
        status: the HTTP status.
    """

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class WorkspaceApiUnavailable(RetryableError):
    """Gmail or Calendar failed transiently (408, 429, 5xx, rate limits, no answer)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


WORKSPACE_ERRORS = PortErrors(
    rate_limited=WorkspaceApiUnavailable,
    unavailable=WorkspaceApiUnavailable,
    permanent=WorkspaceApiError,
)


@dataclass
class _Mailboxes:
    """What every mailbox's adapter shares: the connection and the adapters made so far."""

    connection: GoogleApiConnection
    workspaces: dict[str, GoogleWorkspace] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class GoogleWorkspace(Workspace):
    """Gmail + Calendar of one mailbox (``for_mailbox`` gives the others).

    Args:
        mailbox: the address the agent works for (Gmail ``userId``, ``calendarId``).
        store: checkpoint store holding the contacts.
        credentials: ``mailbox -> credentials`` (default: none against the double,
            else ``google_credentials.credentials_from_env``).
        api_url: base URL of the local double; None for Google.
        num_retries: retries of a request that failed retryably (``google_api``).
        sleep: how to wait between retries (tests pass a no-op).
        timeout: socket timeout of one request, seconds.
        connection: an existing connection (then the four arguments above are not used).
    """

    def __init__(
        self,
        mailbox: str,
        store: DocumentStore,
        credentials: CredentialsFactory | None = None,
        *,
        api_url: str | None = None,
        num_retries: int = DEFAULT_RETRIES,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = 30.0,
        connection: GoogleApiConnection | None = None,
        _mailboxes: _Mailboxes | None = None,
    ) -> None:
        self.mailbox = mailbox.strip().lower()
        self.store = store
        if _mailboxes is None:
            if connection is None:
                connection = GoogleApiConnection(
                    api_url, credentials, timeout_s=timeout, num_retries=num_retries, sleep=sleep
                )
            _mailboxes = _Mailboxes(connection)
            _mailboxes.workspaces[self.mailbox] = self
        self._mailboxes = _mailboxes
        self._api = _mailboxes.connection

    @classmethod
    def from_env(
        cls,
        store: DocumentStore,
        environ: Mapping[str, str],
        clock: Any = None,
        scopes_for: Callable[[str], Sequence[str]] | None = None,
    ) -> GoogleWorkspace:
        """Configure from ``INBOXFLOW_GOOGLE_API_URL`` / ``INBOXFLOW_GMAIL_CREDENTIALS[_SECRET]``.

        The default mailbox is ``INBOXFLOW_MAILBOX``; nodes switch with
        ``for_mailbox(email.mailbox)``. Credentials are read when the first
        service is built, not here (no Secret Manager call at import or start);
        each mailbox's ask for ``scopes_for(mailbox)`` (its graphs' scopes).
        """
        mailbox = environ.get("INBOXFLOW_MAILBOX", "") or "unset-mailbox@invalid"
        connection = GoogleApiConnection.from_env(
            environ, scopes_for=scopes_for, num_retries=DEFAULT_RETRIES
        )
        return cls(mailbox, store, connection=connection)

    def for_mailbox(self, mailbox: str) -> GoogleWorkspace:
        address = mailbox.strip().lower()
        if address == self.mailbox:
            return self
        with self._mailboxes.lock:
            found = self._mailboxes.workspaces.get(address)
            if found is None:
                found = GoogleWorkspace(address, self.store, _mailboxes=self._mailboxes)
                self._mailboxes.workspaces[address] = found
            return found

    # --- plumbing ------------------------------------------------------------------------

    @property
    def _gmail(self) -> Any:
        return self._api.service("gmail", "v1", self.mailbox).users()

    @property
    def _calendar(self) -> Any:
        return self._api.service("calendar", "v3", self.mailbox)

    def _execute(self, request: Any, retries: int | None = None) -> Any:
        """Run a request through the Google API layer (retries, errors of this port)."""
        return self._api.execute(request, WORKSPACE_ERRORS, retries)

    def _write_once(self, trace_key: str, request: Callable[[], Any]) -> tuple[Any, bool]:
        """Perform a non-idempotent write; after a transient failure, look before retrying.

        Returns:
            ``(response, False)`` when the write answered, or ``(found, True)``
            when an earlier attempt turned out to have been applied.
        """
        attempts = self._api.num_retries + 1
        for attempt in range(attempts):
            try:
                return self._execute(request(), retries=0), False
            except RetryableError:
                if attempt == attempts - 1:
                    raise
                self._api.sleep(backoff_delay(attempt))
                found = self.find_by_trace_key(trace_key)
                if found is not None:
                    return found, True
        raise AssertionError("unreachable")

    # --- contacts and calendar -------------------------------------------------------------

    def has_written_to(self, address: str) -> bool:
        """Gmail's search for sent mail to the address (``to:``), each hit's ``To`` compared
        by ``same_address`` (the search matches loosely); the newest ``CORRESPONDENCE_SCAN``."""
        key = address_key_or_none(address)
        if key is None or '"' in key:
            return False
        found = self._execute(
            self._gmail.messages().list(
                userId=self.mailbox,
                labelIds=["SENT"],
                q=f"to:{key}",
                maxResults=CORRESPONDENCE_SCAN,
            )
        )
        for ref in found.get("messages", []):
            message = self._execute(
                self._gmail.messages().get(
                    userId=self.mailbox, id=ref["id"], format="metadata", metadataHeaders=["To"]
                )
            )
            headers = message.get("payload", {}).get("headers", [])
            values = [
                str(h.get("value", "")) for h in headers if str(h.get("name")).lower() == "to"
            ]
            if any(same_address(written, key) for _, written in getaddresses(values)):
                return True
        return False

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

    def write_event(self, event: NewEvent) -> dict[str, Any]:
        body = {
            "id": event.event_id,
            "summary": event.summary,
            "description": event.description,
            "start": {"dateTime": _rfc3339(event.start), "timeZone": "UTC"},
            "end": {"dateTime": _rfc3339(event.end), "timeZone": "UTC"},
            "attendees": [{"email": address} for address in event.attendees],
            "extendedProperties": {"private": {"inboxflowTrace": event.trace_key}},
        }
        try:
            created = self._execute(
                self._calendar.events().insert(
                    calendarId=self.mailbox, body=body, sendUpdates="all"
                )
            )
        except WorkspaceApiError as exc:
            if exc.status != 409:
                raise
            created = self._execute(
                self._calendar.events().get(calendarId=self.mailbox, eventId=event.event_id)
            )
        return {**_event(created), "trace_key": event.trace_key}

    # --- mail ------------------------------------------------------------------------------

    def write_reply(self, reply: OutgoingReply, *, send: bool) -> dict[str, Any]:
        message, gmail_thread = self._compose(reply)
        return self._write_message(message, gmail_thread, reply.trace_key, draft=not send)

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
        """A message from this mailbox carrying the key's stamp (trace header and Message-ID)."""
        stamp = stamp_for(self.store, trace_key)
        message = EmailMessage()
        message["From"] = self.mailbox
        message["To"] = to
        message["Subject"] = subject
        message["Date"] = formatdate(usegmt=True)
        message["Message-ID"] = stamped_message_id(stamp, _domain(self.mailbox))
        message[TRACE_HEADER] = stamp
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
        stamp = stamp_of(self.store, trace_key)
        if stamp is None:  # drawn before any message is built: nothing was written
            return None
        message_id = stamped_message_id(stamp, _domain(self.mailbox))
        by_message_id = {"q": f"rfc822msgid:{message_id.strip('<>')}", "maxResults": 10}
        # Gmail may have replaced our Message-ID: then the newest writes' headers tell.
        newest = {"maxResults": RECENT_SCAN}
        for search in (by_message_id, newest):
            for kind, gmail_id, resource_id in self._writes(search):
                found = self._if_stamped(gmail_id, trace_key, stamp, kind, resource_id)
                if found:
                    return found
        return None

    def _writes(self, search: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
        """Drafts, then sent messages, that ``search`` lists: ``(kind, gmail id, resource id)``."""
        drafts = self._execute(self._gmail.drafts().list(userId=self.mailbox, **search))
        for draft in drafts.get("drafts", []):
            yield "draft", draft["message"]["id"], draft["id"]
        sent = self._execute(
            self._gmail.messages().list(userId=self.mailbox, labelIds=["SENT"], **search)
        )
        for ref in sent.get("messages", []):
            yield "sent", ref["id"], ref["id"]

    # --- mail helpers ----------------------------------------------------------------------

    def _compose(self, reply: OutgoingReply) -> tuple[EmailMessage, str | None]:
        """The MIME message and the Gmail thread it belongs to (None: a new thread)."""
        original = self._original(reply.in_reply_to) if reply.in_reply_to else None
        gmail_thread = original["threadId"] if original else None
        if gmail_thread is None and reply.thread_id and "@" not in reply.thread_id:
            gmail_thread = reply.thread_id  # already a Gmail thread id
        if original is not None:
            reply = replace(reply, references=original["references"])
        subject = reply_subject(reply.subject) if reply.in_reply_to else reply.subject
        message = self._stamped(reply.to, subject, reply.trace_key)
        for name, value in reply.threading_headers().items():
            message[name] = value
        message.set_content(reply.body)
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
        self, gmail_id: str, trace_key: str, stamp: str, kind: str, resource_id: str
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
        if headers.get(TRACE_HEADER.lower()) != stamp:
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
                TRACE_HEADER: stamp,
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
                TRACE_HEADER: str(message[TRACE_HEADER]),
                "In-Reply-To": str(message.get("In-Reply-To") or ""),
                "References": str(message.get("References") or ""),
            },
            "trace_key": trace_key,
        }


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


__all__ = [
    "DEFAULT_RETRIES",
    "WORKSPACE_ERRORS",
    "GoogleWorkspace",
    "WorkspaceApiError",
    "WorkspaceApiUnavailable",
]

"""The Gmail v1 subset of the Google API double: mailboxes, search, history, watch.

The state is plain Python guarded by the double's lock; the handlers take
the request's query and JSON body and return the JSON Gmail would answer, or
raise ``ApiError`` with Gmail's status and reason. Ids look like Gmail's
(16 hex digits); a history id grows by one for every change of a mailbox,
and every change appends a history record, as ``history.list`` reports them.
"""

from __future__ import annotations

import base64
import email
import email.policy
import itertools
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any

from inboxflow.dev.doubles.errors import ApiError, owner_key

SYSTEM_LABELS = (
    "INBOX",
    "SENT",
    "DRAFT",
    "UNREAD",
    "STARRED",
    "IMPORTANT",
    "SPAM",
    "TRASH",
    "CATEGORY_PERSONAL",
    "CATEGORY_UPDATES",
)
HISTORY_TYPES = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")
WATCH_TTL_MS = 7 * 24 * 3600 * 1000
FIRST_HISTORY_ID = 1000
MAX_PAGE = 500

Notification = tuple[str, int]
"""``(email_address, history_id)`` of a change in a watched mailbox."""


def b64url_decode(text: str) -> bytes:
    """Decode base64url with or without padding (Gmail's ``raw``)."""
    text = text.strip()
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url_encode(data: bytes) -> str:
    """base64url with padding, as Gmail returns it."""
    return base64.urlsafe_b64encode(data).decode("ascii")


def bare_id(value: str) -> str:
    """A Message-ID without angle brackets or whitespace."""
    return value.strip().strip("<>").strip()


@dataclass
class StoredMessage:
    """One message of one mailbox."""

    id: str
    thread_id: str
    raw: bytes
    labels: set[str]
    internal_date_ms: int
    history_id: int
    parsed: EmailMessage = field(repr=False)

    def header(self, name: str) -> str:
        """The first value of header ``name`` (decoded), or empty."""
        value = self.parsed.get(name)
        return "" if value is None else str(value)

    def ref(self) -> dict[str, Any]:
        """``{id, threadId}``, the shape lists and history use."""
        return {"id": self.id, "threadId": self.thread_id}

    def with_labels(self) -> dict[str, Any]:
        """``{id, threadId, labelIds}``."""
        return {**self.ref(), "labelIds": sorted(self.labels)}


@dataclass
class Mailbox:
    """One user's mail."""

    address: str
    history_id: int = FIRST_HISTORY_ID
    messages: dict[str, StoredMessage] = field(default_factory=dict)
    drafts: dict[str, str] = field(default_factory=dict)
    """Draft id -> message id."""
    history: list[dict[str, Any]] = field(default_factory=list)
    history_floor: int = 0
    """Cursors below this id have been expired (``history.list`` answers 404)."""
    watch: dict[str, Any] | None = None


def parse_raw(raw: bytes) -> EmailMessage:
    """Parse RFC 5322 bytes (raises ``ApiError`` 400 on anything that is not a message)."""
    if not raw.strip():
        raise ApiError(400, "Invalid raw message: empty", "invalidArgument")
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    if not isinstance(parsed, EmailMessage) or not parsed.keys():
        raise ApiError(400, "Invalid raw message: no headers", "invalidArgument")
    return parsed


class GmailState:
    """Every mailbox of the double (callers hold the double's lock).

    Args:
        now: time source in seconds (``internalDate``, watch expiry, ``newer_than:``).
        notify: called with each change ``(email_address, history_id)`` of a
            watched mailbox; the double delivers them after releasing its lock.
    """

    def __init__(self, now: Callable[[], float], notify: Callable[[Notification], None]) -> None:
        self._now = now
        self._notify = notify
        self._ids = itertools.count(1)
        self.mailboxes: dict[str, Mailbox] = {}
        self.replace_sent_message_ids = False
        """Give sent messages a Message-ID of Gmail's own, as Gmail sometimes does."""

    # --- the python API's building blocks --------------------------------------------------

    def mailbox(self, user_id: str) -> Mailbox:
        """The mailbox of ``user_id`` (created on first use: every user of the domain exists)."""
        refusal = (
            "The double serves several mailboxes: use the mailbox address as userId, not 'me'."
        )
        address = owner_key(user_id, "me", refusal, "invalidArgument")
        if "@" not in address:
            raise ApiError(400, f"Invalid userId {user_id!r}", "invalidArgument")
        if address not in self.mailboxes:
            self.mailboxes[address] = Mailbox(address)
        return self.mailboxes[address]

    def _new_id(self) -> str:
        return f"{0x18F0_0000_0000_0000 + next(self._ids):016x}"

    def add_message(
        self, box: Mailbox, raw: bytes, labels: Iterable[str], thread_id: str | None = None
    ) -> StoredMessage:
        """Store a message (delivery, send or draft) and record ``messageAdded``."""
        parsed = parse_raw(raw)
        message_id = self._new_id()
        thread = self._thread_for(box, parsed, thread_id) or message_id
        message = StoredMessage(
            id=message_id,
            thread_id=thread,
            raw=bytes(raw),
            labels=set(labels),
            internal_date_ms=int(self._now() * 1000),
            history_id=0,
            parsed=parsed,
        )
        box.messages[message_id] = message
        self._record(box, message, {"messagesAdded": [{"message": message.with_labels()}]})
        return message

    def _thread_for(self, box: Mailbox, parsed: EmailMessage, thread_id: str | None) -> str | None:
        if thread_id and any(m.thread_id == thread_id for m in box.messages.values()):
            return thread_id
        wanted = {
            bare_id(ref)
            for name in ("In-Reply-To", "References")
            for ref in re.findall(r"<[^<>]+>", str(parsed.get(name) or ""))
        }
        if not wanted:
            return None
        for message in box.messages.values():
            if bare_id(message.header("Message-ID")) in wanted:
                return message.thread_id
        return None

    def change_labels(
        self, box: Mailbox, message: StoredMessage, add: Iterable[str], remove: Iterable[str]
    ) -> None:
        """Apply a label change and record ``labelsAdded``/``labelsRemoved``."""
        added = [label for label in add if label not in message.labels]
        removed = [label for label in remove if label in message.labels and label not in added]
        if not added and not removed:
            return
        message.labels.update(added)
        message.labels.difference_update(removed)
        record: dict[str, Any] = {}
        if added:
            record["labelsAdded"] = [{"message": message.with_labels(), "labelIds": added}]
        if removed:
            record["labelsRemoved"] = [{"message": message.with_labels(), "labelIds": removed}]
        self._record(box, message, record, labels=set(added) | set(removed) | message.labels)

    def _record(
        self,
        box: Mailbox,
        message: StoredMessage,
        changes: dict[str, Any],
        labels: set[str] | None = None,
    ) -> None:
        box.history_id += 1
        message.history_id = box.history_id
        box.history.append(
            {
                "id": box.history_id,
                "labels": set(message.labels) if labels is None else labels,
                "messages": [message.ref()],
                **changes,
            }
        )
        watch = box.watch
        if watch is None or int(watch["expiration"]) < self._now() * 1000:
            return
        touched = set(message.labels) if labels is None else labels
        watched = set(watch.get("labelIds") or [])
        include = str(watch.get("labelFilterBehavior") or "include").lower() != "exclude"
        if not watched or (include and touched & watched) or (not include and touched - watched):
            self._notify((box.address, box.history_id))

    def expire_history(self, box: Mailbox, before_history_id: int) -> None:
        """Forget history records older than ``before_history_id`` (cursors below it get 404)."""
        box.history = [record for record in box.history if record["id"] >= before_history_id]
        box.history_floor = max(box.history_floor, before_history_id)

    # --- users -----------------------------------------------------------------------------

    def get_profile(self, user_id: str) -> dict[str, Any]:
        """``users.getProfile``."""
        box = self.mailbox(user_id)
        threads = {m.thread_id for m in box.messages.values()}
        return {
            "emailAddress": box.address,
            "messagesTotal": len(box.messages),
            "threadsTotal": len(threads),
            "historyId": str(box.history_id),
        }

    def watch(self, user_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``users.watch``: remember the topic and label filter; a week's expiration."""
        box = self.mailbox(user_id)
        topic = str(body.get("topicName") or "")
        if not re.fullmatch(r"projects/[^/]+/topics/[^/]+", topic):
            raise ApiError(400, f"Invalid topicName {topic!r}", "invalidArgument")
        expiration = int(self._now() * 1000) + WATCH_TTL_MS
        box.watch = {
            "topicName": topic,
            "labelIds": list(body.get("labelIds") or []),
            "labelFilterBehavior": body.get("labelFilterBehavior")
            or body.get("labelFilterAction")
            or "include",
            "expiration": expiration,
        }
        return {"historyId": str(box.history_id), "expiration": str(expiration)}

    def stop(self, user_id: str) -> dict[str, Any]:
        """``users.stop``."""
        self.mailbox(user_id).watch = None
        return {}

    # --- messages --------------------------------------------------------------------------

    def _message(self, box: Mailbox, message_id: str) -> StoredMessage:
        message = box.messages.get(message_id)
        if message is None:
            raise ApiError(404, "Requested entity was not found.", "notFound")
        return message

    def list_messages(self, user_id: str, args: Mapping[str, list[str]]) -> dict[str, Any]:
        """``users.messages.list``: newest first, ``q`` subset, ``labelIds``, paging."""
        box = self.mailbox(user_id)
        found = self._search(
            box,
            box.messages.values(),
            _first(args, "q"),
            args.get("labelIds", []),
            _first(args, "includeSpamTrash") == "true",
        )
        page, token = _page(found, args)
        result: dict[str, Any] = {"resultSizeEstimate": len(found)}
        if page:
            result["messages"] = [m.ref() for m in page]
        if token:
            result["nextPageToken"] = token
        return result

    def get_message(self, user_id: str, message_id: str, args: Mapping[str, list[str]]) -> Any:
        """``users.messages.get`` in ``format`` raw, full, metadata or minimal."""
        box = self.mailbox(user_id)
        return render_message(
            self._message(box, message_id),
            _first(args, "format") or "full",
            args.get("metadataHeaders", []),
        )

    def send(self, user_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``users.messages.send``: stored with SENT, threaded by ``threadId`` or References."""
        box = self.mailbox(user_id)
        raw = _raw_of(body)
        if self.replace_sent_message_ids:
            parsed = parse_raw(raw)
            del parsed["Message-ID"]
            parsed["Message-ID"] = f"<{self._new_id()}.gmail-assigned@mail.gmail.com>"
            raw = parsed.as_bytes()
        message = self.add_message(box, raw, ["SENT"], thread_id=body.get("threadId"))
        return message.with_labels()

    def modify(self, user_id: str, message_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``users.messages.modify``."""
        box = self.mailbox(user_id)
        message = self._message(box, message_id)
        self.change_labels(
            box, message, body.get("addLabelIds") or [], body.get("removeLabelIds") or []
        )
        return message.with_labels()

    # --- drafts ----------------------------------------------------------------------------

    def create_draft(self, user_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``users.drafts.create``: the message gets the DRAFT label."""
        box = self.mailbox(user_id)
        message_body = body.get("message")
        if not isinstance(message_body, Mapping):
            raise ApiError(400, "Missing draft message", "invalidArgument")
        message = self.add_message(
            box, _raw_of(message_body), ["DRAFT"], thread_id=message_body.get("threadId")
        )
        draft_id = f"r{int(message.id, 16) % 10**19}"
        box.drafts[draft_id] = message.id
        return {"id": draft_id, "message": message.with_labels()}

    def list_drafts(self, user_id: str, args: Mapping[str, list[str]]) -> dict[str, Any]:
        """``users.drafts.list`` (``q`` searches the draft messages)."""
        box = self.mailbox(user_id)
        by_message = {message_id: draft_id for draft_id, message_id in box.drafts.items()}
        messages = [box.messages[m] for m in by_message if m in box.messages]
        found = self._search(box, messages, _first(args, "q"), [], True)
        page, token = _page(found, args)
        result: dict[str, Any] = {"resultSizeEstimate": len(found)}
        if page:
            result["drafts"] = [{"id": by_message[m.id], "message": m.ref()} for m in page]
        if token:
            result["nextPageToken"] = token
        return result

    def get_draft(self, user_id: str, draft_id: str, args: Mapping[str, list[str]]) -> Any:
        """``users.drafts.get``."""
        box = self.mailbox(user_id)
        message_id = box.drafts.get(draft_id)
        if message_id is None:
            raise ApiError(404, "Requested entity was not found.", "notFound")
        message = self._message(box, message_id)
        return {
            "id": draft_id,
            "message": render_message(message, _first(args, "format") or "full"),
        }

    # --- history ---------------------------------------------------------------------------

    def list_history(self, user_id: str, args: Mapping[str, list[str]]) -> dict[str, Any]:
        """``users.history.list`` after ``startHistoryId``; 404 for an expired cursor."""
        box = self.mailbox(user_id)
        start_text = _first(args, "startHistoryId")
        if not start_text or not start_text.isdigit():
            raise ApiError(400, "Invalid startHistoryId", "invalidArgument")
        start = int(start_text)
        if start < box.history_floor:
            raise ApiError(404, "Requested entity was not found.", "notFound")
        types = args.get("historyTypes") or list(HISTORY_TYPES)
        label = _first(args, "labelId")
        keys = {
            "messageAdded": "messagesAdded",
            "messageDeleted": "messagesDeleted",
            "labelAdded": "labelsAdded",
            "labelRemoved": "labelsRemoved",
        }
        wanted = [keys[t] for t in types if t in keys]
        records = []
        for record in box.history:
            if record["id"] <= start or (label and label not in record["labels"]):
                continue
            kept = {k: record[k] for k in wanted if k in record}
            if kept:
                records.append({"id": str(record["id"]), "messages": record["messages"], **kept})
        page, token = _page(records, args, default_size=100)
        result: dict[str, Any] = {"historyId": str(box.history_id)}
        if page:
            result["history"] = page
        if token:
            result["nextPageToken"] = token
        return result

    # --- search ----------------------------------------------------------------------------

    def _search(
        self,
        box: Mailbox,
        messages: Iterable[StoredMessage],
        query: str | None,
        label_ids: list[str],
        include_spam_trash: bool,
    ) -> list[StoredMessage]:
        tests = _compile_query(query or "", self._now())
        if any(t is _ANYWHERE or t is _SPAM_OR_TRASH for t in tests):
            include_spam_trash = True
        found = [
            m
            for m in messages
            if all(label in m.labels for label in label_ids)
            and (include_spam_trash or not m.labels & {"SPAM", "TRASH"})
            and all(test(m) for test in tests)
        ]
        found.sort(key=lambda m: (m.internal_date_ms, m.id), reverse=True)
        return found


# --- rendering ---------------------------------------------------------------------------


def render_message(
    message: StoredMessage, fmt: str, metadata_headers: Iterable[str] = ()
) -> dict[str, Any]:
    """A message resource in Gmail's ``format`` (raw, full, metadata, minimal)."""
    result: dict[str, Any] = {
        **message.with_labels(),
        "snippet": _snippet(message.parsed),
        "historyId": str(message.history_id),
        "internalDate": str(message.internal_date_ms),
        "sizeEstimate": len(message.raw),
    }
    if fmt == "raw":
        result["raw"] = b64url_encode(message.raw)
    elif fmt == "metadata":
        wanted = {h.lower() for h in metadata_headers}
        result["payload"] = {
            "mimeType": message.parsed.get_content_type(),
            "headers": [
                h for h in _headers(message.parsed) if not wanted or h["name"].lower() in wanted
            ],
        }
    elif fmt == "full":
        result["payload"] = _part(message.parsed, "")
    elif fmt != "minimal":
        raise ApiError(400, f"Invalid format {fmt!r}", "invalidArgument")
    return result


def _headers(part: EmailMessage) -> list[dict[str, str]]:
    return [{"name": name, "value": str(value)} for name, value in part.items()]


def _part(part: EmailMessage, part_id: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "partId": part_id,
        "mimeType": part.get_content_type(),
        "filename": part.get_filename() or "",
        "headers": _headers(part),
    }
    if part.is_multipart():
        result["body"] = {"size": 0}
        children = list(part.iter_parts())
        prefix = f"{part_id}." if part_id else ""
        result["parts"] = [
            _part(child, f"{prefix}{index}")  # type: ignore[arg-type]
            for index, child in enumerate(children)
        ]
    else:
        data = part.get_payload(decode=True)
        payload = data if isinstance(data, bytes) else b""
        result["body"] = {"size": len(payload), "data": b64url_encode(payload)}
    return result


def _snippet(parsed: EmailMessage) -> str:
    body = parsed.get_body(preferencelist=("plain", "html"))
    if body is None:
        return ""
    try:
        text = str(body.get_content())
    except (LookupError, ValueError):
        return ""
    text = re.sub(r"<[^>]+>", " ", text)
    return " ".join(text.split())[:200]


# --- query subset ------------------------------------------------------------------------

_LABEL_OF_IN = {
    "inbox": "INBOX",
    "sent": "SENT",
    "drafts": "DRAFT",
    "draft": "DRAFT",
    "spam": "SPAM",
    "trash": "TRASH",
    "starred": "STARRED",
    "unread": "UNREAD",
    "important": "IMPORTANT",
}
_UNITS = {"d": 86400, "h": 3600, "m": 30 * 86400, "y": 365 * 86400}


def _anywhere(message: StoredMessage) -> bool:
    return True


def _spam_or_trash(message: StoredMessage) -> bool:
    return bool(message.labels & {"SPAM", "TRASH"})


_ANYWHERE: Callable[[StoredMessage], bool] = _anywhere
_SPAM_OR_TRASH: Callable[[StoredMessage], bool] = _spam_or_trash


def _compile_query(query: str, now: float) -> list[Callable[[StoredMessage], bool]]:
    """Predicates for the subset of Gmail's search syntax the double understands.

    ``rfc822msgid:``, ``in:``, ``is:``, ``label:``, ``after:``/``before:``
    (``YYYY/MM/DD`` or epoch seconds), ``newer_than:``/``older_than:``
    (``Nd``, ``Nh``, ``Nm``, ``Ny``), ``from:``/``to:``/``subject:``; other
    words match the raw message text, case-insensitively.
    """
    try:
        tokens = shlex.split(query)
    except ValueError:
        tokens = query.split()
    tests: list[Callable[[StoredMessage], bool]] = []
    for token in tokens:
        operator, _, value = token.partition(":")
        operator, value = operator.lower(), value.strip()
        if not value:
            tests.append(_text_test(token))
        elif operator == "rfc822msgid":
            tests.append(_msgid_test(bare_id(value)))
        elif operator in ("in", "is") and value.lower() == "anywhere":
            tests.append(_ANYWHERE)
        elif operator in ("in", "is") and value.lower() in ("spam", "trash"):
            tests.append(_SPAM_OR_TRASH)
            tests.append(_has_label(_LABEL_OF_IN[value.lower()]))
        elif operator in ("in", "is") and value.lower() == "read":
            tests.append(lambda m: "UNREAD" not in m.labels)
        elif operator in ("in", "is") and value.lower() in _LABEL_OF_IN:
            tests.append(_has_label(_LABEL_OF_IN[value.lower()]))
        elif operator == "label":
            tests.append(_label_test(value.upper()))
        elif operator in ("after", "before"):
            tests.append(_date_test(_date_bound(value), after=operator == "after"))
        elif operator in ("newer_than", "older_than"):
            match = re.fullmatch(r"(\d+)([dhmy])", value.lower())
            if match is None:
                raise ApiError(400, f"Invalid search value {token!r}", "invalidArgument")
            bound = now - int(match.group(1)) * _UNITS[match.group(2)]
            tests.append(_date_test(bound, after=operator == "newer_than"))
        elif operator in ("from", "to", "subject"):
            tests.append(_header_test(operator, value.lower()))
        else:
            tests.append(_text_test(token))
    return tests


def _has_label(label: str) -> Callable[[StoredMessage], bool]:
    return lambda m: label in m.labels


def _date_test(bound: float, after: bool) -> Callable[[StoredMessage], bool]:
    if after:
        return lambda m: m.internal_date_ms / 1000 >= bound
    return lambda m: m.internal_date_ms / 1000 < bound


def _msgid_test(wanted: str) -> Callable[[StoredMessage], bool]:
    return lambda m: bare_id(m.header("Message-ID")) == wanted


def _label_test(label: str) -> Callable[[StoredMessage], bool]:
    return lambda m: label in {x.upper() for x in m.labels}


def _header_test(name: str, needle: str) -> Callable[[StoredMessage], bool]:
    return lambda m: needle in m.header(name).lower()


def _text_test(word: str) -> Callable[[StoredMessage], bool]:
    needle = word.lower().encode("utf-8")
    return lambda m: needle in m.raw.lower()


def _date_bound(value: str) -> float:
    if value.isdigit():
        return float(value)
    match = re.fullmatch(r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})", value)
    if match is None:
        raise ApiError(400, f"Invalid date {value!r}", "invalidArgument")
    year, month, day = (int(part) for part in match.groups())
    return datetime(year, month, day, tzinfo=UTC).timestamp()


# --- request helpers ---------------------------------------------------------------------


def _first(args: Mapping[str, list[str]], name: str) -> str | None:
    values = args.get(name) or []
    return values[0] if values else None


def _page(
    items: list[Any], args: Mapping[str, list[str]], default_size: int = 100
) -> tuple[list[Any], str | None]:
    size_text = _first(args, "maxResults")
    size = min(MAX_PAGE, int(size_text)) if size_text and size_text.isdigit() else default_size
    size = max(1, size)
    token = _first(args, "pageToken")
    offset = int(token) if token and token.isdigit() else 0
    page = items[offset : offset + size]
    return page, str(offset + size) if offset + size < len(items) else None


def _raw_of(body: Mapping[str, Any]) -> bytes:
    raw = body.get("raw")
    if not isinstance(raw, str) or not raw:
        raise ApiError(
            400,
            "'raw' RFC822 payload message string or uploading message via /upload/* URL required",
            "invalidArgument",
        )
    try:
        return b64url_decode(raw)
    except ValueError as exc:
        raise ApiError(400, f"Invalid raw: {exc}", "invalidArgument") from exc


__all__ = [
    "SYSTEM_LABELS",
    "GmailState",
    "Mailbox",
    "Notification",
    "StoredMessage",
    "b64url_decode",
    "b64url_encode",
    "bare_id",
    "parse_raw",
    "render_message",
]

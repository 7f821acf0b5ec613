"""A local HTTP double of the Gmail v1 and Calendar v3 APIs (the subset inboxflow calls).

It answers exactly the paths ``googleapiclient`` builds from its bundled
discovery documents (``gmail.v1.json``, ``calendar.v3.json``), so the real
client library is what talks to it: point the Gmail service's
``api_endpoint`` at ``url + "/"`` and Calendar's at ``url + "/calendar/v3/"``
(``GoogleWorkspace`` does this from ``INBOXFLOW_GOOGLE_API_URL``). It serves
several mailboxes at once; ``userId`` must be the mailbox address.

Gmail: users.getProfile, users.watch, users.stop, messages.list/get/send/
modify, drafts.create/list/get, history.list. Calendar: events.list/get/
insert, freebusy.query. Errors come in Google's JSON format.

Test hooks (Python API): ``deliver``, ``expire_history``, ``fail_next`` (and
``injected``/``injected_count``, the faults it actually answered), ``calls``/``call_counts``,
``on_notify``, ``messages``, ``drafts``, ``events``, ``history_id``,
``seed_from_workspace_json``. Run it as a process with
``python -m inboxflow.dev.doubles.google_api --port N [--seed]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from inboxflow.dev.doubles.calendar_api import CalendarState, public
from inboxflow.dev.doubles.errors import ApiError
from inboxflow.dev.doubles.gmail_api import GmailState, Notification, b64url_decode, render_message
from inboxflow.dev.doubles.oauth_api import PATHS as OAUTH_PATHS
from inboxflow.dev.doubles.oauth_api import OAuthDouble
from inboxflow.dev.doubles.serving import WsgiServing, clock_reader, serve_until_interrupted

log = logging.getLogger(__name__)

NotifyCallback = Callable[[str, int], None]


@dataclass(frozen=True)
class _Endpoint:
    """One method the double serves: its route, and the state method that answers it.

    The handler of ``GmailState`` (``gmail.*``) or ``CalendarState`` (``calendar.*``)
    takes the path's parameters in order, then the query's arguments (``args``), the
    JSON body (``body``) or nothing more.
    """

    verb: str
    path: str
    method: str
    handler: str
    takes: str = ""

    @property
    def path_params(self) -> list[str]:
        """The names of the path's ``<parameters>``, in order."""
        return re.findall(r"<(\w+)>", self.path)


_GMAIL = "/gmail/v1/users/<user>"
_CALENDAR = "/calendar/v3/calendars/<calendar>"
_ENDPOINTS = {
    endpoint.method: endpoint
    for endpoint in (
        _Endpoint("GET", f"{_GMAIL}/profile", "gmail.users.getProfile", "get_profile"),
        _Endpoint("POST", f"{_GMAIL}/watch", "gmail.users.watch", "watch", "body"),
        _Endpoint("POST", f"{_GMAIL}/stop", "gmail.users.stop", "stop"),
        _Endpoint(
            "GET", f"{_GMAIL}/messages", "gmail.users.messages.list", "list_messages", "args"
        ),
        _Endpoint("POST", f"{_GMAIL}/messages/send", "gmail.users.messages.send", "send", "body"),
        _Endpoint(
            "GET",
            f"{_GMAIL}/messages/<message_id>",
            "gmail.users.messages.get",
            "get_message",
            "args",
        ),
        _Endpoint(
            "POST",
            f"{_GMAIL}/messages/<message_id>/modify",
            "gmail.users.messages.modify",
            "modify",
            "body",
        ),
        _Endpoint("POST", f"{_GMAIL}/drafts", "gmail.users.drafts.create", "create_draft", "body"),
        _Endpoint("GET", f"{_GMAIL}/drafts", "gmail.users.drafts.list", "list_drafts", "args"),
        _Endpoint(
            "GET", f"{_GMAIL}/drafts/<draft_id>", "gmail.users.drafts.get", "get_draft", "args"
        ),
        _Endpoint("GET", f"{_GMAIL}/history", "gmail.users.history.list", "list_history", "args"),
        _Endpoint("GET", f"{_CALENDAR}/events", "calendar.events.list", "list", "args"),
        _Endpoint("POST", f"{_CALENDAR}/events", "calendar.events.insert", "insert", "body"),
        _Endpoint("GET", f"{_CALENDAR}/events/<event_id>", "calendar.events.get", "get"),
        _Endpoint("POST", "/calendar/v3/freeBusy", "calendar.freebusy.query", "free_busy", "body"),
    )
}
_ROUTES = Map(
    [
        Rule(endpoint.path, methods=[endpoint.verb], endpoint=endpoint.method)
        for endpoint in _ENDPOINTS.values()
    ]
)


_API_SCOPES = {
    "gmail": frozenset(
        {
            "https://mail.google.com/",
            "https://www.googleapis.com/auth/gmail.modify",
            "https://www.googleapis.com/auth/gmail.readonly",
        }
    ),
    "calendar": frozenset(
        {
            "https://www.googleapis.com/auth/calendar",
            "https://www.googleapis.com/auth/calendar.events",
        }
    ),
}
"""Scopes any of which lets a token call the API (a subset of Google's lists per method)."""


@dataclass
class _Fault:
    key: str
    status: int
    times: int
    after_apply: bool
    reason: str | None

    def matches(self, method: str, path: str) -> bool:
        return method == self.key or method.endswith(f".{self.key}") or self.key in path


@dataclass(frozen=True)
class InjectedFault:
    """A request that got an injected error (see ``GoogleApiDouble.fail_next``).

    Attributes:
        method: the method id, e.g. ``gmail.users.messages.send``.
        path: the request path.
        status: the HTTP status answered.
        after_apply: the request was performed before the error was answered.
    """

    method: str
    path: str
    status: int
    after_apply: bool


class GoogleApiDouble(WsgiServing):
    """Gmail v1 + Calendar v3 on loopback, multi-mailbox and thread-safe.

    Args:
        clock: time source with ``now()`` (default: wall clock).
        oauth: Google's OAuth endpoints (``oauth_api.OAuthDouble``), served on the same
            address. With it, a request carrying ``Authorization: Bearer`` is checked as
            Google does: an unknown, expired or revoked token is a 401, a token without a
            scope of the API a 403 ``insufficientPermissions``, another account's
            ``userId`` a 403, and ``userId=me`` is the token's account. Requests without
            a bearer are served as before (the credential-less local runs).

    Use as a context manager (``with GoogleApiDouble() as double:``) or call
    ``start()`` / ``stop()``; ``url`` is ``http://127.0.0.1:PORT``.
    """

    thread_name = "google-api-double"

    def __init__(self, clock: Any = None, oauth: OAuthDouble | None = None) -> None:
        self._now = clock_reader(clock)
        self.oauth = oauth
        self._lock = threading.RLock()
        self._pending: list[Notification] = []
        self.gmail = GmailState(self._now, self._pending.append)
        self.calendar = CalendarState(self._now)
        self.contacts: dict[str, dict[str, Any]] = {}
        self._faults: list[_Fault] = []
        self._callbacks: list[NotifyCallback] = []
        self.notify_errors: list[BaseException] = []
        self.calls: list[tuple[str, str]] = []
        """``(method, path)`` of every request served, in order."""
        self.injected: list[InjectedFault] = []
        """Every request answered with an error of ``fail_next``, in order."""

    def call_counts(self) -> Counter[str]:
        """How many requests of each method were served (``gmail.users.history.list``: 3, ...)."""
        with self._lock:
            return Counter(method for method, _ in self.calls)

    def respond(self, request: Request) -> Response:
        """Answer one request to the Gmail or Calendar API (or OAuth's, when served)."""
        if self.oauth is not None and request.path in OAUTH_PATHS:
            return self.oauth.respond(request)
        adapter = _ROUTES.bind_to_environ(request.environ)
        try:
            method, params = adapter.match()
        except (NotFound, MethodNotAllowed) as exc:
            return _json(
                ApiError(
                    exc.code or 404, f"No route {request.method} {request.path}", "notFound"
                ).body(),
                exc.code or 404,
            )
        except HTTPException as exc:  # pragma: no cover - other routing errors
            return _json(ApiError(exc.code or 400, str(exc)).body(), exc.code or 400)
        self.calls.append((str(method), request.path))
        try:
            params = self._authorize(request, str(method), dict(params))
        except ApiError as exc:
            return _json(exc.body(), exc.status)
        fault = self._take_fault(str(method), request.path)
        if fault is not None:
            with self._lock:
                self.injected.append(
                    InjectedFault(str(method), request.path, fault.status, fault.after_apply)
                )
        if fault is not None and not fault.after_apply:
            return _json(ApiError(fault.status, reason=fault.reason).body(), fault.status)
        args = {name: request.args.getlist(name) for name in request.args}
        try:
            body = request.get_json(silent=True) if request.data else {}
            if request.data and body is None:
                raise ApiError(400, "Invalid JSON payload received.", "parseError")
            with self._lock:
                result = self._dispatch(str(method), params, args, body or {})
        except ApiError as exc:
            self._flush_notifications()
            return _json(exc.body(), exc.status)
        self._flush_notifications()
        if fault is not None:
            return _json(ApiError(fault.status, reason=fault.reason).body(), fault.status)
        return _json(result, 200)

    def _authorize(self, request: Request, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Check a bearer token as Google does (see ``oauth``); ``me`` becomes its account."""
        header = request.headers.get("Authorization", "")
        if self.oauth is None or not header.startswith("Bearer "):
            return params
        info = self.oauth.token_info(header.removeprefix("Bearer ").strip())
        if info is None:
            raise ApiError(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
                "authError",
            )
        needed = _API_SCOPES["calendar" if method.startswith("calendar.") else "gmail"]
        if not info.scopes & needed:
            raise ApiError(
                403, "Request had insufficient authentication scopes.", "insufficientPermissions"
            )
        user = str(params.get("user", ""))
        if user == "me":
            params["user"] = info.account
        elif user and user.strip().lower() != info.account:
            raise ApiError(403, f"Delegation denied for {info.account}", "forbidden")
        return params

    def _dispatch(
        self, method: str, params: Mapping[str, Any], args: dict[str, list[str]], body: Any
    ) -> Any:
        endpoint = _ENDPOINTS[method]
        state = self.gmail if method.startswith("gmail.") else self.calendar
        given = [params[name] for name in endpoint.path_params]
        given += {"args": [args], "body": [body], "": []}[endpoint.takes]
        return getattr(state, endpoint.handler)(*given)

    # --- faults and notifications ------------------------------------------------------

    def fail_next(
        self,
        method_or_path: str,
        status: int,
        times: int = 1,
        *,
        after_apply: bool = False,
        reason: str | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with ``status`` (429, 403, 500...).

        Args:
            method_or_path: a method id (``gmail.users.messages.send``), its tail
                (``messages.send``) or a substring of the path.
            status: HTTP status of the injected error.
            times: how many requests fail.
            after_apply: perform the request first, then answer the error (a
                response lost after the server acted).
            reason: Google's ``reason`` (default per status: ``rateLimitExceeded``
                for 429, ``userRateLimitExceeded`` for 403, ``backendError`` for 5xx).
        """
        with self._lock:
            self._faults.append(_Fault(method_or_path, status, times, after_apply, reason))

    def injected_count(self, method_or_path: str, status: int | None = None) -> int:
        """How many injected errors matched ``method_or_path`` (as in ``fail_next``).

        Args:
            method_or_path: a method id, its tail or a substring of the path.
            status: count only errors of this HTTP status.
        """
        probe = _Fault(method_or_path, 0, 0, False, None)
        with self._lock:
            return sum(
                1
                for fault in self.injected
                if probe.matches(fault.method, fault.path)
                and (status is None or fault.status == status)
            )

    def _take_fault(self, method: str, path: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and fault.matches(method, path):
                    fault.times -= 1
                    return fault
            return None

    def on_notify(self, callback: NotifyCallback) -> None:
        """Call ``callback(email_address, history_id)`` after each change of a watched mailbox.

        Called synchronously, outside the double's lock, in the thread that
        made the change (a request thread or a ``deliver`` caller). A callback
        that raises is logged and kept in ``notify_errors``.
        """
        with self._lock:
            self._callbacks.append(callback)

    def _flush_notifications(self) -> None:
        with self._lock:
            pending, self._pending[:] = list(self._pending), []
            callbacks = list(self._callbacks)
        for address, history_id in pending:
            for callback in callbacks:
                try:
                    callback(address, history_id)
                except Exception as exc:
                    log.exception("notify callback failed for %s at %s", address, history_id)
                    self.notify_errors.append(exc)

    # --- test hooks --------------------------------------------------------------------

    def deliver(self, mailbox: str, raw: bytes, labels: Sequence[str] = ("INBOX", "UNREAD")) -> str:
        """Put a received message in ``mailbox`` (threaded by References); returns its Gmail id."""
        with self._lock:
            box = self.gmail.mailbox(mailbox)
            message = self.gmail.add_message(box, raw, labels)
        self._flush_notifications()
        return message.id

    def expire_history(self, mailbox: str, before_history_id: int) -> None:
        """Drop history older than ``before_history_id``: ``history.list`` from an
        earlier ``startHistoryId`` then answers 404, as Gmail does for old cursors."""
        with self._lock:
            self.gmail.expire_history(self.gmail.mailbox(mailbox), before_history_id)

    def history_id(self, mailbox: str) -> int:
        """The mailbox's current history id."""
        with self._lock:
            return self.gmail.mailbox(mailbox).history_id

    def messages(self, mailbox: str, label: str | None = None) -> list[dict[str, Any]]:
        """The mailbox's messages (oldest first), optionally only those with ``label``.

        Each is ``{id, thread_id, labels, headers, subject, to, from, body, raw}``
        with ``headers`` a dict of the first value of each header.
        """
        with self._lock:
            box = self.gmail.mailbox(mailbox)
            stored = [m for m in box.messages.values() if label is None or label in m.labels]
            return [_summary(m) for m in stored]

    def drafts(self, mailbox: str) -> list[dict[str, Any]]:
        """The mailbox's drafts: ``messages(mailbox, "DRAFT")`` plus ``draft_id``."""
        with self._lock:
            box = self.gmail.mailbox(mailbox)
            return [
                {**_summary(box.messages[message_id]), "draft_id": draft_id}
                for draft_id, message_id in box.drafts.items()
                if message_id in box.messages
            ]

    def message_resource(self, mailbox: str, message_id: str, fmt: str = "full") -> dict[str, Any]:
        """A message as ``messages.get`` would return it."""
        with self._lock:
            box = self.gmail.mailbox(mailbox)
            return render_message(box.messages[message_id], fmt)

    def events(self, calendar_id: str) -> list[dict[str, Any]]:
        """The calendar's events, by start time."""
        with self._lock:
            events = sorted(
                self.calendar.calendar(calendar_id).values(), key=lambda e: (e["_start"], e["id"])
            )
            return [public(e) for e in events]

    def seed_from_workspace_json(
        self, path: str | Path | None = None, mailbox: str | None = None, now: float | None = None
    ) -> dict[str, int]:
        """Load a workspace seed (default: the bundled ``samples/workspace.json``).

        Calendar events land in ``mailbox``'s calendar (default: the first
        contact, the mailbox owner in the bundled seed) on the business days
        after ``now``; contacts are kept in ``contacts`` (the API has no
        contacts endpoint: the pipeline reads contacts from the checkpoint store).

        Returns:
            How many contacts and events were loaded.
        """
        from inboxflow.workspace import load_seed, seed_event_times

        seed = load_seed() if path is None else json.loads(Path(path).read_text("utf-8"))
        contacts = seed.get("contacts", [])
        owner = mailbox or (contacts[0]["email"] if contacts else None)
        if owner is None:
            raise ValueError("no mailbox given and the seed has no contacts")
        today = datetime.fromtimestamp(self._now() if now is None else now, UTC).date()
        with self._lock:
            for contact in contacts:
                self.contacts[contact["email"].strip().lower()] = dict(contact)
            events = self.calendar.calendar(owner)
            for event in seed.get("calendar_events", []):
                events.pop(event["id"], None)
                start, end = seed_event_times(event, today)
                self.calendar.put(
                    owner,
                    {
                        "id": event["id"],
                        "summary": event["summary"],
                        "start": {"dateTime": start.isoformat()},
                        "end": {"dateTime": end.isoformat()},
                        "attendees": [{"email": a} for a in event.get("attendees", [])],
                    },
                    validate_id=False,
                )
        return {"contacts": len(contacts), "calendar_events": len(seed.get("calendar_events", []))}


def _summary(message: Any) -> dict[str, Any]:
    parsed = message.parsed
    body = parsed.get_body(preferencelist=("plain", "html"))
    text = str(body.get_content()) if body is not None else ""
    return {
        "id": message.id,
        "thread_id": message.thread_id,
        "labels": sorted(message.labels),
        "headers": {name: str(parsed[name]) for name in dict.fromkeys(parsed.keys())},
        "subject": str(parsed.get("Subject") or ""),
        "to": str(parsed.get("To") or ""),
        "from": str(parsed.get("From") or ""),
        "body": text,
        "raw": message.raw,
    }


def _json(payload: Any, status: int) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m inboxflow.dev.doubles.google_api --port N [--seed [FILE]] [--mailbox ADDR]``."""
    parser = argparse.ArgumentParser(description="Gmail v1 + Calendar v3 double on loopback")
    parser.add_argument("--port", type=int, default=0, help="port (0: a free one)")
    parser.add_argument(
        "--seed",
        nargs="?",
        const="",
        default=None,
        help="load a workspace seed (no value: the bundled samples/workspace.json)",
    )
    parser.add_argument("--mailbox", default=None, help="calendar the seed's events go to")
    options = parser.parse_args(argv)
    double = GoogleApiDouble()
    if options.seed is not None:
        double.seed_from_workspace_json(options.seed or None, options.mailbox)
    double.start(options.port)
    serve_until_interrupted(double, f"google api double listening on {double.url}")


__all__ = ["GoogleApiDouble", "InjectedFault", "NotifyCallback", "b64url_decode", "main"]

if __name__ == "__main__":
    main()

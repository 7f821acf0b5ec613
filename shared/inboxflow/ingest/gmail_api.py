"""The ``GmailReader`` port on Gmail v1 through ``google-api-python-client``.

Static discovery (the document shipped with the library; no network at
start), ``userId`` = the mailbox address. With ``INBOXFLOW_GOOGLE_API_URL``
set (the local Gmail double) calls go there without credentials; otherwise
the mailbox's credentials are used. The client library is imported on first
use, never at import time. Each thread gets its own client: httplib2 is not
thread-safe.
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .gmail_reader import (
    AddedMessage,
    GmailError,
    GmailRateLimited,
    GmailUnavailable,
    HistoryExpired,
    HistoryPage,
    MessageGone,
    MessagePage,
    RawMessage,
    WatchResult,
)

GMAIL_SCOPES = ("https://www.googleapis.com/auth/gmail.modify",)
RATE_LIMIT_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded"})


def google_api_url(environ: dict[str, str] | None = None) -> str | None:
    """The local Google API double's base URL, when one is configured."""
    env = os.environ if environ is None else environ
    return env.get("INBOXFLOW_GOOGLE_API_URL") or None


class GoogleApiGmailReader:
    """Gmail v1 through the real client library.

    Args:
        api_url: base URL of a Gmail API double (default ``INBOXFLOW_GOOGLE_API_URL``);
            None means Google's endpoint with real credentials.
        credentials_for: ``address -> google.auth credentials`` for real
            mailboxes (default: ``INBOXFLOW_GMAIL_CREDENTIALS[_SECRET]`` through
            ``adapters.google_credentials``, else application default credentials).
        timeout_s: socket timeout of each HTTP call.
        page_size: ``maxResults`` of ``history.list`` and ``messages.list``.
    """

    def __init__(
        self,
        api_url: str | None = None,
        credentials_for: Callable[[str], Any] | None = None,
        timeout_s: float = 30.0,
        page_size: int = 500,
    ) -> None:
        self.api_url = api_url if api_url is not None else google_api_url()
        self.credentials_for = credentials_for
        self.timeout_s = timeout_s
        self.page_size = page_size
        self._local = threading.local()

    # --- the port ----------------------------------------------------------------------

    def list_history(
        self, mailbox: str, start_history_id: int, page_token: str | None = None
    ) -> HistoryPage:
        request = (
            self._users(mailbox)
            .history()
            .list(
                userId=mailbox,
                startHistoryId=str(start_history_id),
                historyTypes=["messageAdded"],
                pageToken=page_token,
                maxResults=self.page_size,
            )
        )
        try:
            body = self._execute(request)
        except GmailError as exc:
            if exc.status == 404:
                raise HistoryExpired(str(exc), 404) from exc
            raise
        added = [
            _added(item.get("message") or {})
            for record in body.get("history") or []
            for item in record.get("messagesAdded") or []
        ]
        return HistoryPage(
            added=[a for a in added if a.gmail_id],
            history_id=int(body.get("historyId") or start_history_id),
            next_page_token=body.get("nextPageToken") or None,
        )

    def list_messages(
        self, mailbox: str, label_ids: Sequence[str], query: str, page_token: str | None = None
    ) -> MessagePage:
        request = (
            self._users(mailbox)
            .messages()
            .list(
                userId=mailbox,
                labelIds=list(label_ids),
                q=query,
                pageToken=page_token,
                maxResults=self.page_size,
            )
        )
        body = self._execute(request)
        rows = [_added(m) for m in body.get("messages") or []]
        return MessagePage(
            messages=[r for r in rows if r.gmail_id],
            next_page_token=body.get("nextPageToken") or None,
        )

    def get_raw(self, mailbox: str, gmail_id: str) -> RawMessage:
        request = self._users(mailbox).messages().get(userId=mailbox, id=gmail_id, format="raw")
        try:
            body = self._execute(request)
        except GmailError as exc:
            if exc.status == 404:
                raise MessageGone(str(exc), 404) from exc
            raise
        raw = str(body.get("raw") or "")
        internal = body.get("internalDate")
        history = body.get("historyId")
        return RawMessage(
            gmail_id=str(body.get("id") or gmail_id),
            thread_id=str(body.get("threadId") or ""),
            raw=base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)),
            label_ids=tuple(body.get("labelIds") or ()),
            internal_date_ms=int(internal) if internal else None,
            history_id=int(history) if history else None,
        )

    def watch(self, mailbox: str, topic: str, label_ids: Sequence[str]) -> WatchResult:
        request = self._users(mailbox).watch(
            userId=mailbox,
            body={
                "topicName": topic,
                "labelIds": list(label_ids),
                "labelFilterBehavior": "include",
            },
        )
        body = self._execute(request)
        return WatchResult(
            history_id=int(body["historyId"]), expiration_ms=int(body.get("expiration") or 0)
        )

    # --- the client ---------------------------------------------------------------------

    def _users(self, mailbox: str) -> Any:
        services: dict[str, Any] = getattr(self._local, "services", None) or {}
        self._local.services = services
        key = "" if self.api_url else mailbox
        if key not in services:
            services[key] = self._build(mailbox)
        return services[key].users()

    def _build(self, mailbox: str) -> Any:
        import httplib2
        from googleapiclient.discovery import build

        http = httplib2.Http(timeout=self.timeout_s)
        if self.api_url:
            return build(
                "gmail",
                "v1",
                http=http,
                static_discovery=True,
                cache_discovery=False,
                client_options={"api_endpoint": self.api_url.rstrip("/") + "/"},
            )
        import google_auth_httplib2

        credentials = self._credentials(mailbox)
        return build(
            "gmail",
            "v1",
            http=google_auth_httplib2.AuthorizedHttp(credentials, http=http),
            static_discovery=True,
            cache_discovery=False,
        )

    def _credentials(self, mailbox: str) -> Any:
        if self.credentials_for is not None:
            return self.credentials_for(mailbox)
        from ..adapters.google_credentials import credentials_for, credentials_info

        info = credentials_info()
        if info is not None:
            return credentials_for(info, mailbox)
        import google.auth

        credentials, _ = google.auth.default(scopes=list(GMAIL_SCOPES))
        return credentials

    @staticmethod
    def _execute(request: Any) -> dict[str, Any]:
        from googleapiclient.errors import HttpError

        try:
            body = request.execute(num_retries=0)
        except HttpError as exc:
            raise _translate(exc) from exc
        except (OSError, TimeoutError) as exc:
            raise GmailUnavailable(f"no answer from Gmail: {exc}") from exc
        return body if isinstance(body, dict) else {}


def _added(message: dict[str, Any]) -> AddedMessage:
    return AddedMessage(
        gmail_id=str(message.get("id") or ""),
        thread_id=str(message.get("threadId") or ""),
        label_ids=tuple(message.get("labelIds") or ()),
    )


def _translate(exc: Any) -> GmailError:
    status = int(exc.status_code)
    text = f"{status} {exc.reason}"
    reasons = {
        str(detail.get("reason"))
        for detail in (exc.error_details if isinstance(exc.error_details, list) else [])
        if isinstance(detail, dict)
    }
    if status == 429 or (
        status == 403
        and (reasons & RATE_LIMIT_REASONS or (not reasons and "rate limit" in text.lower()))
    ):
        return GmailRateLimited(text, status)
    if status >= 500:
        return GmailUnavailable(text, status)
    return GmailError(text, status)

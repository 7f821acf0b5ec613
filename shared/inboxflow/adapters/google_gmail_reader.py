"""The ``GmailReader`` port on Gmail v1 through ``google-api-python-client``.

Clients, credentials and the translation of failures come from the one
Google API layer (``google_api``): ``INBOXFLOW_GOOGLE_API_URL`` points at the
local Gmail double, otherwise each mailbox uses its own credentials. Calls are
made once (no retries here): the ``Ingestor`` retries rate limits and outages
with its own backoff.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from ..ports.gmail_reader import (
    AddedMessage,
    GmailError,
    GmailRateLimited,
    GmailUnavailable,
    HistoryExpired,
    HistoryPage,
    MailboxDisconnected,
    MessageGone,
    MessagePage,
    RawMessage,
    WatchResult,
)
from .google_api import GoogleApiConnection, PortErrors, google_api_url
from .google_credentials import CredentialsFactory

GMAIL_ERRORS = PortErrors(
    rate_limited=GmailRateLimited,
    unavailable=GmailUnavailable,
    permanent=GmailError,
    disconnected=MailboxDisconnected,
)


class GoogleApiGmailReader:
    """Gmail v1 through the real client library.

    Args:
        api_url: base URL of a Gmail API double (default ``INBOXFLOW_GOOGLE_API_URL``
            of ``environ``); None means Google's endpoint with real credentials.
        credentials: ``address -> google.auth credentials`` for real mailboxes
            (default: ``INBOXFLOW_GMAIL_CREDENTIALS[_SECRET]`` of ``environ``, else
            application default credentials; a mailbox's own token against the double).
        timeout_s: socket timeout of each HTTP call.
        page_size: ``maxResults`` of ``history.list`` and ``messages.list``.
        environ: the entry point's environment, for the defaults (None: none).
    """

    def __init__(
        self,
        api_url: str | None = None,
        credentials: CredentialsFactory | None = None,
        timeout_s: float = 30.0,
        page_size: int = 500,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = environ or {}
        self.api = GoogleApiConnection(
            api_url if api_url is not None else google_api_url(env),
            credentials,
            timeout_s=timeout_s,
            environ=env,
        )
        self.page_size = page_size

    # --- the port ----------------------------------------------------------------------

    def list_history(
        self, mailbox: str, start_history_id: int, page_token: str | None = None
    ) -> HistoryPage:
        body = self._page(
            mailbox,
            "history",
            page_token,
            GMAIL_ERRORS.with_not_found(HistoryExpired),
            startHistoryId=str(start_history_id),
            historyTypes=["messageAdded"],
        )
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
        body = self._page(
            mailbox, "messages", page_token, GMAIL_ERRORS, labelIds=list(label_ids), q=query
        )
        rows = [_added(m) for m in body.get("messages") or []]
        return MessagePage(
            messages=[r for r in rows if r.gmail_id],
            next_page_token=body.get("nextPageToken") or None,
        )

    def get_raw(self, mailbox: str, gmail_id: str) -> RawMessage:
        request = self._users(mailbox).messages().get(userId=mailbox, id=gmail_id, format="raw")
        body = self.api.execute(request, GMAIL_ERRORS.with_not_found(MessageGone))
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
        body = self.api.execute(request, GMAIL_ERRORS)
        return WatchResult(
            history_id=int(body["historyId"]), expiration_ms=int(body.get("expiration") or 0)
        )

    def _users(self, mailbox: str) -> Any:
        return self.api.service("gmail", "v1", mailbox).users()

    def _page(
        self, mailbox: str, listed: str, page_token: str | None, errors: PortErrors, **query: Any
    ) -> Any:
        """One page (``page_size`` at most) of ``users.{listed}.list`` of ``mailbox``."""
        request = getattr(self._users(mailbox), listed)().list(
            userId=mailbox, pageToken=page_token, maxResults=self.page_size, **query
        )
        return self.api.execute(request, errors)


def _added(message: dict[str, Any]) -> AddedMessage:
    return AddedMessage(
        gmail_id=str(message.get("id") or ""),
        thread_id=str(message.get("threadId") or ""),
        label_ids=tuple(message.get("labelIds") or ()),
    )


__all__ = ["GMAIL_ERRORS", "GoogleApiGmailReader"]

"""Reviewers' inbox sessions: a random cookie, only its hash stored, 12 hours, revocable.

``inbox_sessions/{sha256(session id)}`` names the reviewer. A session starts
only on a POST (a sign-in link redeemed, or an Identity-Aware Proxy identity
confirmed) and always with a new id, so an id planted in a browser before
sign-in never becomes a signed-in one (session fixation). Every form of the
inbox carries the session's form token, an HMAC under a key kept in the
session's record: a form token without its session's cookie, or with
another session's, is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from pydantic import BaseModel

from ..clock import Clock
from ..ports.documents import DocumentStore, Transaction
from ..schema import INBOX_SESSIONS
from .errors import ApprovalError
from .records import TOKEN_BYTES, store_new_token, token_hash

SESSION_TTL_S = 12 * 3600
"""How long a session lasts from sign-in (no sliding renewal)."""
SESSION_RETENTION_S = 86400
"""How long an ended or expired session's record is kept after it ends."""
MAX_SESSION_CHARS = 128


class SessionRecord(BaseModel):
    """A session's stored record (its id is the hash of the cookie's value)."""

    reviewer: str
    created_at: float
    expires_at: float
    ended_at: float | None = None
    form_key: str
    expire_at: float


@dataclass(frozen=True)
class Session:
    """A signed-in reviewer: ``session_key`` is the record's id (the cookie's hash)."""

    reviewer: str
    session_key: str
    record: SessionRecord


def sign_in_required() -> ApprovalError:
    """The refusal of a request without a live session."""
    return ApprovalError(401, "Sign in", "sign in with the link from your inbox email")


class Sessions:
    """Start, check and end reviewers' inbox sessions.

    Args:
        store: where session records live.
        clock: time source.
    """

    def __init__(self, store: DocumentStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def start(self, reviewer: str, replacing: str | None = None) -> tuple[str, Session]:
        """A new session for ``reviewer``: ``(cookie value, session)``.

        The session a browser held before (``replacing``) is ended: sign-in always
        rotates the id.
        """
        if replacing:
            self.end(replacing)
        now = self.clock.now()
        record = SessionRecord(
            reviewer=reviewer,
            created_at=now,
            expires_at=now + SESSION_TTL_S,
            form_key=secrets.token_urlsafe(TOKEN_BYTES),
            expire_at=now + SESSION_TTL_S + SESSION_RETENTION_S,
        )
        cookie, key = store_new_token(self.store, INBOX_SESSIONS, record)
        return cookie, Session(reviewer, key, record)

    def check(self, cookie: str | None) -> Session:
        """The live session a cookie names (reads only).

        Raises:
            ApprovalError: 401 none, unknown, ended or expired.
        """
        if not cookie or len(cookie) > MAX_SESSION_CHARS:
            raise sign_in_required()
        key = token_hash(cookie)
        doc = self.store.get(INBOX_SESSIONS.path(key))
        if doc is None:
            raise sign_in_required()
        record = SessionRecord.model_validate(doc)
        if record.ended_at is not None or self.clock.now() >= record.expires_at:
            raise sign_in_required()
        return Session(record.reviewer, key, record)

    def end(self, cookie: str) -> None:
        """End the session a cookie names (sign-out); nothing if there is none."""
        if not cookie or len(cookie) > MAX_SESSION_CHARS:
            return
        self._end(token_hash(cookie))

    def revoke(self, reviewer: str) -> int:
        """End every live session of ``reviewer``; how many were live."""
        now = self.clock.now()
        live = [
            key
            for key, doc in self.store.list(INBOX_SESSIONS.name, [("reviewer", "==", reviewer)])
            if doc.get("ended_at") is None and now < float(doc.get("expires_at", 0))
        ]
        for key in live:
            self._end(key)
        return len(live)

    def _end(self, key: str) -> None:
        path = INBOX_SESSIONS.path(key)
        now = self.clock.now()

        def end(tx: Transaction) -> None:
            doc = tx.get(path)
            if doc is None or doc.get("ended_at") is not None:
                return
            tx.set(path, {**doc, "ended_at": now, "expire_at": now + SESSION_RETENTION_S})

        self.store.run_transaction(end)

    def form_token(self, session: Session) -> str:
        """The token every inbox form of this session carries (writes nothing)."""
        return _form_mac(session)

    def check_form(self, session: Session, value: str | None) -> None:
        """Refuse a form token that is not this session's.

        Raises:
            ApprovalError: 400 none; 403 another session's or forged.
        """
        if not value:
            raise ApprovalError(400, "Form incomplete", "the form has no token: reload the page")
        if not hmac.compare_digest(_form_mac(session).encode(), value.encode()):
            raise ApprovalError(403, "Form not valid", "this form is not from your session")


def _form_mac(session: Session) -> str:
    message = f"inbox.{session.session_key}".encode()
    digest = hmac.new(session.record.form_key.encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")

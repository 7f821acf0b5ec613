"""Approval records and reviewer tokens as stored documents.

``approvals/{approval_id}`` is written in the commit of the step that
paused (docs/architecture.md §6). ``approval_tokens/{sha256(token)}`` binds
one random token to one approval and one reviewer; the token itself is
never stored, only sent in the reviewer's link. The review page does not
echo the link's token: its form carries a short-lived token derived from
the record (``form_token``), so a saved or cached page is no lasting key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..engine.waits import Approval
from ..schema import APPROVAL_TOKENS, APPROVALS

if TYPE_CHECKING:
    from ..ports.documents import DocumentStore
    from ..schema import Collection

TOKEN_BYTES = 32
"""256 random bits per token."""
FORM_TOKEN_TTL_S = 30 * 60
"""How long a review page's form token is good for after the page was opened."""
TOKEN_RETENTION_S = 7 * 86400
"""How long a used or expired token's record is kept (to say "expired" rather than "unknown")."""


def token_hash(token: str) -> str:
    """SHA-256 hex of a token: the id of its record."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_path(token: str) -> str:
    """Document path of a token's record (by its hash)."""
    return APPROVAL_TOKENS.path(token_hash(token))


def new_token() -> str:
    """A fresh URL-safe token of 256 random bits."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def store_new_token(
    store: DocumentStore, collection: Collection, record: BaseModel
) -> tuple[str, str]:
    """Mint a token and store ``record`` under the token's hash: ``(token, its hash)``.

    Only the hash is stored (the record's id); the token itself goes to its holder
    (a link, a cookie) and nowhere else.

    Raises:
        RuntimeError: a record with that hash exists (256 random bits: never in practice).
    """
    token = new_token()
    token_id = token_hash(token)
    if not store.create(collection.path(token_id), record.model_dump()):
        raise RuntimeError(f"{collection.name}: token collision")
    return token, token_id


def form_token(approval_id: str, token_id: str, form_key: str, expires: int) -> str:
    """The short-lived credential a review page's form carries instead of the link's token.

    ``{token_id}.{expires}.{mac}``: the token record's id, when it expires and an
    HMAC under the record's ``form_key``. Minting one writes nothing; opening the
    page again makes a new one.
    """
    return f"{token_id}.{expires}.{_form_mac(approval_id, token_id, form_key, expires)}"


def parse_form_token(value: str) -> tuple[str, int, str] | None:
    """``(token_id, expires, mac)`` of a form token, or None if it is not shaped like one."""
    token_id, _, rest = value.partition(".")
    expires, _, mac = rest.partition(".")
    if len(token_id) != 64 or not expires.isdigit() or len(expires) > 12 or not mac:
        return None
    return token_id, int(expires), mac


def form_mac_ok(approval_id: str, token_id: str, form_key: str, expires: int, mac: str) -> bool:
    """Whether ``mac`` is the form token MAC of these values (constant time)."""
    expected = _form_mac(approval_id, token_id, form_key, expires)
    return hmac.compare_digest(expected.encode(), mac.encode())


def _form_mac(approval_id: str, token_id: str, form_key: str, expires: int) -> str:
    message = f"{approval_id}.{token_id}.{expires}".encode()
    digest = hmac.new(form_key.encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def pending_approvals(store: DocumentStore, reviewer: str | None = None) -> list[Approval]:
    """Pending approvals (for ``reviewer`` when given), soonest deadline first."""
    where: list[Any] = [("status", "==", "pending")]
    if reviewer:
        where.append(("reviewers", "array_contains", reviewer))
    rows = store.list(APPROVALS.name, where=where, order_by="deadline")
    return [Approval.model_validate(doc) for _, doc in rows]


class TokenRecord(BaseModel):
    """A reviewer token's stored record (its id is the token's hash)."""

    approval_id: str
    reviewer: str
    expires_at: float
    created_at: float
    used_at: float | None = None
    round: int = 0
    expire_at: float
    form_key: str | None = None
    """Key of the review page's short-lived form tokens (see ``form_token``)."""


def token_record(
    approval: Approval, reviewer: str, now: float, expires_at: float | None = None
) -> TokenRecord:
    """The record of a token for ``reviewer``, expiring at the approval's deadline."""
    until = approval.deadline if expires_at is None else expires_at
    return TokenRecord(
        approval_id=approval.approval_id,
        reviewer=reviewer,
        expires_at=until,
        created_at=now,
        round=approval.round,
        expire_at=until + TOKEN_RETENTION_S,
        form_key=secrets.token_urlsafe(TOKEN_BYTES),
    )

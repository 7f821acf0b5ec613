"""Sign-in links to a reviewer's inbox: single use, ten minutes, only their hash stored.

``inbox_sign_ins/{sha256(token)}`` binds one random token to one reviewer.
The link (``/inbox/sign-in?token=...``) goes out in the digest or from
``inboxflow inbox REVIEWER``; its page changes nothing on GET (mail scanners
follow links) and exchanges the token for a session on POST (``redeem``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from ..ports.documents import Transaction
from ..schema import INBOX_SIGN_INS
from .errors import ApprovalError
from .grounds import Part
from .records import store_new_token, token_hash

SIGN_IN_TTL_S = 10 * 60
"""How long a sign-in link is good for."""
SIGN_IN_RETENTION_S = 86400
"""How long a spent or expired sign-in record is kept (to say "expired" rather than "unknown")."""
MAX_SIGN_IN_TOKEN_CHARS = 128
INVALID_SIGN_IN = "this sign-in link is not valid: ask for a new one"
"""The one message for every token that signs nobody in (unknown, forged, spent)."""


class SignInRecord(BaseModel):
    """A sign-in token's stored record (its id is the token's hash)."""

    reviewer: str
    created_at: float
    expires_at: float
    used_at: float | None = None
    expire_at: float


def invalid_sign_in() -> ApprovalError:
    """The refusal of a sign-in token that signs nobody in (the same for every cause)."""
    return ApprovalError(403, "Sign-in link not valid", INVALID_SIGN_IN)


class SignIns(Part):
    """Issue and redeem single-use sign-in links to a reviewer's inbox.

    Args:
        grounds: the store (sign-in records), the clock, the config (where links point).
    """

    def issue(self, reviewer: str) -> str:
        """A single-use, 10-minute sign-in link to the reviewer's inbox.

        ``{config base}/inbox/sign-in?token=...`` (token: 256 random bits; only
        its hash is stored, bound to the reviewer).

        Raises:
            ValueError: no reviewer named.
        """
        reviewer = reviewer.strip()
        if not reviewer:
            raise ValueError("a sign-in link needs a reviewer")
        now = self.clock.now()
        record = SignInRecord(
            reviewer=reviewer,
            created_at=now,
            expires_at=now + SIGN_IN_TTL_S,
            expire_at=now + SIGN_IN_TTL_S + SIGN_IN_RETENTION_S,
        )
        token, _ = store_new_token(self.store, INBOX_SIGN_INS, record)
        return f"{self.config.base_url}/inbox/sign-in?token={quote(token)}"

    def redeem(self, token: str) -> str:
        """The reviewer the token was issued to; the token is spent (single use, in a transaction).

        Raises:
            ApprovalError: 403 unknown, forged or spent (one message for all);
                410 expired.
        """
        if not token or len(token) > MAX_SIGN_IN_TOKEN_CHARS:
            raise invalid_sign_in()
        path = INBOX_SIGN_INS.path(token_hash(token))
        now = self.clock.now()

        def spend(tx: Transaction) -> str:
            doc: dict[str, Any] | None = tx.get(path)
            if doc is None:
                raise invalid_sign_in()
            record = SignInRecord.model_validate(doc)
            if record.used_at is not None:
                raise invalid_sign_in()
            if now >= record.expires_at:
                raise ApprovalError(410, "Sign-in link expired", "this sign-in link has expired")
            tx.set(path, record.model_copy(update={"used_at": now}).model_dump())
            return record.reviewer

        return self.store.run_transaction(spend)

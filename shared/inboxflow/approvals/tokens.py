"""Review links and form tokens: minted for a reviewer, checked on every request.

A link's token is 256 random bits of which only the hash is stored
(``records.token_record``); checking one changes nothing (GET uses it). The
review page's form carries a short-lived token derived from the record
instead of the link's (``records.form_token``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..engine.waits import Approval, approval_path
from ..schema import APPROVAL_TOKENS
from .errors import ApprovalError, invalid_link
from .grounds import Part
from .records import (
    FORM_TOKEN_TTL_S,
    TokenRecord,
    form_mac_ok,
    form_token,
    parse_form_token,
    store_new_token,
    token_hash,
    token_record,
)

if TYPE_CHECKING:
    from ..ports.documents import DocumentStore

MAX_TOKEN_CHARS = 128


@dataclass
class Checked:
    """An approval and the token record that opened it (``token_id``: the record's id).

    ``version``: the approval's version as read (``DocumentStore.get_versioned``); a decision
    writes it only if it is still that one, so it reads it no second time.
    """

    approval: Approval
    token: TokenRecord
    token_id: str
    version: Any = None


def read_versioned(store: DocumentStore, approval_id: str) -> tuple[Approval, Any] | None:
    """An approval by id with its version, or None (also for an id that is no document name)."""
    if not approval_id or "/" in approval_id:
        return None
    found = store.get_versioned(approval_path(approval_id))
    return None if found is None else (Approval.model_validate(found.doc), found.version)


class Tokens(Part):
    """Mint review links and verify links and form tokens.

    Args:
        grounds: the store (approvals and token records), the clock, the config (where links
            point).
    """

    def issue_link(self, approval: Approval, reviewer: str) -> str:
        """Mint a token for ``reviewer`` (only its hash is stored) and return the review link."""
        if reviewer not in approval.reviewers and reviewer not in approval.escalate_to:
            raise ApprovalError(403, "Not a reviewer", f"{reviewer} does not review this")
        record = token_record(approval, reviewer, self.clock.now())
        token, _ = store_new_token(self.store, APPROVAL_TOKENS, record)
        return self.config.link(approval.approval_id, token)

    def check(self, approval_id: str, token: str | None) -> Checked:
        """Verify a link's token for an approval; changes nothing (GET uses it).

        Raises:
            ApprovalError: 400 no token; 403 with one message for every token that
                does not open this approval (unknown, forged, another approval's, a
                reviewer no longer reviewing); 410 expired. A decided approval is
                returned (the page shows the decision); ``decide`` refuses it.
        """
        if not token:
            raise ApprovalError(400, "Link incomplete", "this link has no token")
        if len(token) > MAX_TOKEN_CHARS:
            raise invalid_link()
        token_id = token_hash(token)
        return self._checked(approval_id, token_id, self.store.get(APPROVAL_TOKENS.path(token_id)))

    def _checked(self, approval_id: str, token_id: str, doc: dict[str, Any] | None) -> Checked:
        """The approval opened by the token record ``doc`` (read by the caller: once a request)."""
        found = read_versioned(self.store, approval_id)
        if found is None or doc is None:
            raise invalid_link()
        approval, version = found
        record = TokenRecord.model_validate(doc)
        if record.approval_id != approval.approval_id or (
            record.reviewer not in approval.reviewers
            and record.reviewer not in approval.escalate_to
        ):
            raise invalid_link()
        if approval.status == "pending" and self.clock.now() >= record.expires_at:
            raise ApprovalError(410, "Link expired", "this link has expired")
        return Checked(approval, record, token_id, version)

    def form_token(self, checked: Checked) -> str:
        """A short-lived token for the review page's form (writes nothing).

        It expires ``FORM_TOKEN_TTL_S`` after the page was opened (never after
        the link itself), so a saved or cached page is no lasting key.
        """
        if not checked.token.form_key:
            raise ApprovalError(410, "Link expired", "this link is too old: ask for a new one")
        expires = int(min(self.clock.now() + FORM_TOKEN_TTL_S, checked.token.expires_at))
        return form_token(
            checked.approval.approval_id, checked.token_id, checked.token.form_key, expires
        )

    def check_form(self, approval_id: str, value: str | None) -> Checked:
        """Verify a review page's form token (see ``form_token``).

        Raises:
            ApprovalError: 400 none; 403 forged or another approval's (the same
                message as a bad link); 410 expired (open the link again).
        """
        if not value:
            raise ApprovalError(
                400, "Form incomplete", "the form has no token: open the link again"
            )
        parsed = parse_form_token(value) if len(value) <= 4 * MAX_TOKEN_CHARS else None
        if parsed is None:
            raise invalid_link()
        token_id, expires, mac = parsed
        doc = self.store.get(APPROVAL_TOKENS.path(token_id))
        form_key = (doc or {}).get("form_key")
        if not form_key or not form_mac_ok(approval_id, token_id, form_key, expires, mac):
            raise invalid_link()
        checked = self._checked(approval_id, token_id, doc)
        if checked.approval.status == "pending" and self.clock.now() >= expires:
            raise ApprovalError(
                410,
                "Page expired",
                "this page was open too long: open the link in the email again",
            )
        return checked

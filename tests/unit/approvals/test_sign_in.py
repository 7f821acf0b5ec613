"""Inbox sign-in links: single use, ten minutes, only the hash stored, bound to a reviewer."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.approvals.errors import ApprovalError
from inboxflow.approvals.grounds import Grounds
from inboxflow.approvals.records import token_hash
from inboxflow.approvals.settings import ApprovalConfig
from inboxflow.approvals.sign_in import SIGN_IN_TTL_S, SignIns
from inboxflow.clock import FakeClock
from inboxflow.schema import INBOX_SIGN_INS


@pytest.fixture
def sign_ins(tmp_path: Path) -> SignIns:
    store = SqliteCheckpointStore(tmp_path / "inboxflow.db")
    return SignIns(Grounds(store, FakeClock(), ApprovalConfig(base_url="https://approvals.test")))


def token_of(link: str) -> str:
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://approvals.test/inbox/sign-in"
    return parse_qs(parts.query)["token"][0]


def test_a_link_signs_its_reviewer_in_once(sign_ins: SignIns) -> None:
    token = token_of(sign_ins.issue("ana@brightlane.io"))
    assert len(token) >= 43  # 256 bits, URL-safe base64
    assert sign_ins.redeem(token) == "ana@brightlane.io"
    with pytest.raises(ApprovalError) as reused:
        sign_ins.redeem(token)
    assert reused.value.status == 403


def test_only_the_hash_is_stored(sign_ins: SignIns) -> None:
    token = token_of(sign_ins.issue("ana@brightlane.io"))
    rows = sign_ins.store.list(INBOX_SIGN_INS.name)
    assert [doc_id for doc_id, _ in rows] == [token_hash(token)]
    assert token not in repr(rows)


def test_an_expired_link_is_refused_with_410_and_not_spent(sign_ins: SignIns) -> None:
    token = token_of(sign_ins.issue("ana@brightlane.io"))
    assert isinstance(sign_ins.clock, FakeClock)
    sign_ins.clock.advance(SIGN_IN_TTL_S - 1)
    other = token_of(sign_ins.issue("ben@brightlane.io"))
    sign_ins.clock.advance(1)
    with pytest.raises(ApprovalError) as expired:
        sign_ins.redeem(token)
    assert expired.value.status == 410
    assert sign_ins.redeem(other) == "ben@brightlane.io"


@pytest.mark.parametrize("token", ["", "x", "A" * 43, "A" * 500, "../approvals/x"])
def test_unknown_or_forged_tokens_get_one_403(sign_ins: SignIns, token: str) -> None:
    sign_ins.issue("ana@brightlane.io")
    with pytest.raises(ApprovalError) as refused:
        sign_ins.redeem(token)
    assert refused.value.status == 403


def test_each_link_is_bound_to_its_reviewer(sign_ins: SignIns) -> None:
    ana = token_of(sign_ins.issue("ana@brightlane.io"))
    ben = token_of(sign_ins.issue("ben@brightlane.io"))
    assert ana != ben
    assert sign_ins.redeem(ben) == "ben@brightlane.io"
    assert sign_ins.redeem(ana) == "ana@brightlane.io"


def test_a_link_needs_a_reviewer(sign_ins: SignIns) -> None:
    with pytest.raises(ValueError):
        sign_ins.issue("  ")

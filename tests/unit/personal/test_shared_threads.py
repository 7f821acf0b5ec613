"""A Gmail thread is anybody's who names a message of it: a stranger whose mail named the
victim's Message-ID in ``References`` shares her thread id, and that must make nothing of hers
his. His export holds none of her vector, claim or thread; erasing him deletes none of them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.sqlite_vectors import SqliteVectorIndex
from inboxflow.clock import FakeClock
from inboxflow.dev.personal.access import access_document
from inboxflow.ingest.claims import claim_path
from inboxflow.personal.erasure import Eraser
from inboxflow.personal.finder import PersonFinder
from inboxflow.threads import thread_path

VICTIM = "kim.lee@gmail.com"
STRANGER = "mallory@evil.example"
MAILBOX = "desk@brightlane.io"
THREAD = "18c2f0a1b2c3d4e5"
VICTIM_LINE = "My card ending 4242 was charged twice this month."


def _email(message_id: str, sender: str, body: str, references: list[str]) -> dict[str, Any]:
    return {
        "message_id": message_id,
        "thread_id": THREAD,
        "mailbox": MAILBOX,
        "references": references,
        "sender": {"address": sender, "name": ""},
        "to": [{"address": MAILBOX, "name": ""}],
        "cc": [],
        "subject": "Re: Double charge",
        "body_text": body,
    }


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[SqliteCheckpointStore, SqliteVectorIndex]]:
    documents = SqliteCheckpointStore(tmp_path / "p.db")
    vectors = SqliteVectorIndex(tmp_path / "p.db")
    victim = _email("m-kim@gmail.com", VICTIM, f"Hello,\n{VICTIM_LINE}\nKim", [])
    documents.set("traces/t-kim", {"status": "done", "state": {"email": victim}})
    documents.set(claim_path(MAILBOX, "g-kim"), {"trace_id": "t-kim", "thread_id": THREAD})
    documents.set(
        thread_path(MAILBOX, THREAD),
        {"mailbox": MAILBOX, "thread_id": THREAD, "trace_id": "t-kim", "parties": [VICTIM]},
    )
    vectors.upsert(
        "email_vectors",
        "m-kim@gmail.com",
        [1.0, 0.0],
        {"sender": VICTIM, "thread_id": THREAD, "message_id": "m-kim@gmail.com"},
    )
    # Mallory's mail names Kim's Message-ID: Gmail gives it Kim's thread; it started its own trace.
    stranger = _email(
        "m-mallory@evil.example", STRANGER, "Please verify your account.", ["m-kim@gmail.com"]
    )
    documents.set("traces/t-mallory", {"status": "done", "state": {"email": stranger}})
    documents.set(claim_path(MAILBOX, "g-mallory"), {"trace_id": "t-mallory", "thread_id": THREAD})
    vectors.upsert(
        "email_vectors",
        "m-mallory@evil.example",
        [0.0, 1.0],
        {"sender": STRANGER, "thread_id": THREAD, "message_id": "m-mallory@evil.example"},
    )
    yield documents, vectors
    vectors.close()
    documents.close()


def test_the_stranger_s_export_and_erasure_hold_nothing_of_the_victim(stores) -> None:
    documents, vectors = stores
    holdings = PersonFinder(documents, vectors).find(STRANGER)
    assert {h.path for h in holdings.held} == {
        "traces/t-mallory",
        claim_path(MAILBOX, "g-mallory"),
        "email_vectors/m-mallory@evil.example",
    }
    exported = json.dumps(access_document(holdings, 0.0))
    assert VICTIM not in exported and "t-kim" not in exported and VICTIM_LINE not in exported

    kept = {
        path: documents.get(path)
        for path in ("traces/t-kim", claim_path(MAILBOX, "g-kim"), thread_path(MAILBOX, THREAD))
    }
    Eraser(documents, vectors, FakeClock()).erase(STRANGER, by="dpo")
    assert {path: documents.get(path) for path in kept} == kept
    assert dict(vectors.documents("email_vectors")) == {
        "m-kim@gmail.com": {
            "sender": VICTIM,
            "thread_id": THREAD,
            "message_id": "m-kim@gmail.com",
        }
    }
    assert documents.get("traces/t-mallory") is None


def test_the_victim_s_own_export_still_holds_her_thread(stores) -> None:
    documents, vectors = stores
    held = {h.path for h in PersonFinder(documents, vectors).find(VICTIM).held}
    assert {
        "traces/t-kim",
        claim_path(MAILBOX, "g-kim"),
        thread_path(MAILBOX, THREAD),
        "email_vectors/m-kim@gmail.com",
    } <= held
    assert "traces/t-mallory" not in held and "email_vectors/m-mallory@evil.example" not in held

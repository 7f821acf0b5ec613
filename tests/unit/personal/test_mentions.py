"""About a person or only mentioning them: a trace of their email is deleted with what it leads
to; another person's trace, vector or notification that repeats their address or the text of
their mail is redacted in place, the rest of it and what it leads to kept as they were."""

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
from inboxflow.personal.erasure import Eraser
from inboxflow.personal.finder import PersonFinder
from inboxflow.personal.matching import ERASED

JANA = "jana@example.org"
OMAR = "omar@example.net"
JANA_LINE = "We were charged twice for the January renewal of our plan."
OMAR_LINE = "Our invoices show the wrong VAT number since March."
LENA = "lena@example.com"
LENA_LINE = "The card ending 4242 was declined at checkout."


def _email(message_id: str, sender: str, body: str, **extra: Any) -> dict[str, Any]:
    return {
        "message_id": message_id,
        "thread_id": f"thread-{message_id}",
        "sender": {"address": sender, "name": ""},
        "to": [{"address": "desk@brightlane.io", "name": ""}],
        "cc": [],
        "subject": f"Billing problem from {sender.split('@')[0]}",
        "body_text": body,
        **extra,
    }


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[SqliteCheckpointStore, SqliteVectorIndex]]:
    documents = SqliteCheckpointStore(tmp_path / "p.db")
    vectors = SqliteVectorIndex(tmp_path / "p.db")
    jana_email = _email("m-jana", JANA, f"Hello,\n{JANA_LINE}\nJana")
    documents.set("traces/t-jana", {"status": "done", "state": {"email": jana_email}})
    documents.set("traces/t-jana/steps/000000", {"output_delta": {"route": "billing"}})
    documents.set("effects/t-jana:2:reply-0", {"result": {"sent": True}})
    # Omar's email quotes Jana's (a forwarded thread) and his retrieval found hers.
    omar_body = f"{OMAR_LINE}\n\nOn Monday {JANA} wrote:\n> {JANA_LINE}\n"
    similar = [
        {"message_id": "m-jana", "sender": JANA, "excerpt": f"Hello, {JANA_LINE} Jana"},
        {"message_id": "m-old", "sender": OMAR, "excerpt": OMAR_LINE},
    ]
    documents.set(
        "traces/t-omar",
        {
            "status": "waiting",
            "state": {
                "email": _email("m-omar", OMAR, omar_body),
                "context": {"similar_emails": similar},
            },
        },
    )
    documents.set("traces/t-omar/steps/000000", {"output_delta": {"context": {"similar": 2}}})
    documents.set("effects/t-omar:2:notify-0", {"result": {"to": "maya@brightlane.io"}})
    documents.set("approvals/t-omar-2", {"trace_id": "t-omar", "payload": {"to": OMAR}})
    vectors.upsert("email_vectors", "m-jana", [1.0, 0.0], {"sender": JANA, "excerpt": JANA_LINE})
    vectors.upsert(
        "email_vectors",
        "m-omar",
        [0.0, 1.0],
        {"sender": OMAR, "thread_id": "thread-m-omar", "excerpt": f"{OMAR_LINE} {JANA} wrote"},
    )
    yield documents, vectors
    vectors.close()
    documents.close()


def test_another_person_s_records_are_redacted_not_taken(stores) -> None:
    documents, vectors = stores
    holdings = PersonFinder(documents, vectors).find(JANA)
    assert {h.path for h in holdings.held} == {
        "traces/t-jana",
        "traces/t-jana/steps/000000",
        "effects/t-jana:2:reply-0",
        "email_vectors/m-jana",
    }
    assert {h.path for h in holdings.mentions} == {"traces/t-omar", "email_vectors/m-omar"}
    exported = access_document(holdings, 0.0)["mentioned"]
    omar_part = json.dumps(exported)
    assert JANA in omar_part and OMAR_LINE not in omar_part and OMAR not in omar_part

    omar_before = documents.get("traces/t-omar")
    untouched = ("traces/t-omar/steps/000000", "effects/t-omar:2:notify-0", "approvals/t-omar-2")
    kept_before = {path: documents.get(path) for path in untouched}
    report = Eraser(documents, vectors, FakeClock()).erase(JANA, by="dpo")
    assert report.ended == []  # Omar's waiting trace is not ended: it is not Jana's
    assert report.counts["traces"] == {"deleted": 1, "redacted": 1}

    assert documents.get("traces/t-jana") is None
    assert documents.list("traces/t-jana/steps") == []
    assert documents.get("effects/t-jana:2:reply-0") is None
    omar = documents.get("traces/t-omar")
    assert omar is not None and omar["status"] == "waiting"
    body = omar["state"]["email"]["body_text"]
    assert body == f"{OMAR_LINE}\n\nOn Monday {ERASED} wrote:\n> {ERASED}\n"
    assert {k: v for k, v in omar["state"]["email"].items() if k != "body_text"} == {
        k: v for k, v in omar_before["state"]["email"].items() if k != "body_text"
    }
    assert omar["state"]["context"]["similar_emails"] == [
        {"message_id": "m-old", "sender": OMAR, "excerpt": OMAR_LINE}
    ]
    assert {path: documents.get(path) for path in untouched} == kept_before
    assert dict(vectors.documents("email_vectors")) == {
        "m-omar": {
            "sender": OMAR,
            "thread_id": "thread-m-omar",
            "excerpt": f"{OMAR_LINE} {ERASED} wrote",
        }
    }
    assert vectors.nearest("email_vectors", [0.0, 1.0], limit=1)[0].doc_id == "m-omar"
    assert len(PersonFinder(documents, vectors).find(JANA)) == 0


def test_an_export_keeps_of_another_person_s_retrieved_mail_only_the_person_s_own(stores) -> None:
    """Omar's trace holds Jana's email (retrieval found it near his): his export gives his
    trace, its steps and its similar emails, but of Jana's only nothing; the store unchanged."""
    documents, vectors = stores
    omar = documents.get("traces/t-omar")
    lena = {"message_id": "m-lena", "sender": LENA, "excerpt": f"{LENA_LINE} {LENA}"}
    similar = [*omar["state"]["context"]["similar_emails"], lena]
    omar["state"]["context"]["similar_emails"] = similar
    documents.set("traces/t-omar", omar)
    documents.set(
        "traces/t-omar/steps/000001",
        {"output_delta": {"context": {"similar_emails": similar, "sender_known": True}}},
    )
    documents.set(
        "traces/t-omar/steps/000002",
        {"output_patch": {"context": {"set": {"similar_emails": similar}, "unset": []}}},
    )
    before = {path: documents.get(path) for path in ("traces/t-omar", "traces/t-omar/steps/000001")}
    holdings = PersonFinder(documents, vectors).find(OMAR)
    assert "traces/t-omar" in {h.path for h in holdings.held}
    document = access_document(holdings, 0.0)

    (decision,) = document["decisions"]
    # Jana's email: only the line his own email quoted (he sent it too); his earlier email
    # (its id is not his); nothing of Lena's
    own = [{"excerpt": JANA_LINE}, {"sender": OMAR, "excerpt": OMAR_LINE}]
    assert decision["state"]["context"]["similar_emails"] == own
    (trace,) = document["records"]["traces"]
    assert trace["document"]["state"]["context"]["similar_emails"] == own
    steps = {r["path"]: r["document"] for r in document["records"]["steps"]}
    assert steps["traces/t-omar/steps/000001"]["output_delta"]["context"] == {
        "similar_emails": own,
        "sender_known": True,
    }
    patched = steps["traces/t-omar/steps/000002"]["output_patch"]["context"]["set"]
    assert patched["similar_emails"] == own
    retrieved = json.dumps([decision["state"]["context"], list(steps.values())])
    for theirs in (JANA, "m-jana", "Hello,", LENA, LENA_LINE, "m-lena"):
        assert theirs not in retrieved
    assert LENA not in json.dumps(document) and LENA_LINE not in json.dumps(document)
    assert {path: documents.get(path) for path in before} == before

"""One person's mail through all five graphs: ``--export`` holds every item, ``--erase`` leaves
nothing about them in any collection (SQLite and the Firestore emulator), other people's data
stays: untouched, or, where the pipeline's retrieval copied the person's email into another
person's trace, redacted in place (their trace, vectors and claims kept); and an erasure that
crashed half-way is finished by the next run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.dev.personal.access import access_document
from inboxflow.engine.runtime import Runtime
from inboxflow.personal.erasure import END_REASON, Eraser, ErasureRecords, address_hash
from inboxflow.personal.finder import Held, PersonFinder
from inboxflow.schema import TRACES
from tests.harness.person import (
    BODY_MARK,
    OTHER,
    PERSON,
    SUBJECT_MARK,
    build,
    every_document,
    other_mail,
    person_mail,
)
from tests.harness.thread_chat import STORES


@pytest.fixture(params=STORES)
def runtime(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Runtime]:
    if request.param == "sqlite":
        from inboxflow.adapters.sqlite_store import SqliteCheckpointStore

        store: Any = SqliteCheckpointStore(tmp_path / "person.db")
    else:
        request.getfixturevalue("firestore_env")
        from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

        store = FirestoreCheckpointStore.from_env(os.environ)
    built = build(tmp_path, store)
    yield built
    store.close()


class Crash(Exception):
    """Injected: the erasing process dies."""


def _about_person(docs: dict[str, dict[str, Any]], trace_ids: set[str]) -> list[str]:
    """The paths whose id or content names the person, their mail's marks or their traces."""
    needles = [PERSON, SUBJECT_MARK.lower(), BODY_MARK, *trace_ids]
    return [
        path
        for path, doc in docs.items()
        if any(n in (path + json.dumps(doc, ensure_ascii=False)).lower() for n in needles)
    ]


def _finder(runtime: Runtime) -> PersonFinder:
    return PersonFinder(runtime.ports.documents, runtime.ports.vectors)


def _eraser(runtime: Runtime, **kw: Any) -> Eraser:
    return Eraser(runtime.ports.documents, runtime.ports.vectors, runtime.clock, **kw)


def test_export_has_every_item_then_erase_leaves_nothing_and_spares_others(runtime):
    traces = person_mail(runtime)
    other = other_mail(runtime)
    waiting = {g for g, t in traces.items() if runtime.store.get_trace(t).status == "waiting"}
    assert waiting == {"pipeline", "planner"}  # the pending review and the agency review
    before = every_document(runtime)
    retrieving = before[f"traces/{other['retrieving']}"]
    assert PERSON in json.dumps(retrieving["state"]["context"]["similar_emails"])

    holdings = _finder(runtime).find(PERSON.upper())
    assert {h.doc_id for h in holdings.of(TRACES)} == set(traces.values())
    assert other["retrieving"] in {h.doc_id for h in holdings.mentions_of(TRACES)}
    about_other = _about_other(before, set(other.values()))
    assert not {h.path for h in holdings.held} & set(about_other)
    document = json.loads(json.dumps(access_document(holdings, runtime.clock.now())))
    exported = {r["path"] for rows in document["records"].values() for r in rows}
    mentioned = {r["path"] for rows in document["mentioned"].values() for r in rows}
    # plus what only an identifier leads to (a quoting call's record by the quote's id)
    assert set(_about_person(before, set(traces.values()))) <= exported | mentioned
    assert _memory(before) | {f"traces/{other['retrieving']}"} <= mentioned
    assert not mentioned & exported
    counts = document["counts"]
    for name in ("tickets", "reservations", "quotes", "email_vectors", "approvals"):
        assert counts.get(name), (name, counts)
    copy = next(r for r in document["mentioned"]["traces"] if other["retrieving"] in r["path"])
    assert copy["mentions"]["state"]["context"]["similar_emails"][0]["sender"] == PERSON
    assert OTHER not in json.dumps(copy["mentions"])  # only the parts naming the person
    assert {e["trace_id"] for e in document["emails"]} == set(traces.values())
    assert all(SUBJECT_MARK in e["subject"] for e in document["emails"])
    assert {d["graph"] for d in document["decisions"]} == set(traces)
    assert any(s["to"] == PERSON for s in document["sent"])  # the pharmacy's reply draft
    assert {a["trace_id"] for a in document["approvals"]} >= {traces[g] for g in waiting}

    report = _eraser(runtime).erase(PERSON, by="dpo@brightlane.io")
    assert set(report.ended) == {traces[g] for g in waiting}
    after = every_document(runtime)
    assert _about_person(after, set(traces.values())) == []
    _assert_others_spared(before, after, other)
    memory = [d for p, d in after.items() if p.startswith("memory/") and "/" not in p[7:]]
    assert memory and all(PERSON not in json.dumps(d) for d in memory)
    record = ErasureRecords(runtime.ports.documents).get(PERSON)
    assert record is not None and record.status == "done" and record.by == "dpo@brightlane.io"
    assert record.address_sha256 == address_hash(PERSON)
    assert record.counts["traces"]["deleted"] == 5
    assert len(_finder(runtime).find(PERSON)) == 0
    assert _eraser(runtime).erase(PERSON, by="dpo").counts == {}


def test_another_person_s_export_holds_nothing_of_the_mail_retrieval_copied_in(runtime):
    """The pipeline's retrieval put the person's email into the other person's trace (and
    the step that retrieved it): the other's export holds their trace, not the person's mail."""
    traces = person_mail(runtime)
    other = other_mail(runtime)
    retrieving = runtime.store.get(f"traces/{other['retrieving']}")
    assert PERSON in json.dumps(retrieving["state"]["context"]["similar_emails"])
    holdings = _finder(runtime).find(OTHER)
    assert other["retrieving"] in {h.doc_id for h in holdings.of(TRACES)}
    exported = json.dumps(access_document(holdings, runtime.clock.now()), ensure_ascii=False)
    for theirs in (PERSON, SUBJECT_MARK, BODY_MARK, *traces.values()):
        assert theirs not in exported, theirs
    assert runtime.store.get(f"traces/{other['retrieving']}") == retrieving


def test_a_crash_mid_erasure_is_finished_by_the_next_run(runtime):
    traces = person_mail(runtime)
    other = other_mail(runtime)
    before = every_document(runtime)
    total = len(_finder(runtime).find(PERSON))
    erased: list[Held] = []

    def die_near_the_end(held: Held) -> None:
        erased.append(held)
        if len(erased) == total - 3:  # past the leaves: some traces already gone
            raise Crash

    with pytest.raises(Crash):
        _eraser(runtime, on_erased=die_near_the_end).erase(PERSON, by="dpo")
    record = ErasureRecords(runtime.ports.documents).get(PERSON)
    assert record is not None and record.status == "erasing"
    gone = [h.doc_id for h in erased if h.collection.name == "traces"]
    assert gone, "the crash must come after some traces were erased"
    waiting = runtime.store.get_trace(traces["planner"])
    if waiting is not None:  # ended before anything was erased
        assert waiting.status == "rejected"
        assert runtime.store.get(f"traces/{traces['planner']}")["end_reason"] == END_REASON

    _eraser(runtime).erase(PERSON, by="dpo")
    after = every_document(runtime)
    assert _about_person(after, set(traces.values())) == []
    _assert_others_spared(before, after, other)
    record = ErasureRecords(runtime.ports.documents).get(PERSON)
    assert record is not None and (record.status, record.runs) == ("done", 1)
    assert len(_finder(runtime).find(PERSON)) == 0


def _assert_others_spared(
    before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], other: dict[str, str]
) -> None:
    """Every document of the other person is still there: as it was where it did not name the
    person; where it did (the retrieval's copy of the person's email), without them."""
    for path in _about_other(before, set(other.values())):
        assert path in after, path
        if _about_person({path: before[path]}, set()):
            assert _about_person({path: after[path]}, set()) == [], path
        else:
            assert after[path] == before[path], path
    kept, was = after[f"traces/{other['retrieving']}"], before[f"traces/{other['retrieving']}"]
    assert kept["state"]["email"] == was["state"]["email"]
    similar = was["state"]["context"]["similar_emails"]
    assert kept["state"]["context"]["similar_emails"] == [
        s for s in similar if s["sender"] != PERSON
    ]
    assert len(kept["state"]["context"]["similar_emails"]) == len(similar) - 1
    # what its trace leads to, which its mention of the person must not make theirs
    vector = f"email_vectors/{was['state']['email']['message_id']}"
    led_to = [vector] + [
        p
        for p in before
        if p.startswith(("mail_claims/", "threads/", "approvals/", "effects/"))
        and other["retrieving"] in p + json.dumps(before[p])
    ]
    assert vector in before and any(p.startswith("approvals/") for p in led_to), led_to
    assert all(after.get(p) == before[p] for p in led_to)


def _about_other(docs: dict[str, dict[str, Any]], trace_ids: set[str]) -> list[str]:
    needles = [OTHER, *trace_ids]
    return [p for p, d in docs.items() if any(n in p + json.dumps(d) for n in needles)]


def _memory(docs: dict[str, dict[str, Any]]) -> set[str]:
    """The memory documents (shared: found when they mention the person)."""
    return {p for p, d in docs.items() if p.startswith("memory/") and PERSON in json.dumps(d)}

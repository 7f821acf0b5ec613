"""The quoting tools' effects are ``keyed``: the journal writes one entry per call, ``done``
after it, and nothing before; the quoting service's idempotency key (the effect key) is what
keeps a re-run from opening, adding or rating twice. Crashes before the call, after the call
(before its entry), after the entry (before the step's commit), and duplicate deliveries,
against the embedded service and the HTTP adapter with its API double: one quote, one driver,
one vehicle, one rate, each quoting entry ``done`` once."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from inboxflow.adapters.embedded_quoting import EmbeddedQuoting
from inboxflow.adapters.inprocess_bus import SimulatedCrash
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.dev.doubles.quoting_api import QuotingApiDouble
from inboxflow.engine.effects import EffectJournal
from inboxflow.ports.documents import DocumentStore
from tests.harness.pipeline import StormBus
from tests.harness.planner import (
    VALID_VIN,
    approve_all,
    build,
    checkpoint,
    decide,
    reply_email,
    resume_with_reply,
    sample,
    sent,
    start,
)

ANSWER = (
    "Hi,\n\nMy driver's license is D4821937 (CA), licensed for 12 years, no accidents.\n"
    f"VIN: {VALID_VIN}\n\nJordan"
)
QUOTING_TOOLS = ("quote_initiate", "add_driver", "add_vehicle", "get_rate")
KEY = "k-" + "y" * 30


@dataclass(frozen=True)
class Quotes:
    """The quoting engine and the store its quotes and idempotency records are in."""

    engine: EmbeddedQuoting
    store: DocumentStore


@contextlib.contextmanager
def _planner(tmp_path, over_http: bool, **kw: Any) -> Iterator[tuple[Any, Quotes]]:
    """A planner runtime and where its quotes are (embedded, or behind the HTTP double)."""
    if not over_http:
        runtime = build(tmp_path, **kw)
        yield runtime, Quotes(EmbeddedQuoting(runtime.store, runtime.clock), runtime.store)
        return
    with QuotingApiDouble(clock=FakeClock(), api_key=KEY) as double:
        environ = {"INBOXFLOW_QUOTING_URL": double.url, "INBOXFLOW_QUOTING_API_KEY": KEY}
        yield build(tmp_path, environ=environ, **kw), Quotes(double.engine, double.store)


def _quote_to_the_end(runtime) -> str:
    email = sample("41")
    trace_id = start(runtime, email)
    decide(runtime, trace_id, "approve")
    resume_with_reply(runtime, trace_id, reply_email(email, ANSWER, "g-1"))
    approve_all(runtime, trace_id)
    return trace_id


def _one_of_everything(runtime, quotes: Quotes, trace_id: str) -> None:
    done = checkpoint(runtime, trace_id)
    assert done.status == "done", done.error
    assert len(sent(runtime, trace_id)) == 2  # the question and the summary
    held = quotes.engine.get(done.state["quote_session"]["quote_id"])
    assert (len(held.drivers), len(held.vehicles)) == (1, 1) and held.rate is not None
    assert len(quotes.store.list("quotes")) == 1  # one quote opened, not two
    assert len(quotes.store.list("quote_keys")) == len(QUOTING_TOOLS)  # each key applied once
    entries = {
        doc_id.rsplit(":", 1)[1]: doc
        for doc_id, doc in runtime.store.list("effects")
        if doc_id.startswith(f"{trace_id}:") and doc_id.rsplit(":", 1)[1] in QUOTING_TOOLS
    }
    assert sorted(entries) == sorted(QUOTING_TOOLS)
    assert {entry["status"] for entry in entries.values()} == {"done"}


@pytest.mark.parametrize("over_http", [False, True], ids=["embedded", "http"])
@pytest.mark.parametrize("point", ["before_effect", "after_effect", "before_commit"])
@pytest.mark.parametrize("tool", QUOTING_TOOLS)
def test_a_crash_at_any_point_of_a_quoting_call_does_it_once(tmp_path, over_http, point, tool):
    crashes: list[str] = []
    where = f"{point}:tools" if point == "before_commit" else f"{point}:{tool}"

    with _planner(tmp_path, over_http) as (runtime, quotes):

        def fault(at: str) -> None:
            # before_commit: crash the tools hop that ran this tool (its entry is done)
            ran = point != "before_commit" or any(
                doc_id.endswith(f":{tool}") for doc_id, _ in runtime.store.list("effects")
            )
            if at == where and ran and not crashes:
                crashes.append(at)
                raise SimulatedCrash(at)

        runtime.fault = fault
        trace_id = _quote_to_the_end(runtime)
        assert crashes == [where]
        _one_of_everything(runtime, quotes, trace_id)


@pytest.mark.parametrize("over_http", [False, True], ids=["embedded", "http"])
def test_duplicate_deliveries_quote_once(tmp_path, over_http):
    bus = StormBus(clock=FakeClock(), copies=3, shuffle_seed=7)
    with _planner(tmp_path, over_http, bus=bus) as (runtime, quotes):
        trace_id = _quote_to_the_end(runtime)
        _one_of_everything(runtime, quotes, trace_id)
        assert runtime.bus.deliveries >= 2 * len(runtime.bus.seen)


class _Counting(SqliteCheckpointStore):
    """A store that counts the writes to the effect journal."""

    writes = 0

    def set(self, path: str, doc: Any) -> None:
        self.writes += path.startswith("effects/")
        super().set(path, doc)

    def create(self, path: str, doc: Any) -> bool:
        self.writes += path.startswith("effects/")
        return super().create(path, doc)


class _Keyed:
    """A service keyed like the quoting API: the same key returns the first result."""

    def __init__(self) -> None:
        self.applied: dict[str, dict[str, Any]] = {}
        self.calls = 0

    def __call__(self, key: str) -> dict[str, Any]:
        self.calls += 1
        return self.applied.setdefault(key, {"n": len(self.applied)})


def test_a_keyed_effect_is_one_journal_write_and_a_plain_one_two(tmp_path):
    store = _Counting(tmp_path / "db.sqlite")
    journal = EffectJournal(store, FakeClock())
    service = _Keyed()
    assert journal.run("t", 1, "rate", service, keyed=True) == {"n": 0}
    assert store.writes == 1  # done only: no started before the call
    assert journal.run("t", 1, "rate", service, keyed=True) == {"n": 0}
    assert (store.writes, service.calls) == (1, 1)  # a re-run reads the recorded result
    journal.run("t", 1, "mail", service)
    assert store.writes == 3  # a plain effect: started, then done
    entry = store.get("effects/t:1:rate")
    assert entry is not None and (entry["status"], entry["attempts"]) == ("done", 1)


def test_a_keyed_effect_that_crashes_after_the_call_calls_again_with_the_same_key(tmp_path):
    store = SqliteCheckpointStore(tmp_path / "db.sqlite")
    crash = ["after_effect:rate"]

    def fault(at: str) -> None:
        if at in crash:
            crash.remove(at)
            raise SimulatedCrash(at)

    journal = EffectJournal(store, FakeClock(), fault)
    service = _Keyed()
    with pytest.raises(SimulatedCrash):
        journal.run("t", 1, "rate", service, keyed=True)
    assert store.get("effects/t:1:rate") is None  # nothing written: the crash came first
    assert journal.run("t", 1, "rate", service, keyed=True) == {"n": 0}
    assert (service.calls, list(service.applied)) == (2, ["t:1:rate"])  # applied once


def test_a_keyed_effect_that_fails_leaves_started_and_counts_attempts(tmp_path):
    store = SqliteCheckpointStore(tmp_path / "db.sqlite")
    journal = EffectJournal(store, FakeClock())

    def down(key: str) -> dict[str, Any]:
        raise RuntimeError("unavailable")

    for _ in range(2):
        with pytest.raises(RuntimeError):
            journal.run("t", 1, "rate", down, keyed=True)
    entry = store.get("effects/t:1:rate")
    assert entry is not None and (entry["status"], entry["attempts"]) == ("started", 2)
    assert journal.run("t", 1, "rate", _Keyed(), keyed=True) == {"n": 0}
    entry = store.get("effects/t:1:rate")
    assert entry is not None and (entry["status"], entry["attempts"]) == ("done", 3)

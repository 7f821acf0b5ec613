"""Preference memory: versioned per mailbox and namespace, no lost concurrent write, history,
and the assistant learning from its owner end to end (embedded default, offline model)."""

from __future__ import annotations

import pytest

from inboxflow import memory as memory_module
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.clock import FakeClock
from inboxflow.errors import Contention
from inboxflow.mail.model import Address
from inboxflow.memory import DEFAULTS, HISTORY_KEEP, PreferenceMemory, memory_path
from tests.harness.agent import build
from tests.harness.assistant import OWNER, decide, pending, sample, start, state


def _again(prefix: str, n: int):
    """The sample as a new email (its own message and thread)."""
    return sample(prefix, message_id=f"<again-{prefix}-{n}@test>", thread_id=f"thread-{prefix}-{n}")


def _add_note(note: str):
    def change(memory):
        return {**memory.profile, "notes": [*memory.profile["notes"], note]}, f"noted {note}"

    return change


@pytest.fixture
def preferences(tmp_path):
    return PreferenceMemory(SqliteCheckpointStore(tmp_path / "memory.db"), FakeClock())


def _read(runtime, namespace):
    return PreferenceMemory(runtime.store, runtime.clock).read(OWNER, namespace)


def test_defaults_until_first_written_then_versions(preferences):
    first = preferences.read(OWNER, "response_preferences")
    assert (first.version, first.profile) == (0, DEFAULTS["response_preferences"])
    preferences.update(OWNER, "response_preferences", _add_note("a"), "s1")
    second = preferences.update(OWNER.upper(), "response_preferences", _add_note("b"), "s2")
    assert second.version == 2 and second.profile["notes"] == ["a", "b"]
    assert preferences.read(OWNER, "response_preferences").profile["notes"] == ["a", "b"]
    assert preferences.read(OWNER, "cal_preferences").version == 0  # namespaces are separate


def test_a_concurrent_write_is_never_lost(preferences):
    interleaved = []

    def slow_change(memory):
        if not interleaved:  # another writer commits while this one is thinking
            interleaved.append(
                preferences.update(OWNER, "triage_preferences", _add_note("other"), "s-b")
            )
        return _add_note("mine")(memory)

    result = preferences.update(OWNER, "triage_preferences", slow_change, "s-a")
    assert result.version == 2
    assert result.profile["notes"] == ["other", "mine"]
    assert [h["why"] for h in preferences.history(OWNER, "triage_preferences")] == [
        "noted mine",
        "noted other",
    ]


def test_the_same_source_changes_memory_once(preferences):
    for _ in range(3):
        preferences.update(OWNER, "cal_preferences", _add_note("x"), "trace:7")
    memory = preferences.read(OWNER, "cal_preferences")
    assert (memory.version, memory.profile["notes"]) == (1, ["x"])


def test_source_version_names_the_version_a_source_made(preferences):
    preferences.update(OWNER, "cal_preferences", _add_note("x"), "trace:7")
    preferences.update(OWNER, "cal_preferences", _add_note("y"), "trace:8")
    preferences.update(OWNER, "cal_preferences", lambda memory: None, "trace:9")  # no change
    assert preferences.source_version(OWNER, "cal_preferences", "trace:7") == 1
    assert preferences.source_version(OWNER, "cal_preferences", "trace:8") == 2
    assert preferences.source_version(OWNER, "cal_preferences", "trace:9") is None
    assert preferences.source_version(OWNER, "triage_preferences", "trace:7") is None


def test_history_keeps_the_last_fifty_and_reset_is_a_change(preferences):
    for n in range(HISTORY_KEEP + 5):
        preferences.update(OWNER, "cal_preferences", _add_note(str(n)), f"s{n}")
    history = preferences.history(OWNER, "cal_preferences")
    assert len(history) == HISTORY_KEEP
    assert (history[0]["version"], history[-1]["version"]) == (HISTORY_KEEP + 5, 6)
    assert (history[0]["source"], history[0]["why"]) == (
        f"s{HISTORY_KEEP + 4}",
        f"noted {HISTORY_KEEP + 4}",
    )
    reset = preferences.reset(OWNER, "cal_preferences")
    assert reset.profile == DEFAULTS["cal_preferences"] and reset.version == HISTORY_KEEP + 6
    latest = preferences.history(OWNER, "cal_preferences")[0]
    assert latest["why"] == "reset to the defaults"
    assert latest["before"]["notes"] == [str(n) for n in range(HISTORY_KEEP + 5)]
    assert preferences.read(OWNER, "cal_preferences").profile == DEFAULTS["cal_preferences"]


def test_a_writer_that_always_loses_gives_up_with_nothing_written(preferences, monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(memory_module, "MAX_ATTEMPTS", 4)
    monkeypatch.setattr(memory_module.random, "uniform", lambda low, high: high)
    monkeypatch.setattr(memory_module.time, "sleep", waits.append)
    rivals = iter(range(100))

    def beaten(memory):  # another writer commits while this one is thinking, every time
        preferences.update(OWNER, "cal_preferences", _add_note("rival"), f"rival-{next(rivals)}")
        return _add_note("mine")(memory)

    with pytest.raises(
        Contention, match=r"'s-mine' lost to other writers 4 times \(versions read: 0, 1, 2, 3\)"
    ):
        preferences.update(OWNER, "cal_preferences", beaten, "s-mine")
    memory = preferences.read(OWNER, "cal_preferences")
    assert (memory.version, memory.profile["notes"]) == (4, ["rival"] * 4)
    assert [h["source"] for h in preferences.history(OWNER, "cal_preferences")] == [
        "rival-3",
        "rival-2",
        "rival-1",
        "rival-0",
    ]
    assert preferences.source_version(OWNER, "cal_preferences", "s-mine") is None
    assert waits == [0.02, 0.04, 0.08]  # jittered up to a doubling bound


def test_a_document_created_but_never_changed_reads_as_the_defaults(preferences):
    """The first writer creates the document empty at version 0 before its conditional
    write; if it stops there, the memory is still the defaults and the next change is 1."""
    path = memory_path(OWNER, "response_preferences")
    preferences.store.create(
        path,
        {"mailbox": OWNER, "namespace": "response_preferences", "profile": {}, "version": 0},
    )
    memory = preferences.read(OWNER, "response_preferences")
    assert (memory.version, memory.profile, memory.updated_at) == (
        0,
        DEFAULTS["response_preferences"],
        None,
    )
    written = preferences.update(OWNER, "response_preferences", _add_note("a"), "s1")
    assert written.version == 1
    [entry] = preferences.history(OWNER, "response_preferences")
    assert (entry["version"], entry["before"], entry["after"]["notes"]) == (
        1,
        DEFAULTS["response_preferences"],
        ["a"],
    )


def test_old_history_left_by_a_failed_delete_is_hidden_then_deleted(preferences, monkeypatch):
    store = preferences.store
    for n in range(HISTORY_KEEP):
        preferences.update(OWNER, "cal_preferences", _add_note(str(n)), f"s{n}")
    history = f"{memory_path(OWNER, 'cal_preferences')}/history"

    run_transaction = store.run_transaction

    def busy_deleting(fn):  # the delete after the change fails; the change itself does not
        if fn.__name__ == "delete":
            raise Contention("the store is busy")
        return run_transaction(fn)

    monkeypatch.setattr(store, "run_transaction", busy_deleting)
    written = preferences.update(OWNER, "cal_preferences", _add_note("late"), "s-late")
    assert written.version == HISTORY_KEEP + 1
    monkeypatch.undo()
    assert store.get(f"{history}/000001") is not None  # left behind ...
    kept = preferences.history(OWNER, "cal_preferences")
    assert [h["version"] for h in kept] == list(range(HISTORY_KEEP + 1, 1, -1))  # ... not shown
    preferences.update(OWNER, "cal_preferences", _add_note("next"), "s-next")
    assert store.get(f"{history}/000001") is None  # the next change deletes it too
    assert store.get(f"{history}/000002") is None
    assert len(store.list(history)) == HISTORY_KEEP


def test_unknown_namespace_and_bad_mailbox_are_refused(preferences):
    with pytest.raises(ValueError, match="unknown memory namespace 'tone'"):
        preferences.read(OWNER, "tone")
    with pytest.raises(ValueError, match="cannot name a memory document"):
        preferences.read("a/b@x.test", "cal_preferences")


# --- learning end to end -------------------------------------------------------------------


def test_an_edited_sign_off_is_used_in_the_next_draft(tmp_path):
    runtime = build(tmp_path)
    first = start(runtime, _again("34", 1))
    draft = pending(runtime, first).payload["content"]
    decide(runtime, first, "edit", edit={"content": draft.replace("Best regards", "Cheers,\nAlex")})
    assert state(runtime, first)["memory_updates"] == ["response_preferences@1"]
    memory = _read(runtime, "response_preferences")
    assert memory.profile["sign_off"] == "Cheers,\nAlex"
    assert "sign-off is now" in memory.why

    second = start(runtime, _again("34", 2))
    assert pending(runtime, second).payload["content"].endswith("\n\nCheers,\nAlex")


def test_an_accepted_draft_teaches_nothing(tmp_path):
    runtime = build(tmp_path)
    trace_id = start(runtime, _again("34", 1))
    decide(runtime, trace_id, "accept")
    assert state(runtime, trace_id)["memory_updates"] == []
    assert _read(runtime, "response_preferences").version == 0


def test_a_sender_ignored_twice_on_notify_is_ignored_next_time(tmp_path):
    runtime = build(tmp_path)
    for n in (1, 2):
        trace_id = start(runtime, _again("32", n))
        assert state(runtime, trace_id)["classification"] == "notify"
        decide(runtime, trace_id, "ignore")
    triage = _read(runtime, "triage_preferences").profile
    assert triage["ignore_senders"] == ["billing@acme-hosting.example"]

    third = start(runtime, _again("32", 3))
    assert state(runtime, third)["classification"] == "ignore"
    assert "the owner ignores mail from billing@" in state(runtime, third)["reasoning"]
    other = start(runtime, sample("32", sender=Address(address="billing@other.example")))
    assert state(runtime, other)["classification"] == "notify"  # only that sender


def test_one_ignore_is_not_enough(tmp_path):
    runtime = build(tmp_path)
    decide(runtime, start(runtime, _again("32", 1)), "ignore")
    assert state(runtime, start(runtime, _again("32", 2)))["classification"] == "notify"


def test_an_edited_meeting_length_is_used_for_the_next_meeting(tmp_path):
    runtime = build(tmp_path)
    first = start(runtime, _again("33", 1))
    decide(runtime, first, "edit", edit={"duration_minutes": "45", "start_time": "14:00"})
    calendar = _read(runtime, "cal_preferences").profile
    assert (calendar["default_duration_minutes"], calendar["preferred_start_time"]) == (45, "14:00")
    runtime.clock.advance(7 * 24 * 3600)  # a week on: 14:00 is free again
    second = start(runtime, _again("33", 2))
    payload = pending(runtime, second).payload
    assert (payload["duration_minutes"], payload["start_time"]) == ("45", "14:00")


def test_a_notify_that_times_out_is_not_learnt_as_the_owners_ignore(tmp_path):
    runtime = build(tmp_path)
    for n in (1, 2):
        trace_id = start(runtime, _again("32", n))
        approval = pending(runtime, trace_id)
        runtime.clock.advance(8 * 24 * 3600)
        runtime.ports.approvals.deadlines.on_timeout(approval.approval_id)
        runtime.bus.drain()
        assert state(runtime, trace_id)["status"] == "ignored"
    assert _read(runtime, "triage_preferences").version == 0
    assert state(runtime, start(runtime, _again("32", 3)))["classification"] == "notify"

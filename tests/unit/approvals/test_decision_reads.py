"""What a decision reads and writes: each document once, nothing a read already told."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inboxflow.approvals.errors import AlreadyDecided
from tests.harness.approval import Harness


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def _spy(h: Harness, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """``(operation, path)`` of the store's reads and conditional writes from now on."""
    calls: list[tuple[str, str]] = []
    store = h.store
    get, versioned, update, transaction = (
        store.get,
        store.get_versioned,
        store.update_if_unchanged,
        store.run_transaction,
    )

    inside: list[bool] = []  # a default get_versioned reads through get: one read

    def spied_get(path: str) -> Any:
        if not inside:
            calls.append(("get", path))
        return get(path)

    def spied_versioned(path: str) -> Any:
        calls.append(("get", path))
        inside.append(True)
        try:
            return versioned(path)
        finally:
            inside.pop()

    def spied_update(path: str, *args: Any) -> bool:
        calls.append(("update_if_unchanged", path))
        return update(path, *args)

    def spied_transaction(fn: Any) -> Any:
        calls.append(("transaction", ""))
        return transaction(fn)

    monkeypatch.setattr(store, "get", spied_get)
    monkeypatch.setattr(store, "get_versioned", spied_versioned)
    monkeypatch.setattr(store, "update_if_unchanged", spied_update)
    monkeypatch.setattr(store, "run_transaction", spied_transaction)
    return calls


def _decision_calls(calls: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The calls on the approval and its tokens (not the resume's, not the deadline's)."""
    return [c for c in calls if c[1].startswith(("approvals/", "approval_tokens/"))]


def test_a_link_decision_reads_the_token_and_the_approval_once_and_writes_once(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id = h.start()
    link = h.links(h.approval_of(trace_id).approval_id)[0]
    calls = _spy(h, monkeypatch)
    h.service.decisions.decide(link.approval_id, link.token, "approve")
    approval = f"approvals/{link.approval_id}"
    ops = _decision_calls(calls)
    assert sorted(ops) == sorted(
        [("get", approval), ("get", ops[0][1]), ("update_if_unchanged", approval)]
    )
    assert ops[0][1].startswith("approval_tokens/")
    used = [d for _, d in h.store.list("approval_tokens") if d.get("used_at")]
    assert len(used) == 1 and used[0]["reviewer"] == link.to


def test_a_form_decision_reads_its_token_record_once(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id = h.start()
    link = h.links(h.approval_of(trace_id).approval_id)[0]
    form = h.form(link, "approve")["form"]
    calls = _spy(h, monkeypatch)
    h.service.decisions.decide(link.approval_id, form, "approve", form=True)
    reads = [path for op, path in _decision_calls(calls) if op == "get"]
    assert len(reads) == 2 and len(set(reads)) == 2


def test_a_decided_approval_is_refused_without_a_write(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id = h.start()
    links = h.links(h.approval_of(trace_id).approval_id)
    h.service.decisions.decide(links[0].approval_id, links[0].token, "approve")
    calls = _spy(h, monkeypatch)
    with pytest.raises(AlreadyDecided):
        h.service.decisions.decide(links[1].approval_id, links[1].token, "reject")
    assert not [c for c in _decision_calls(calls) if c[0] != "get"]
    assert ("transaction", "") not in calls


def test_a_decision_against_a_changed_approval_reads_it_again_and_the_first_wins(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another reviewer decides between this decision's check and its write: refused (409),
    and the token of the refused decision stays unused."""
    trace_id = h.start()
    links = h.links(h.approval_of(trace_id).approval_id)
    store = h.store
    update = store.update_if_unchanged

    def first_decides_meanwhile(path: str, *args: Any) -> bool:
        monkeypatch.setattr(store, "update_if_unchanged", update)
        h.service.decisions.decide(links[1].approval_id, links[1].token, "reject")
        return update(path, *args)

    monkeypatch.setattr(store, "update_if_unchanged", first_decides_meanwhile)
    with pytest.raises(AlreadyDecided) as refused:
        h.service.decisions.decide(links[0].approval_id, links[0].token, "approve")
    assert refused.value.approval.decided_by == links[1].to
    used = [d for _, d in store.list("approval_tokens") if d.get("used_at")]
    assert [d["reviewer"] for d in used] == [links[1].to]


def test_a_decision_against_an_approval_changed_but_pending_decides_the_new_version(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id = h.start()
    links = h.links(h.approval_of(trace_id).approval_id)
    store = h.store
    update = store.update_if_unchanged
    path = f"approvals/{links[0].approval_id}"

    def changed_meanwhile(target: str, *args: Any) -> bool:
        monkeypatch.setattr(store, "update_if_unchanged", update)
        store.set(path, {**(store.get(path) or {}), "note": "changed while pending"})
        return update(target, *args)

    monkeypatch.setattr(store, "update_if_unchanged", changed_meanwhile)
    decided = h.service.decisions.decide(links[0].approval_id, links[0].token, "approve")
    assert decided.status == "decided"
    stored = store.get(path)
    assert stored is not None and stored["status"] == "decided"
    assert stored["note"] == "changed while pending"  # decided on the version read again

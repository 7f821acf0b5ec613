"""The reviewer's inbox on the Firestore emulator: its queries (may_decide array-contains,
status, deadline order, the filters, the history range, count aggregations), sign-in and
sessions in Firestore transactions, and a bulk decision through the same path as a link."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from inboxflow.approvals.inbox import InboxFilter
from tests.harness.approval import REVIEWERS, Harness

pytestmark = pytest.mark.emulator

ANA, BEN = REVIEWERS


def test_the_inbox_on_firestore(firestore_env: object, tmp_path: Path) -> None:
    from inboxflow.adapters.firestore_store import FirestoreCheckpointStore

    h = Harness(tmp_path, store=FirestoreCheckpointStore.from_env(os.environ))
    traces = [h.start() for _ in range(3)]
    ids = sorted((h.approval_of(t) for t in traces), key=lambda a: (a.deadline, a.approval_id))
    expected = [a.approval_id for a in ids]

    first = h.service.inbox.waiting(ANA, InboxFilter(), page_size=2)
    rest = h.service.inbox.waiting(ANA, InboxFilter(after=first.next_after), page_size=2)
    assert [a.approval_id for a in first.items + rest.items] == expected
    assert h.service.inbox.counts(ANA) == {"pipeline": 3}
    assert h.service.inbox.counts("nobody@example.com") == {}
    mailbox = ids[0].mailbox
    narrowed = InboxFilter(graph="pipeline", kind="approve_draft", mailbox=mailbox)
    assert [a.approval_id for a in h.service.inbox.waiting(ANA, narrowed).items] == expected

    token = h.service.sign_ins.issue(ANA).split("token=", 1)[1]
    assert h.client.get(f"/inbox/sign-in?token={token}").status_code == 200
    assert (
        h.client.post(
            "/inbox/sign-in", data={"token": token}, headers={"Sec-Fetch-Site": "same-origin"}
        ).status_code
        == 303
    )
    assert (
        h.app.test_client()
        .post("/inbox/sign-in", data={"token": token}, headers={"Sec-Fetch-Site": "same-origin"})
        .status_code
        == 403
    )
    html = h.client.get("/inbox").get_data(as_text=True)
    assert re.findall(r'href="/inbox/a/([^"]+)"', html) == expected
    form = re.search(r'name="form" value="([^"]+)"', html)
    assert form is not None
    response = h.client.post(
        "/inbox/bulk", data={"form": form.group(1), "decision": "approve", "ids": expected}
    )
    assert response.get_data(as_text=True).count('data-result="done"') == 3
    resumed = [h.store.get_trace(h.service.get(i).trace_id) for i in expected]  # type: ignore[union-attr]
    assert all(cp is not None and cp.status != "waiting" for cp in resumed)
    history = h.client.get("/inbox/history?mine=1").get_data(as_text=True)
    assert history.count("data-history") == 3
    assert h.service.inbox.counts(ANA) == {}

"""Human approval on the embedded default: the pause, the approval function, and attacks on it."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from inboxflow.approvals.records import FORM_TOKEN_TTL_S, token_hash
from inboxflow.engine.waits import payload_hash, resume_of
from inboxflow.envelope import Envelope
from inboxflow.errors import RejectedEnvelope
from inboxflow.graphs.pipeline.settings import PipelineSettings
from tests.harness.approval import BACKUP, REVIEWERS, Harness, Link, sample
from tests.harness.pipeline import mailbox_writes


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def _paused(h: Harness) -> tuple[str, list[Link]]:
    trace_id = h.start()
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "waiting"
    links = h.links(h.approval_of(trace_id).approval_id)
    assert len(links) == len(REVIEWERS)
    return trace_id, links


# --- the pause -------------------------------------------------------------------------


def test_the_service_notifier_is_the_one_every_reviewer_email_goes_through(h: Harness) -> None:
    """Graph nodes send their own notices through ``approvals.notifier``: it is the notifier
    the service was built with, and replacing it replaces the one reviewer emails use."""
    assert h.service.notifier is h.outbox
    sent: list[str] = []

    class Recording:
        def send(self, note: Any) -> dict[str, Any]:
            sent.append(note.to)
            return {"id": f"m-{len(sent)}", "channel": "test"}

        def find(self, key: str, sender: str | None = None) -> None:
            return None

    h.service.notifier = Recording()  # type: ignore[assignment]
    h.start()
    assert sorted(sent) == sorted(REVIEWERS) and h.inbox == []


def test_pause_commits_an_approval_and_notifies_each_reviewer_once(h: Harness) -> None:
    trace_id, links = _paused(h)
    approval = h.approval_of(trace_id)
    assert approval.status == "pending"
    assert approval.payload_hash == payload_hash(approval.payload)
    assert approval.reviewers == list(REVIEWERS)
    assert approval.deadline == pytest.approx(h.clock.now() + 3600, abs=5)
    assert {link.to for link in links} == set(REVIEWERS)
    # Only hashes are stored, one per reviewer, bound to approval and reviewer, expiring.
    tokens = dict(h.store.list("approval_tokens"))
    assert set(tokens) == {token_hash(link.token) for link in links}
    for link in links:
        record = tokens[token_hash(link.token)]
        assert (record["approval_id"], record["reviewer"]) == (approval.approval_id, link.to)
        assert record["expires_at"] == approval.deadline and record["used_at"] is None
    everything = json.dumps(
        [
            doc
            for c in ("approvals", "approval_tokens", "outbox", "effects")
            for doc in h.store.list(c)
            if c != "outbox"
        ]
    )
    assert not any(link.token in everything for link in links)
    # The deadline task, named after the approval, at the deadline, on the timeout endpoint.
    tasks = h.tasks.pending()  # type: ignore[attr-defined]
    assert [t.name for t in tasks] == [f"{approval.approval_id}-d0"]
    assert tasks[0].run_at == approval.deadline
    assert tasks[0].url == "http://approvals.test/timeout"
    assert tasks[0].audience == "http://approvals.test"
    # A redelivery of the pausing step sends nothing twice.
    h.service.after_pause(approval)
    h.runtime.handle(
        Envelope(trace_id=trace_id, graph="pipeline", node="review", step=approval.step, sent_at=0)
    )
    assert len(h.links(approval.approval_id)) == len(REVIEWERS)
    assert len(h.tasks.pending()) == 1  # type: ignore[attr-defined]


def test_the_deadline_is_scheduled_once_by_its_name_without_an_effect_record(
    h: Harness,
) -> None:
    """The task's name is the approval's round: the queue refuses it a second time, so the
    deadline needs no journal entry (two writes and a read per pause)."""
    trace_id, _ = _paused(h)
    approval = h.approval_of(trace_id)
    for _ in range(2):  # the pausing step redelivered twice
        h.service.after_pause(approval)
    assert [t.name for t in h.tasks.pending()] == [f"{approval.approval_id}-d0"]  # type: ignore[attr-defined]
    assert [key for key, _ in h.store.list("effects") if ":deadline-" in key] == []
    assert h.service.deadlines.tasks.schedule(h.tasks.pending()[0]) is False  # type: ignore[attr-defined]


def test_notification_lost_in_a_crash_is_sent_on_redelivery(h: Harness) -> None:
    calls = {"n": 0}
    send = h.outbox.send

    def flaky(*args: Any) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("gmail went away")
        return send(*args)

    h.outbox.send = flaky  # type: ignore[method-assign]
    h.runtime.options.node_attempts = 1
    trace_id = h.start()  # the in-process bus redelivers after the failure
    approval = h.approval_of(trace_id)
    assert sorted(link.to for link in h.links(approval.approval_id)) == sorted(REVIEWERS)


def test_notification_email_has_the_email_the_draft_and_the_link(h: Harness) -> None:
    trace_id, links = _paused(h)
    (message,) = [m for m in h.inbox if m["to"] == REVIEWERS[0]]
    approval = h.approval_of(trace_id)
    (link,) = [link for link in links if link.to == REVIEWERS[0]]
    assert link.path in message["text"]
    assert approval.payload["draft"][:40] in message["text"]
    assert "Sofia" in message["text"] or "sofia" in message["text"]
    assert link.token in message["html"]
    assert link.token not in message["subject"]


def test_the_stored_copy_of_a_notification_is_no_key_to_the_review_page(h: Harness) -> None:
    trace_id, links = _paused(h)
    stored = json.dumps([doc for _, doc in h.store.list("outbox")])
    assert len(h.outbox.messages()) == len(REVIEWERS)
    for link in links:
        assert link.token not in stored
    copied = h.outbox.messages(REVIEWERS[0])[0]["text"]
    path = "/a/" + copied.split("/a/", 1)[1].split()[0]
    assert path.endswith("?t=REDACTED")
    before = h.snapshot(trace_id)
    response = h.client.get(path)
    assert response.status_code == 403
    assert h.snapshot(trace_id) == before


# --- GET never changes state -----------------------------------------------------------


def test_get_renders_the_review_page_and_changes_nothing(h: Harness) -> None:
    trace_id, links = _paused(h)
    before = h.snapshot(trace_id)
    for _ in range(3):  # a link scanner, a previewer, the reviewer
        response = h.client.get(links[0].path)
        assert response.status_code == 200
    assert h.client.head(links[0].path).status_code == 200
    page = response.get_data(as_text=True)
    approval = h.approval_of(trace_id)
    assert 'name="decision"' in page and 'value="approve"' in page and 'value="reject"' in page
    # The form carries a short-lived form token, never the link's token.
    assert "textarea" in page and links[0].token not in page and 'name="form"' in page
    assert "complaint" in page.lower()
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    assert approval.status == "pending"
    assert h.snapshot(trace_id) == before


# --- deciding ----------------------------------------------------------------------------


def test_approve_with_an_edit_dispatches_exactly_the_edited_text(h: Harness) -> None:
    trace_id, links = _paused(h)
    edited = "Hi Sofia,\n\nWe refunded the duplicate charge today.\n\nMaya"
    response = h.client.post(
        f"/a/{links[1].approval_id}", data=h.form(links[1], "approve", draft=edited)
    )
    assert response.status_code == 200, response.data
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done"
    assert checkpoint.state["dispatch"]["approved_by"] == links[1].to
    assert checkpoint.state["dispatch"]["edited"] is True
    (draft,) = mailbox_writes(h.store, trace_id)
    assert draft["body"] == edited
    approval = h.approval_of(trace_id)
    assert approval.decided_by == links[1].to and approval.decision == "approve"
    assert approval.applied_payload_hash == payload_hash({**approval.payload, "draft": edited})


def test_an_edit_to_an_address_dispatch_refuses_is_refused_on_the_page(h: Harness) -> None:
    """Issue 39, item 7: the page said "Approved, saved as a draft" and dispatch refused."""
    trace_id, links = _paused(h)
    to = '"x@evil.example" <evil@evil.example>'
    response = h.client.post(f"/a/{links[1].approval_id}", data=h.form(links[1], "approve", to=to))
    assert response.status_code == 400
    assert "Approved" not in response.get_data(as_text=True)
    assert h.approval_of(trace_id).status == "pending"  # the reviewer can decide again
    assert mailbox_writes(h.store, trace_id) == []


def test_approve_unedited_dispatches_the_approved_payload(h: Harness) -> None:
    trace_id, links = _paused(h)
    approval = h.approval_of(trace_id)
    assert (
        h.client.post(f"/a/{approval.approval_id}", data=h.form(links[0], "approve")).status_code
        == 200
    )
    (draft,) = mailbox_writes(h.store, trace_id)
    assert draft["body"] == approval.payload["draft"]
    assert h.approval_of(trace_id).edited is False


def test_reject_ends_the_trace_rejected_without_a_draft(h: Harness) -> None:
    trace_id, links = _paused(h)
    response = h.client.post(f"/a/{links[0].approval_id}", data=h.form(links[0], "reject"))
    assert response.status_code == 200
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "rejected"
    assert mailbox_writes(h.store, trace_id) == []


# --- attacks -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make_request", "status"),
    [
        pytest.param(
            lambda k: ("post", f"/a/{k.approval_id}", {"token": "A" * 43, "decision": "approve"}),
            403,
            id="forged-token",
        ),
        pytest.param(
            lambda k: ("get", f"/a/{k.approval_id}?t={'B' * 43}", None), 403, id="forged-token-get"
        ),
        pytest.param(
            lambda k: ("post", f"/a/{k.approval_id}", {"decision": "approve"}),
            400,
            id="post-without-token",
        ),
        pytest.param(lambda k: ("get", f"/a/{k.approval_id}", None), 400, id="get-without-token"),
        pytest.param(
            lambda k: ("post", f"/a/{k.approval_id}", {"token": k.token, "decision": "ignore"}),
            400,
            id="decision-not-offered",
        ),
        pytest.param(
            lambda k: (
                "post",
                f"/a/{k.approval_id}",
                {"token": k.token, "decision": "approve", "draft": "x" * 20_001},
            ),
            413,
            id="oversized-edit",
        ),
        pytest.param(
            lambda k: (
                "post",
                f"/a/{k.approval_id}",
                {"token": k.token, "decision": "approve", "to": "a@x.io, b@y.io"},
            ),
            400,
            id="edit-adds-recipients",
        ),
        pytest.param(
            lambda k: (
                "post",
                f"/a/{k.approval_id}",
                {"token": k.token, "decision": "approve", "subject": "Hi\r\nBcc: evil@x.io"},
            ),
            400,
            id="header-injection-in-subject",
        ),
        pytest.param(
            lambda k: (
                "post",
                f"/a/{k.approval_id}",
                {"token": k.token, "decision": "approve", "draft": "y" * 300_000},
            ),
            413,
            id="oversized-body",
        ),
        pytest.param(
            lambda k: ("post", "/a/nope-1", {"token": k.token, "decision": "approve"}),
            403,
            id="unknown-approval",
        ),
        pytest.param(
            lambda k: ("post", f"/a/{k.approval_id}/..", {"token": k.token, "decision": "approve"}),
            404,
            id="path-games",
        ),
        pytest.param(
            lambda k: ("put", f"/a/{k.approval_id}", {"token": k.token, "decision": "approve"}),
            405,
            id="wrong-method",
        ),
    ],
)
def test_refused_requests_change_nothing(h: Harness, make_request: Any, status: int) -> None:
    trace_id, links = _paused(h)
    before = h.snapshot(trace_id)
    method, path, form = make_request(links[0])
    if form and "token" in form:  # the page's form token stands for the link's token
        token = form.pop("token")
        form["form"] = h.form_token(links[0]) if token == links[0].token else token
    response = getattr(h.client, method)(path, data=form)
    assert response.status_code == status, response.get_data(as_text=True)[:300]
    assert links[0].token not in response.get_data(as_text=True) or status == 200
    assert h.snapshot(trace_id) == before


def test_token_of_another_approval_is_refused(h: Harness) -> None:
    first, first_links = _paused(h)
    second = h.start(sample("15-complaint-exports-broken"))
    second_approval = h.approval_of(second)
    before = h.snapshot(second)
    response = h.client.post(
        f"/a/{second_approval.approval_id}", data=h.form(first_links[0], "approve")
    )
    assert response.status_code == 403
    assert (
        h.client.get(f"/a/{second_approval.approval_id}?t={first_links[0].token}").status_code
        == 403
    )
    assert h.snapshot(second) == before
    assert h.approval_of(first).status == "pending"


def test_token_of_another_reviewer_cannot_decide_as_them(h: Harness) -> None:
    trace_id, links = _paused(h)
    ana, ben = links
    before = h.snapshot(trace_id)
    # JSON API: Ana's token claiming to be Ben.
    response = h.client.post(
        f"/api/approvals/{ana.approval_id}/decision",
        json={"decision": "approve", "reviewer": ben.to},
        headers={"Authorization": f"Bearer {ana.token}"},
    )
    assert response.status_code == 403
    assert h.snapshot(trace_id) == before
    # The form ignores any reviewer field: the decision is Ana's.
    form = {**h.form(ana, "reject"), "reviewer": ben.to, "decided_by": ben.to}
    assert h.client.post(f"/a/{ana.approval_id}", data=form).status_code == 200
    assert h.approval_of(trace_id).decided_by == ana.to


def test_expired_token_is_refused(h: Harness) -> None:
    trace_id, links = _paused(h)
    before = h.snapshot(trace_id)
    form = h.form(links[0], "approve")  # a page opened before the deadline
    h.clock.advance(3601)
    assert h.client.get(links[0].path).status_code == 410
    response = h.client.post(f"/a/{links[0].approval_id}", data=form)
    assert response.status_code == 410
    assert "expired" in response.get_data(as_text=True).lower()
    assert h.snapshot(trace_id) == before


def test_replayed_token_after_a_decision_sees_already_decided(h: Harness) -> None:
    trace_id, links = _paused(h)
    forms = [h.form(link, "approve") for link in links]  # both pages open at once
    assert (
        h.client.post(f"/a/{links[0].approval_id}", data=h.form(links[0], "reject")).status_code
        == 200
    )
    after = h.snapshot(trace_id)
    for link, form in zip(links, forms, strict=True):
        response = h.client.post(f"/a/{link.approval_id}", data=form)
        assert response.status_code == 409
        page = response.get_data(as_text=True)
        assert links[0].to in page and link.token not in page
    decided_page = h.client.get(links[1].path)
    assert decided_page.status_code == 200
    assert links[0].to in decided_page.get_data(as_text=True)
    assert h.snapshot(trace_id) == after


def test_fifty_concurrent_decisions_apply_exactly_one(h: Harness) -> None:
    trace_id, links = _paused(h)
    barrier = threading.Barrier(50)
    statuses: list[int] = []
    lock = threading.Lock()

    forms = [h.form(links[n % 2], "approve" if n % 3 else "reject") for n in range(50)]
    started = h.clock.now()
    # Every request thread drains the bus after its request, as the embedded function does;
    # deliveries must still be handled one at a time (see Harness.drain).
    bus = h.runtime.bus
    handle, guard, running, peak = bus.handler, threading.Lock(), [0], [0]  # type: ignore[attr-defined]

    def one_at_a_time(message: Any) -> Any:
        with guard:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.005)  # widen the window a second drainer would need
            return handle(message)
        finally:
            with guard:
                running[0] -= 1

    bus.handler = one_at_a_time  # type: ignore[attr-defined]

    def decide(n: int) -> None:
        link = links[n % 2]
        client = h.app.test_client()
        barrier.wait()
        response = client.post(f"/a/{link.approval_id}", data=forms[n])
        with lock:
            statuses.append(response.status_code)

    threads = [threading.Thread(target=decide, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] + [409] * 49
    approval = h.approval_of(trace_id)
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None
    expected = "done" if approval.decision == "approve" else "rejected"
    assert checkpoint.status == expected
    assert len(mailbox_writes(h.store, trace_id)) == (1 if approval.decision == "approve" else 0)
    used = [doc for _, doc in h.store.list("approval_tokens") if doc.get("used_at")]
    assert len(used) == 1
    # Duplicate resumes (losers republish until the winner notes it) were dropped by the
    # runtime, not retried: no lease contention, so no redelivery backoff moved the clock.
    assert peak[0] == 1
    assert bus.redeliveries == 0 and bus.dead_letters == []  # type: ignore[attr-defined]
    assert h.clock.now() == started


def test_request_threads_that_drain_at_once_handle_one_delivery_at_a_time(h: Harness) -> None:
    """The cause of the fifty-decisions flake, made deterministic: two drains at once must
    not run two deliveries at once (a fake-clock backoff would expire a live lease)."""
    trace_id, links = _paused(h)
    h.client.post(f"/a/{links[0].approval_id}", data=h.form(links[0], "reject"))
    bus = h.runtime.bus
    handle, second_started = bus.handler, threading.Event()  # type: ignore[attr-defined]
    running, peak = [0], [0]
    guard = threading.Lock()

    def slow(message: Any) -> Any:
        with guard:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            if running[0] > 1:
                second_started.set()
        try:
            second_started.wait(0.5)  # the first delivery waits to see a second one start
            return handle(message)
        finally:
            with guard:
                running[0] -= 1

    bus.handler = slow  # type: ignore[attr-defined]
    resume = Envelope(trace_id=trace_id, graph="pipeline", node="dispatch", step=7, sent_at=0)
    bus.publish([resume, resume])  # type: ignore[attr-defined]
    threads = [threading.Thread(target=h.drain) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak[0] == 1
    assert len(bus) == 0  # type: ignore[arg-type]


class _Inert(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.scripts += tag in ("script", "iframe", "object", "embed")
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self.handlers += [
            f"{name}={value}"
            for name, value in attrs
            if value and value.strip().lower().startswith("javascript:")
        ]


def test_hostile_email_is_rendered_inert(h: Harness) -> None:
    email = sample("04-complaint-double-charge")
    email["subject"] = "Refund <script>alert('s')</script> now"
    email["body_text"] = (
        "I was charged twice! <img src=x onerror=alert(1)> </textarea><script>alert(2)</script>"
        '<a href="javascript:alert(3)">click</a> {{ 7*7 }}'
    )
    trace_id = h.start(email)
    link = h.links(h.approval_of(trace_id).approval_id)[0]
    page = h.client.get(link.path).get_data(as_text=True)
    parser = _Inert()
    parser.feed(page)
    assert parser.scripts == 0 and parser.handlers == []
    assert "&lt;script&gt;alert(&#39;s&#39;)&lt;/script&gt;" in page or "&lt;script&gt;" in page
    assert "{{ 7*7 }}" in page and "49" not in page.split("{{ 7*7 }}")[0][-5:]
    message = h.outbox.messages(link.to)[0]
    html_parser = _Inert()
    html_parser.feed(message["html"])
    assert html_parser.scripts == 0 and html_parser.handlers == []


def test_a_resume_that_does_not_match_the_approved_payload_is_refused(h: Harness) -> None:
    trace_id, _ = _paused(h)
    approval = h.approval_of(trace_id)
    forged = {
        "decision": "approve",
        "reviewer": "x@evil.io",
        "approval_id": approval.approval_id,
        "payload": {**approval.payload, "draft": "wire money to ..."},
        "payload_hash": approval.payload_hash,
    }
    h.runtime.resume(trace_id, forged)
    h.drain()
    wrong_approval = {
        "decision": "approve",
        "approval_id": "other-1",
        "payload": None,
        "payload_hash": approval.payload_hash,
    }
    with pytest.raises(RejectedEnvelope):  # not even published: the trace waits on another
        h.runtime.resume(trace_id, wrong_approval)
    waiting = h.store.get_trace(trace_id)
    assert waiting is not None
    h.runtime.bus.publish(  # as a replayed dead letter would come: the runtime refuses it too
        [
            Envelope(
                trace_id=trace_id,
                graph=waiting.graph,
                node=waiting.node,
                step=waiting.step,
                sent_at=h.clock.now(),
                resume=wrong_approval,
            )
        ]
    )
    h.drain()
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "waiting"
    assert mailbox_writes(h.store, trace_id) == []
    reasons = [doc["reason"] for _, doc in h.store.list("failures")]
    assert any("hash of what was approved" in r for r in reasons)
    assert any("waits on" in r for r in reasons)


# --- deadlines -------------------------------------------------------------------------


def test_deadline_needs_review(h: Harness) -> None:
    trace_id, links = _paused(h)
    form = h.form(links[0], "approve")
    assert h.run_due_tasks() == 0
    h.clock.advance(3600)
    assert h.run_due_tasks() == 1
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "needs_review"
    assert "no decision within 1 h" in (checkpoint.error or "")
    assert h.approval_of(trace_id).status == "timed_out"
    response = h.client.post(f"/a/{links[0].approval_id}", data=form)
    assert response.status_code == 409
    assert mailbox_writes(h.store, trace_id) == []


def test_deadline_reject(tmp_path: Path) -> None:
    h = Harness(
        tmp_path,
        settings=PipelineSettings(
            reviewers=REVIEWERS, approval_deadline_s=60, approval_on_timeout="reject"
        ),
    )
    trace_id, _ = _paused(h)
    h.clock.advance(61)
    assert h.run_due_tasks() == 1
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "rejected"
    assert h.approval_of(trace_id).decided_by == "deadline"


def test_deadline_escalates_to_backup_who_approves(tmp_path: Path) -> None:
    h = Harness(
        tmp_path,
        settings=PipelineSettings(
            reviewers=REVIEWERS,
            approval_deadline_s=600,
            approval_on_timeout="escalate",
            escalate_to=(BACKUP,),
        ),
    )
    trace_id, first_links = _paused(h)
    h.clock.advance(600)
    assert h.run_due_tasks() == 1
    approval = h.approval_of(trace_id)
    assert approval.round == 1 and approval.status == "pending"
    assert approval.deadline == pytest.approx(h.clock.now() + 600)
    backup_links = [link for link in h.links(approval.approval_id) if link.to == BACKUP]
    assert len(backup_links) == 1
    assert [t.name for t in h.tasks.pending()] == [f"{approval.approval_id}-d1"]  # type: ignore[attr-defined]
    # The first reviewers' links expired with the first deadline.
    assert h.client.get(first_links[0].path).status_code == 410
    response = h.client.post(f"/a/{approval.approval_id}", data=h.form(backup_links[0], "approve"))
    assert response.status_code == 200
    checkpoint = h.store.get_trace(trace_id)
    assert checkpoint is not None and checkpoint.status == "done"
    assert checkpoint.state["dispatch"]["approved_by"] == BACKUP
    # The decision deleted the second round's deadline task once its resume was out.
    assert h.tasks.pending() == []  # type: ignore[attr-defined]
    h.clock.advance(600)
    assert h.run_due_tasks() == 0
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]


def test_timeout_before_the_deadline_reschedules_and_changes_nothing(h: Harness) -> None:
    trace_id, _ = _paused(h)
    approval = h.approval_of(trace_id)
    before = h.snapshot(trace_id)
    response = h.client.post("/timeout", json={"approval_id": approval.approval_id})
    assert response.status_code == 200 and response.get_json()["action"] == "rescheduled"
    after = h.snapshot(trace_id)
    assert after["trace"] == before["trace"] and after["approval"] == before["approval"]


def test_timeout_after_a_decision_does_nothing(h: Harness) -> None:
    trace_id, links = _paused(h)
    h.client.post(f"/a/{links[0].approval_id}", data=h.form(links[0], "approve"))
    h.clock.advance(3600)
    # A task delivered anyway (its delete failed, or it was on its way) changes nothing.
    response = h.client.post("/timeout", json={"approval_id": links[0].approval_id})
    assert response.status_code == 200 and response.get_json()["action"] == "none"
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]
    assert len(mailbox_writes(h.store, trace_id)) == 1


def test_a_decision_deletes_its_deadline_task_after_publishing_the_resume(h: Harness) -> None:
    trace_id, links = _paused(h)
    approval_id = links[0].approval_id
    order: list[str] = []
    resume, cancel = h.service.resume, h.tasks.cancel

    def resumed(*args: Any) -> Any:
        order.append("resume")
        return resume(*args)

    def cancelled(name: str) -> bool:
        order.append(f"cancel {name}")
        return cancel(name)

    h.service.resume = resumed  # type: ignore[assignment]
    h.tasks.cancel = cancelled  # type: ignore[method-assign]
    h.service.decisions.decide(approval_id, links[0].token, "approve")
    assert order == ["resume", f"cancel {approval_id}-d0"]
    assert h.tasks.pending() == []  # type: ignore[attr-defined]
    h.drain()
    h.clock.advance(3600)
    assert h.run_due_tasks() == 0
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]
    # A refused decision deletes nothing (it publishes nothing new either).
    assert (
        h.client.post(f"/a/{approval_id}", data={"form": "x", "decision": "approve"}).status_code
        == 403
    )
    assert order == ["resume", f"cancel {approval_id}-d0"]


def test_a_failed_delete_of_the_deadline_task_is_harmless(h: Harness) -> None:
    trace_id, links = _paused(h)

    def broken(name: str) -> bool:
        raise ConnectionError("cloud tasks down")

    h.tasks.cancel = broken  # type: ignore[method-assign]
    response = h.client.post(f"/a/{links[0].approval_id}", data=h.form(links[0], "approve"))
    assert response.status_code == 200
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]
    h.clock.advance(3600)
    assert h.run_due_tasks() == 1  # the task stayed, and finds the approval decided
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]
    assert len(mailbox_writes(h.store, trace_id)) == 1


def test_lost_resume_is_published_by_the_deadline_task(h: Harness) -> None:
    trace_id, links = _paused(h)
    resume = h.service.resume
    h.service.resume = lambda *a: (_ for _ in ()).throw(ConnectionError("pubsub down"))  # type: ignore[assignment]
    with pytest.raises(ConnectionError):
        h.service.decisions.decide(links[0].approval_id, links[0].token, "approve")
    assert h.store.get_trace(trace_id).status == "waiting"  # type: ignore[union-attr]
    # The publish failed: the deadline task that repairs it is not deleted.
    assert [t.name for t in h.tasks.pending()] == [f"{links[0].approval_id}-d0"]  # type: ignore[attr-defined]
    h.service.resume = resume  # type: ignore[method-assign]
    h.clock.advance(3600)
    h.run_due_tasks()
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]
    assert len(mailbox_writes(h.store, trace_id)) == 1


# --- resuming: the trace says whether a resume must still go out ----------------------


def _writes(h: Harness, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the store writes from now on (directly or in a transaction)."""
    written: list[str] = []
    run_transaction, put = h.store.run_transaction, h.store.set

    class Spy:
        def __init__(self, tx: Any) -> None:
            self._tx = tx

        def __getattr__(self, name: str) -> Any:
            return getattr(self._tx, name)

        def set(self, path: str, doc: dict[str, Any]) -> None:
            written.append(path)
            self._tx.set(path, doc)

    def put_spied(path: str, doc: dict[str, Any]) -> None:
        written.append(path)
        put(path, doc)

    monkeypatch.setattr(
        h.store, "run_transaction", lambda fn: run_transaction(lambda tx: fn(Spy(tx)))
    )
    monkeypatch.setattr(h.store, "set", put_spied)
    return written


def test_a_decision_writes_its_approval_once_and_nothing_notes_the_resume(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id, links = _paused(h)
    written = _writes(h, monkeypatch)
    h.service.decisions.decide(links[0].approval_id, links[0].token, "approve")
    assert written.count(f"approvals/{links[0].approval_id}") == 1  # no resumed_at write
    h.drain()
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]


def test_a_touch_republishes_the_resume_only_while_the_trace_waits_on_its_approval(
    h: Harness,
) -> None:
    trace_id, links = _paused(h)
    bus = h.runtime.bus
    decided = h.service.decisions.decide(links[0].approval_id, links[0].token, "approve")
    assert len(bus) == 1  # type: ignore[arg-type]
    h.service.decisions.publish_resume(decided)  # a touch while the resume is on its way
    assert len(bus) == 2  # type: ignore[arg-type]
    h.drain()
    assert h.store.get_trace(trace_id).status == "done"  # type: ignore[union-attr]
    assert len(mailbox_writes(h.store, trace_id)) == 1  # the runtime dropped the duplicate
    h.service.decisions.publish_resume(h.approval_of(trace_id))  # the trace moved past it
    assert len(bus) == 0  # type: ignore[arg-type]


def test_a_resume_of_another_approval_is_not_published_to_a_waiting_trace(h: Harness) -> None:
    trace_id, _ = _paused(h)
    earlier = {**resume_of(h.approval_of(trace_id).decided("approve", REVIEWERS[0], 0.0))}
    earlier["approval_id"] = "an-earlier-pause-of-the-trace"
    with pytest.raises(RejectedEnvelope):
        h.runtime.resume(trace_id, earlier)
    assert len(h.runtime.bus) == 0  # type: ignore[arg-type]


# --- JSON API --------------------------------------------------------------------------


def test_json_api_reads_and_decides_with_the_token(h: Harness) -> None:
    trace_id, links = _paused(h)
    auth = {"Authorization": f"Bearer {links[0].token}"}
    doc = h.client.get(f"/api/approvals/{links[0].approval_id}", headers=auth).get_json()
    assert doc["status"] == "pending" and doc["choices"] == ["approve", "reject"]
    assert doc["payload_hash"] == payload_hash(doc["payload"])
    assert h.client.get(f"/api/approvals/{links[0].approval_id}").status_code == 400
    response = h.client.post(
        f"/api/approvals/{links[0].approval_id}/decision",
        json={"decision": "approve", "edit": {"draft": "Short and sweet."}},
        headers=auth,
    )
    assert response.status_code == 200 and response.get_json()["edited"] is True
    (draft,) = mailbox_writes(h.store, trace_id)
    assert draft["body"] == "Short and sweet."
    again = h.client.post(
        f"/api/approvals/{links[0].approval_id}/decision", json={"decision": "reject"}, headers=auth
    )
    assert again.status_code == 409 and again.get_json()["decided_by"] == links[0].to


def test_pending_list_needs_the_api_key(h: Harness) -> None:
    trace_id, links = _paused(h)
    assert h.client.get("/api/pending").status_code == 401
    assert (
        h.client.get(
            "/api/pending", headers={"Authorization": f"Bearer {links[0].token}"}
        ).status_code
        == 401
    )
    key = {"Authorization": "Bearer " + "k" * 40}
    items = h.client.get(f"/api/pending?reviewer={REVIEWERS[0]}", headers=key).get_json()["pending"]
    assert [i["trace_id"] for i in items] == [trace_id]
    assert (
        h.client.get("/api/pending?reviewer=nobody@x.io", headers=key).get_json()["pending"] == []
    )
    # A chat integration decides for a named reviewer with the key.
    response = h.client.post(
        f"/api/approvals/{links[0].approval_id}/decision",
        json={"decision": "reject", "reviewer": REVIEWERS[1]},
        headers=key,
    )
    assert response.status_code == 200 and response.get_json()["decided_by"] == REVIEWERS[1]
    outsider = h.client.post(
        f"/api/approvals/{links[0].approval_id}/decision",
        json={"decision": "approve", "reviewer": "mallory@evil.io"},
        headers=key,
    )
    # Decided already: only "already decided" can come back, whoever is named.
    assert outsider.status_code == 409


def test_a_failed_api_key_call_mints_no_token(h: Harness) -> None:
    trace_id, links = _paused(h)
    key = {"Authorization": "Bearer " + "k" * 40}
    before = h.snapshot(trace_id)
    url = f"/api/approvals/{links[0].approval_id}/decision"
    refused = [
        ({"decision": "approve", "reviewer": "mallory@evil.io"}, 403),
        ({"decision": "maybe", "reviewer": REVIEWERS[0]}, 400),
        ({"decision": "approve", "reviewer": REVIEWERS[0], "edit": {"to": ["a@x.test"]}}, 400),
        ({"decision": "approve"}, 400),
    ]
    for body, status in refused:
        response = h.client.post(url, json=body, headers=key)
        assert response.status_code == status, (body, response.get_json())
    assert (
        h.client.post("/api/approvals/nope-1/decision", json=refused[0][0], headers=key).status_code
        == 404
    )
    assert h.snapshot(trace_id) == before
    # A good call decides without a token either.
    assert (
        h.client.post(
            url, json={"decision": "reject", "reviewer": REVIEWERS[0]}, headers=key
        ).status_code
        == 200
    )
    assert h.store.list("approval_tokens") == before["tokens"]


def test_tokens_carry_256_random_bits_and_only_their_sha256_is_stored(h: Harness) -> None:
    import base64

    from inboxflow.approvals.records import new_token

    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200
    for token in tokens:
        assert len(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))) == 32
    _, links = _paused(h)
    stored = dict(h.store.list("approval_tokens"))
    assert sorted(stored) == sorted(
        hashlib.sha256(link.token.encode()).hexdigest() for link in links
    )
    everything = json.dumps(
        [h.store.list(c) for c in ("approvals", "approval_tokens", "effects", "outbox")]
    )
    assert not any(link.token in everything for link in links)


def test_issue_link_refuses_an_address_that_is_not_a_reviewer(h: Harness) -> None:
    from inboxflow.approvals.errors import ApprovalError

    trace_id, _ = _paused(h)
    approval = h.approval_of(trace_id)
    before = h.store.list("approval_tokens")
    for outsider in ("mallory@evil.io", REVIEWERS[0].upper(), "", BACKUP):
        with pytest.raises(ApprovalError) as refused:
            h.service.tokens.issue_link(approval, outsider)
        assert refused.value.status == 403
    assert h.store.list("approval_tokens") == before


def test_token_hash_is_sha256() -> None:
    assert token_hash("abc") == hashlib.sha256(b"abc").hexdigest()


# --- the review form's token ---------------------------------------------------------------


def test_the_review_form_takes_a_short_lived_form_token_not_the_links_token(h: Harness) -> None:
    trace_id, links = _paused(h)
    before = h.snapshot(trace_id)
    path = f"/a/{links[0].approval_id}"
    # The link's token posted directly is no form token; a forged one is refused like a bad link.
    raw = h.client.post(path, data={"token": links[0].token, "decision": "approve"})
    assert raw.status_code == 400
    assert (
        h.client.post(path, data={"form": links[0].token, "decision": "approve"}).status_code == 403
    )
    form = h.form(links[0], "approve")
    token_id, expires, mac = form["form"].split(".")
    assert token_id == token_hash(links[0].token) and links[0].token not in form["form"]
    assert int(expires) == int(h.clock.now() + FORM_TOKEN_TTL_S)
    forged = {**form, "form": f"{token_id}.{int(expires) + 86400}.{mac}"}
    assert h.client.post(path, data=forged).status_code == 403
    assert (
        h.client.post(path, data={**form, "form": f"{token_id}.{expires}.{mac[:-2]}AA"}).status_code
        == 403
    )
    # Another approval's page: refused with the same answer as a forged link.
    assert h.client.post("/a/nope-1", data=form).status_code == 403
    # Opening pages wrote nothing.
    assert h.snapshot(trace_id) == before
    # A page left open too long: open the link again.
    h.clock.advance(FORM_TOKEN_TTL_S + 1)
    stale = h.client.post(path, data=form)
    assert stale.status_code == 410 and "open the link" in stale.get_data(as_text=True)
    assert h.snapshot(trace_id) == before
    assert h.client.post(path, data=h.form(links[0], "approve")).status_code == 200


def test_every_invalid_token_gets_the_same_answer(h: Harness) -> None:
    _, first_links = _paused(h)
    second = h.approval_of(h.start(sample("15-complaint-exports-broken")))
    pages, messages = set(), set()
    # Another approval's valid token, a forged one, an oversized one: indistinguishable.
    for token in (first_links[0].token, "B" * 43, "x" * 200):
        response = h.client.get(f"/a/{second.approval_id}?t={token}")
        assert response.status_code == 403
        pages.add(response.get_data(as_text=True))
        api = h.client.get(
            f"/api/approvals/{second.approval_id}", headers={"Authorization": f"Bearer {token}"}
        )
        assert api.status_code == 403
        messages.add(api.get_json()["error"])
    posted = h.client.post(f"/a/{second.approval_id}", data=h.form(first_links[0], "approve"))
    assert posted.status_code == 403
    pages.add(posted.get_data(as_text=True))
    assert len(pages) == 1
    assert messages == {"this link is not valid"}


# --- the deadline endpoint's input -------------------------------------------------------------


@pytest.mark.parametrize("hop", [-5, 2, 5, 99999, 10**30, "abc", "1", 1.5, True, None, [1]])
def test_timeout_refuses_a_hop_it_cannot_reach_and_schedules_nothing(h: Harness, hop: Any) -> None:
    trace_id, _ = _paused(h)
    approval = h.approval_of(trace_id)
    before = h.snapshot(trace_id)
    tasks = h.tasks.pending()  # type: ignore[attr-defined]
    response = h.client.post("/timeout", json={"approval_id": approval.approval_id, "hop": hop})
    assert response.status_code == 400, response.data
    assert response.get_json()["error"]
    assert h.tasks.pending() == tasks  # type: ignore[attr-defined]
    assert h.snapshot(trace_id) == before


@pytest.mark.parametrize("body", [[], "x", {"approval_id": 5}, {"approval_id": ["a"]}, {}])
def test_timeout_refuses_a_body_that_is_not_a_call(h: Harness, body: Any) -> None:
    trace_id, _ = _paused(h)
    before = h.snapshot(trace_id)
    response = h.client.post("/timeout", json=body)
    assert response.status_code == 400
    assert h.snapshot(trace_id) == before


# --- browsers from elsewhere, framework errors ---------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://approvals.test.evil.example", "Sec-Fetch-Site": "same-origin"},
    ],
)
def test_a_post_from_another_site_is_refused(h: Harness, headers: dict[str, str]) -> None:
    trace_id, links = _paused(h)
    form = h.form(links[0], "approve")
    before = h.snapshot(trace_id)
    response = h.client.post(f"/a/{links[0].approval_id}", data=form, headers=headers)
    assert response.status_code == 403
    api = h.client.post(
        f"/api/approvals/{links[0].approval_id}/decision",
        json={"decision": "approve"},
        headers={**headers, "Authorization": f"Bearer {links[0].token}"},
    )
    assert api.status_code == 403
    assert h.snapshot(trace_id) == before
    # What Chromium sends for its own form post under Referrer-Policy: no-referrer.
    same = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    assert h.client.post(f"/a/{links[0].approval_id}", data=form, headers=same).status_code == 200


def test_an_unexpected_error_is_a_500_page_with_the_security_headers(h: Harness) -> None:
    _, links = _paused(h)

    def broken(path: str) -> Any:
        raise RuntimeError("secret internals")

    h.store.get = broken  # type: ignore[method-assign]
    response = h.client.get(links[0].path)
    assert response.status_code == 500
    page = response.get_data(as_text=True)
    assert "secret internals" not in page and links[0].token not in page
    assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert response.headers["Cache-Control"] == "no-store"


# --- what approving does ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("auto_send", "name", "label", "headline", "collection"),
    [
        (
            False,
            "15-complaint-exports-broken",
            "Approve and save as draft",
            "saved as a draft",
            "mailbox_drafts",
        ),
        (
            True,
            "15-complaint-exports-broken",
            "Approve and save as draft",
            "saved as a draft",
            "mailbox_drafts",
        ),
        (
            True,
            "10-ambiguous-hotel-group",
            "Approve and send",
            "the reply goes out",
            "mailbox_sent",
        ),
        (
            False,
            "10-ambiguous-hotel-group",
            "Approve and save as draft",
            "saved as a draft",
            "mailbox_drafts",
        ),
    ],
)
def test_the_button_and_the_result_say_what_approving_does(
    tmp_path: Path, auto_send: bool, name: str, label: str, headline: str, collection: str
) -> None:
    settings = PipelineSettings(reviewers=REVIEWERS, approval_deadline_s=3600, auto_send=auto_send)
    h = Harness(tmp_path, settings=settings)
    trace_id = h.start(sample(name))
    links = h.links(h.approval_of(trace_id).approval_id)
    assert links, f"{name} did not pause for a reviewer"
    page = h.client.get(links[0].path).get_data(as_text=True)
    assert f'value="approve">{label}</button>' in page
    message = next(m for m in h.inbox if m["to"] == links[0].to)
    assert label not in message["subject"]
    result = h.client.post(f"/a/{links[0].approval_id}", data=h.form(links[0], "approve"))
    assert result.status_code == 200
    assert headline in result.get_data(as_text=True)
    assert len(mailbox_writes(h.store, trace_id)) == 1
    other = "mailbox_sent" if collection == "mailbox_drafts" else "mailbox_drafts"
    assert len(h.store.list(collection)) == 1 and h.store.list(other) == []

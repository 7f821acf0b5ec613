"""Review decisions by replying to the review email: through the same decision path as the
link (first decision wins), only from a reviewer of that approval, only the first line read."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inboxflow.approvals.errors import AlreadyDecided
from inboxflow.approvals.replies import parse_decision
from inboxflow.approvals.review_mails import review_mail_path
from inboxflow.ingest.claims import message_trace_id
from inboxflow.mail.html_text import reply_text
from inboxflow.mail_stamps import stamped
from tests.harness.mail_auth import auth_line, gmail_fail, gmail_pass
from tests.harness.thread_chat import MAILBOX, PASS, ChatWorld, chat_world, eml

QUOTED = (
    "\r\n\r\nOn Thu, 14 Jan 2027, desk@agency.test wrote:\r\n> {line}\r\n> Open the link to decide."
)


@pytest.fixture
def sqlite_chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatWorld]:
    request: Any = type("Param", (), {"param": "sqlite"})()
    yield from chat_world(request, tmp_path, monkeypatch)


def _waiting_for_review(world: ChatWorld, subject: str = "Car insurance quote") -> tuple[str, Any]:
    trace_id, _ = world.start(subject=subject)
    world.bus.drain()
    return trace_id, world.pending_approval(trace_id)


def _reply(
    world: ChatWorld,
    approval: Any,
    n: int,
    body: str,
    sender: str = "Agent Smith <agent@agency.test>",
    to_reviewer: str = "agent@agency.test",
    headers: str = "",
    authentication: str | None = PASS,
    content_type: str = "text/plain",
    message_id: str | None = None,
) -> tuple[str, Any]:
    """A reply to the review email sent to ``to_reviewer``, from ``sender``, then ingested.

    ``authentication``: the Authentication-Results on top (default: Gmail vouching for the
    sender); ``headers`` come below it; ``message_id``: what the reply answers (default: the
    review email's own Message-ID, as the reviewer received it).
    """
    message_id = message_id or world.review_message_id(approval, to_reviewer)
    raw = eml(
        n,
        sender=sender,
        subject="Re: Check the plan: Car insurance quote",
        body=body,
        headers=f"In-Reply-To: {message_id}\r\nReferences: {message_id}\r\n{headers}",
        authentication=authentication,
        content_type=content_type,
    )
    gmail_id, _ = world.deliver(raw)
    return gmail_id, world.notify()


def test_an_authorised_approve_decides_and_resumes_through_the_approval_service(
    chat: ChatWorld,
) -> None:
    trace_id, approval = _waiting_for_review(chat)
    gmail_id, report = _reply(chat, approval, 2, "Approve" + QUOTED.format(line="reject: no"))
    assert report.review_replies == [approval.approval_id]
    assert report.started == [] and report.queued == []  # the reply starts no trace
    decided = chat.approvals.get(approval.approval_id)
    assert decided is not None and decided.status == "decided"
    assert (decided.decision, decided.decided_by) == ("approve", "agent@agency.test")
    assert len(chat.bus) == 1  # its resume, not run yet
    claim = chat.claim(gmail_id)
    assert claim["state"] == "review_reply" and claim["review_outcome"] == "decided"
    chat.bus.drain()
    resumed = chat.trace(trace_id)
    assert resumed.state["decision"] == "approve" and resumed.pause["kind"] == "customer_reply"  # type: ignore[index]
    assert message_trace_id(MAILBOX, gmail_id) not in chat.traces()


def test_an_authorised_reject_carries_its_comment(sqlite_chat: ChatWorld) -> None:
    trace_id, approval = _waiting_for_review(sqlite_chat)
    _reply(sqlite_chat, approval, 2, "Reject: VIN is incorrect" + QUOTED.format(line="approve"))
    decided = sqlite_chat.approvals.get(approval.approval_id)
    assert decided is not None and decided.decision == "reject"
    assert decided.comment == "VIN is incorrect"
    sqlite_chat.bus.drain()
    done = sqlite_chat.trace(trace_id)
    assert done.status == "rejected" and done.state["comment"] == "VIN is incorrect"
    assert done.state["decided_by"] == "agent@agency.test"


def test_a_reviewer_listed_in_another_case_decides_as_listed(sqlite_chat: ChatWorld) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    _reply(
        sqlite_chat,
        approval,
        2,
        "Accept.",
        sender="lead@agency.test",
        to_reviewer="Lead@Agency.test",
    )
    decided = sqlite_chat.approvals.get(approval.approval_id)
    assert decided is not None and decided.decided_by == "Lead@Agency.test"


def test_a_reply_from_someone_who_is_not_a_reviewer_changes_nothing_and_says_why(
    sqlite_chat: ChatWorld,
) -> None:
    trace_id, approval = _waiting_for_review(sqlite_chat)
    gmail_id, report = _reply(
        sqlite_chat, approval, 2, "approve", sender="Mallory <mallory@elsewhere.test>"
    )
    still = sqlite_chat.approvals.get(approval.approval_id)
    assert still is not None and still.status == "pending"
    claim = sqlite_chat.claim(gmail_id)
    assert claim["state"] == "review_reply" and claim["approval_id"] == approval.approval_id
    assert claim["review_outcome"] == "not_a_reviewer" and "mallory" in claim["reason"]
    assert report.started == [] and sqlite_chat.trace(trace_id).status == "waiting"


def test_an_automatic_reply_never_decides(sqlite_chat: ChatWorld) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    gmail_id, _ = _reply(
        sqlite_chat,
        approval,
        2,
        "Accepted: I am out of office",
        headers="Auto-Submitted: auto-replied\r\n",
    )
    assert sqlite_chat.claim(gmail_id)["state"] == "blocked"  # loop protection comes first
    still = sqlite_chat.approvals.get(approval.approval_id)
    assert still is not None and still.status == "pending"


@pytest.mark.parametrize(
    "body",
    [
        "Thanks, I will look at it later." + QUOTED.format(line="approve"),
        "> approve\r\n> reject: no",
        "I do not approve",
    ],
)
def test_only_the_first_line_is_read(sqlite_chat: ChatWorld, body: str) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    gmail_id, _ = _reply(sqlite_chat, approval, 2, body)
    still = sqlite_chat.approvals.get(approval.approval_id)
    assert still is not None and still.status == "pending"
    assert sqlite_chat.claim(gmail_id)["review_outcome"] == "not_understood"


def test_a_kind_without_approve_or_reject_is_not_decided_by_email(sqlite_chat: ChatWorld) -> None:
    _, approval = _waiting_for_review(sqlite_chat, subject="Errand: pick up the parcel")
    assert approval.kind == "confirm_only"
    gmail_id, _ = _reply(sqlite_chat, approval, 2, "approve")
    claim = sqlite_chat.claim(gmail_id)
    assert claim["review_outcome"] == "not_understood" and "use the link" in claim["reason"]
    still = sqlite_chat.approvals.get(approval.approval_id)
    assert still is not None and still.status == "pending"


def test_a_duplicate_notification_after_a_crash_decides_once(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id, approval = _waiting_for_review(chat)
    real_finish = chat.ingestor.claims.finish
    crashed: list[Any] = []

    def crash_once(*args: Any, **kwargs: Any) -> None:
        if not crashed:
            crashed.append(args)
            raise RuntimeError("the ingest function died after deciding")
        real_finish(*args, **kwargs)

    monkeypatch.setattr(chat.ingestor.claims, "finish", crash_once)
    with pytest.raises(RuntimeError):
        _reply(chat, approval, 2, "approve")
    first = chat.approvals.get(approval.approval_id)
    assert first is not None and first.decision == "approve"
    report = chat.notify()  # redelivered: the claim is taken over
    assert report.repaired == 1
    again = chat.approvals.get(approval.approval_id)
    assert again is not None and again.decided_at == first.decided_at
    gmail_id = crashed[0][1]
    assert chat.claim(gmail_id)["review_outcome"] == "already_decided"
    assert chat.store.list("failures") == []
    chat.bus.drain()
    assert chat.trace(trace_id).state["decision"] == "approve"
    assert chat.notify().outcome == "stale"


def test_a_crash_between_the_decision_and_its_resume_is_resumed_by_the_redelivery(
    chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decision is stored but its resume never went out: the redelivered reply publishes it
    (as the approval function does on a second POST), not the deadline days later."""
    trace_id, approval = _waiting_for_review(chat)
    real_publish = chat.approvals.decisions.publish_resume
    crashed: list[Any] = []

    def crash_once(decided: Any) -> Any:
        if not crashed:
            crashed.append(decided)
            raise RuntimeError("the ingest function died after storing the decision")
        return real_publish(decided)

    monkeypatch.setattr(chat.approvals.decisions, "publish_resume", crash_once)
    with pytest.raises(RuntimeError):
        _reply(chat, approval, 2, "approve")
    chat.bus.drain()
    stored = chat.approvals.get(approval.approval_id)
    assert stored is not None and stored.decision == "approve"
    assert chat.trace(trace_id).status == "waiting"  # nothing resumed it yet

    chat.notify()  # redelivered: the claim is taken over
    chat.bus.drain()
    resumed = chat.trace(trace_id)
    assert resumed.state["decision"] == "approve" and resumed.pause["kind"] == "customer_reply"  # type: ignore[index]
    again = chat.approvals.get(approval.approval_id)
    assert again is not None and again.decided_at == stored.decided_at  # decided once
    assert chat.store.list("failures") == []


def test_a_reply_after_the_link_was_used_changes_nothing(sqlite_chat: ChatWorld) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    link = sqlite_chat.approvals.tokens.issue_link(approval, "Lead@Agency.test")
    token = link.partition("?t=")[2]
    sqlite_chat.approvals.decisions.decide(
        approval.approval_id, token, "reject", comment="Wrong car"
    )
    gmail_id, _ = _reply(sqlite_chat, approval, 2, "approve")
    claim = sqlite_chat.claim(gmail_id)
    assert claim["review_outcome"] == "already_decided"
    assert "reject by Lead@Agency.test" in claim["reason"]
    decided = sqlite_chat.approvals.get(approval.approval_id)
    assert decided is not None and decided.decision == "reject"
    # ...and the other way round: a link used after the reply is refused (409).
    with pytest.raises(AlreadyDecided):
        sqlite_chat.approvals.decisions.decide(approval.approval_id, token, "approve")


def test_a_link_after_an_email_decision_is_refused(sqlite_chat: ChatWorld) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    token = sqlite_chat.approvals.tokens.issue_link(approval, "agent@agency.test").partition("?t=")[
        2
    ]
    _reply(sqlite_chat, approval, 2, "approve")
    with pytest.raises(AlreadyDecided) as caught:
        sqlite_chat.approvals.decisions.decide(approval.approval_id, token, "reject", comment="no")
    assert caught.value.status == 409


def test_a_reply_after_the_deadline_changes_nothing(sqlite_chat: ChatWorld) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    sqlite_chat.clock.advance(approval.deadline - sqlite_chat.clock.now() + 1)
    gmail_id, _ = _reply(sqlite_chat, approval, 2, "approve")
    assert sqlite_chat.claim(gmail_id)["review_outcome"] == "expired"
    still = sqlite_chat.approvals.get(approval.approval_id)
    assert still is not None and still.status == "pending"


def test_the_review_email_is_recorded_before_it_is_sent(sqlite_chat: ChatWorld) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    stamps = [doc["stamp"] for _, doc in sqlite_chat.store.list("outbox")]
    assert len(stamps) == 2  # one per reviewer
    for stamp in stamps:
        doc = stamped(sqlite_chat.store, stamp)
        assert doc is not None and doc["approval_id"] == approval.approval_id
    # one document per review email: the stamp's own, no second record beside it
    assert sqlite_chat.store.list("review_mails") == []


def test_a_reply_to_a_review_email_recorded_before_the_stamp_held_it_still_decides(
    chat: ChatWorld,
) -> None:
    """Review emails sent before a stamp's document carried the approval were recorded in
    ``review_mails/{stamp}``: a reply to one still leads back to its approval."""
    _, approval = _waiting_for_review(chat)
    for path, doc in chat.store.list("mail_stamps"):
        if doc.get("approval_id"):
            chat.store.set(
                f"mail_stamps/{path}", {k: v for k, v in doc.items() if k != "approval_id"}
            )
            chat.store.set(review_mail_path(doc["stamp"]), {"approval_id": approval.approval_id})
    _, report = _reply(chat, approval, 2, "approve")
    assert report.review_replies == [approval.approval_id]
    decided = chat.approvals.get(approval.approval_id)
    assert decided is not None and decided.decision == "approve"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("approve", ("approve", None)),
        ("  \n\nApprove.\n> reject: x", ("approve", None)),
        ("ACCEPT", ("approve", None)),
        ("\u00a0accept. \nthanks", ("approve", None)),
        ("reject: VIN is incorrect\nmore", ("reject", "VIN is incorrect")),
        ("Reject:wrong address", ("reject", "wrong address")),
        ("REJECT :  ", ("reject", None)),
        # not exactly a command: nothing is decided
        ("Approve? No, wait for the new VIN.", None),
        ("Accepted, but reject: the VIN is wrong", None),
        ("Approves nothing", None),
        ("Approved.", None),
        ("approve!", None),
        ("approve it", None),
        ("I approve", None),
        ("reject", None),
        ("Reject - wrong address", None),
        ("rejection letter", None),
        ("approval pending?", None),
        ("> approve", None),
        ("", None),
    ],
)
def test_parse_decision(text: str, expected: Any) -> None:
    assert parse_decision(text) == expected


# --- who may decide: only a reviewer our receiving server authenticated (issue 25, 1) -----

REVIEWER = "agent@agency.test"
SMITH = f"Agent Smith <{REVIEWER}>"
NOT_AUTHENTICATED = [
    pytest.param(SMITH, None, "", id="no Authentication-Results"),
    pytest.param(
        SMITH,
        "mx.google.com; dkim=none; spf=none smtp.mailfrom=agency.test; "
        "dmarc=none header.from=agency.test",
        "",
        id="dmarc=none",
    ),
    pytest.param(
        SMITH,
        "mx.google.com; dkim=temperror header.d=agency.test; "
        f"spf=temperror smtp.mailfrom={REVIEWER}; dmarc=temperror header.from=agency.test",
        "",
        id="temperror",
    ),
    pytest.param(
        SMITH, "mx.google.com; dmarc=permerror header.from=agency.test", "", id="permerror"
    ),
    pytest.param(SMITH, gmail_fail(REVIEWER), "", id="dmarc=fail"),
    pytest.param(
        SMITH, gmail_fail(REVIEWER), auth_line(gmail_pass(REVIEWER)), id="forged pass below ours"
    ),
    pytest.param(SMITH, gmail_pass(REVIEWER, "mx.evil.example"), "", id="foreign authserv-id"),
    pytest.param(
        SMITH,
        "mx.google.com; spf=softfail (google.com: dmarc=pass header.from=agency.test; "
        "dkim=pass header.d=agency.test) smtp.mailfrom=mallory@evil.example; "
        "dmarc=fail header.from=agency.test",
        "",
        id="pass only inside a comment",
    ),
    pytest.param(
        SMITH,
        "mx.google.com; dkim=pass header.i=@agency-test.20230601.gappssmtp.com; "
        "spf=pass smtp.mailfrom=bounce@evil.example; dmarc=none header.from=agency.test",
        "",
        id="dkim and spf pass, not aligned",
    ),
    pytest.param(
        f"{REVIEWER}, mallory@evil.example", gmail_pass(REVIEWER), "", id="two From addresses"
    ),
    pytest.param("Agent Smith <agent>", gmail_pass(REVIEWER), "", id="From without domain"),
    pytest.param(
        "undisclosed-recipients:;",
        gmail_pass(REVIEWER),
        f"Sender: {SMITH}\r\n",
        id="Sender fallback",
    ),
    pytest.param(
        "undisclosed-recipients:;",
        gmail_pass(REVIEWER),
        f"Return-Path: <{REVIEWER}>\r\n",
        id="Return-Path fallback",
    ),
]


@pytest.mark.parametrize(("sender", "authentication", "headers"), NOT_AUTHENTICATED)
def test_a_reply_the_receiving_server_did_not_authenticate_decides_nothing_and_is_recorded(
    sqlite_chat: ChatWorld, sender: str, authentication: str | None, headers: str
) -> None:
    trace_id, approval = _waiting_for_review(sqlite_chat)
    message_id = sqlite_chat.review_message_id(approval, REVIEWER)
    raw = eml(
        2,
        sender=sender,
        subject="Re: Check the plan: Car insurance quote",
        body="approve",
        headers=f"In-Reply-To: {message_id}\r\nReferences: {message_id}\r\n{headers}",
        authentication=authentication,
        # a bare local part was qualified with the Message-ID's domain: the attacker's choice
        message_id="<forged-1@agency.test>",
    )
    gmail_id, _ = sqlite_chat.deliver(raw)
    report = sqlite_chat.notify()
    assert report.review_replies == [approval.approval_id]
    still = sqlite_chat.approvals.get(approval.approval_id)
    assert still is not None and still.status == "pending"
    claim = sqlite_chat.claim(gmail_id)
    assert claim["review_outcome"] == "not_authenticated", claim
    assert "not authenticated" in claim["reason"]
    (failure,) = [doc for _, doc in sqlite_chat.store.list("failures")]
    assert failure["trace_id"] == trace_id and approval.approval_id in failure["reason"]
    assert "not_authenticated" in failure["reason"] and "review link" in failure["reason"]
    # the reviewer can still decide by link
    token = sqlite_chat.approvals.tokens.issue_link(approval, REVIEWER).partition("?t=")[2]
    decided = sqlite_chat.approvals.decisions.decide(approval.approval_id, token, "approve")
    assert decided.status == "decided" and decided.decided_by == REVIEWER


def test_a_reviewer_authenticated_by_aligned_spf_alone_decides(sqlite_chat: ChatWorld) -> None:
    """A colleague in the same Workspace domain before DKIM is turned on: Google signs with a
    gappssmtp.com key (not aligned), SPF passes for the domain."""
    _, approval = _waiting_for_review(sqlite_chat)
    verdict = (
        "mx.google.com; dkim=pass header.i=@agency-test.20230601.gappssmtp.com "
        "header.s=20230601 header.b=Zm9v; spf=pass (google.com: domain of agent@agency.test "
        "designates 209.85.220.41 as permitted sender) smtp.mailfrom=agent@agency.test"
    )
    _reply(sqlite_chat, approval, 2, "approve", authentication=verdict)
    decided = sqlite_chat.approvals.get(approval.approval_id)
    assert decided is not None and decided.decided_by == REVIEWER


def test_a_review_message_id_cannot_be_computed_from_the_trace(sqlite_chat: ChatWorld) -> None:
    """A customer of the trace knows its id (it used to be in X-Inboxflow-Trace): the review
    email's Message-ID carries a random stamp, so a reply to a computed id answers nothing."""
    trace_id, approval = _waiting_for_review(sqlite_chat)
    keys = [doc["trace_key"] for _, doc in sqlite_chat.store.list("outbox")]
    computed = [
        f"<inboxflow.{hashlib.sha256(key.encode()).hexdigest()[:32]}@agency.test>" for key in keys
    ]
    real = sqlite_chat.review_message_id(approval, REVIEWER)
    assert real not in computed and trace_id not in real
    for n, message_id in enumerate(computed, start=2):
        _, report = _reply(sqlite_chat, approval, n, "approve", message_id=message_id)
        assert report.review_replies == []
    still = sqlite_chat.approvals.get(approval.approval_id)
    assert still is not None and still.status == "pending"


# --- what a reply says: exactly a command on its own first line (issue 25, 2) -------------

OLD_NOTIFICATION = (
    "Approve a reply: inboxflow waits for your decision.<br><br>Review, edit and decide here:"
    "<br>https://approvals.example/a/x?t=redacted"
)
GMAIL_QUOTE = (
    '<div dir="ltr">{reply}</div><br><div class="gmail_quote"><div dir="ltr" '
    'class="gmail_attr">On Thu, 14 Jan 2027 at 09:12, desk@agency.test wrote:<br></div>'
    '<blockquote class="gmail_quote" style="margin:0 0 0 .8ex">{quoted}</blockquote></div>'
)
OUTLOOK_QUOTE = (
    '<html><body><div>{reply}</div><div id="appendonsend"></div>'
    '<hr style="display:inline-block;width:98%" tabindex="-1">'
    '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri"><b>From:</b> desk@agency.test<br>'
    "<b>Sent:</b> Thursday, January 14, 2027 9:12 AM</font></div><div>{quoted}</div></body></html>"
)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("Approve? No, wait for the new VIN.", "text/plain"),
        ("Accepted, but reject: the VIN is wrong", "text/plain"),
        ("Approves nothing", "text/plain"),
        # an HTML reply quoting the review email, no "On ... wrote:" line, nothing written
        (f"<html><body><div><br></div><div>{OLD_NOTIFICATION}</div></body></html>", "text/html"),
        (GMAIL_QUOTE.format(reply="<br>", quoted="approve"), "text/html"),
        (OUTLOOK_QUOTE.format(reply="&nbsp;", quoted="Approve"), "text/html"),
    ],
)
def test_a_reply_not_understood_decides_nothing_and_the_reviewer_is_told_once(
    sqlite_chat: ChatWorld, body: str, content_type: str
) -> None:
    trace_id, approval = _waiting_for_review(sqlite_chat)
    gmail_id, _ = _reply(sqlite_chat, approval, 2, body, content_type=content_type)
    still = sqlite_chat.approvals.get(approval.approval_id)
    assert still is not None and still.status == "pending"
    claim = sqlite_chat.claim(gmail_id)
    assert claim["review_outcome"] == "not_understood"
    assert any("not_understood" in doc["reason"] for _, doc in sqlite_chat.store.list("failures"))

    def told() -> list[dict[str, Any]]:
        return [
            doc
            for _, doc in sqlite_chat.store.list("outbox")
            if doc["to"] == REVIEWER and doc["subject"].startswith("Not decided")
        ]

    (help_mail,) = told()
    assert '"approve"' in help_mail["text"] and "reject: what is wrong" in help_mail["text"]
    assert "/a/" in help_mail["text"]  # a fresh link (redacted in the stored copy)
    # another reply not understood, and a redelivered notification: still one
    _reply(sqlite_chat, approval, 3, "yes please")
    assert sqlite_chat.notify().outcome == "stale"
    assert len(told()) == 1
    # a reply to the help email itself is read as a reply to the review
    stamp = help_mail["stamp"]
    _reply(sqlite_chat, approval, 4, "approve", message_id=f"<inboxflow.{stamp}@agency.test>")
    decided = sqlite_chat.approvals.get(approval.approval_id)
    assert decided is not None and decided.decision == "approve"
    assert sqlite_chat.trace(trace_id).status in ("running", "waiting")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (GMAIL_QUOTE.format(reply="Approve", quoted="reject: no"), ("approve", None)),
        (
            OUTLOOK_QUOTE.format(reply="Reject: the VIN is wrong", quoted="Approve"),
            ("reject", "the VIN is wrong"),
        ),
        ('<blockquote type="cite">reject: no</blockquote>', None),
    ],
)
def test_html_replies_are_read_without_their_quoted_parts(
    sqlite_chat: ChatWorld, body: str, expected: Any
) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    gmail_id, _ = _reply(sqlite_chat, approval, 2, body, content_type="text/html")
    stored = sqlite_chat.approvals.get(approval.approval_id)
    assert stored is not None
    if expected is None:
        assert stored.status == "pending"
        assert sqlite_chat.claim(gmail_id)["review_outcome"] == "not_understood"
    else:
        assert (stored.decision, stored.comment) == expected


def test_the_review_email_does_not_open_with_a_command_word(sqlite_chat: ChatWorld) -> None:
    _waiting_for_review(sqlite_chat)
    for _, doc in sqlite_chat.store.list("outbox"):
        for text in (doc["text"], reply_text(doc["html"])):
            first = next(line for line in text.splitlines() if line.strip())
            assert not re.match(r"\s*(approve|accept|reject)", first, re.IGNORECASE), first
            assert parse_decision(text) is None


def test_a_refused_reply_redelivered_after_a_crash_is_recorded_once(
    sqlite_chat: ChatWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, approval = _waiting_for_review(sqlite_chat)
    real_finish = sqlite_chat.ingestor.claims.finish
    crashed: list[Any] = []

    def crash_once(*args: Any, **kwargs: Any) -> None:
        if not crashed:
            crashed.append(args)
            raise RuntimeError("the ingest function died after recording the refusal")
        real_finish(*args, **kwargs)

    monkeypatch.setattr(sqlite_chat.ingestor.claims, "finish", crash_once)
    with pytest.raises(RuntimeError):
        _reply(sqlite_chat, approval, 2, "Approves nothing")
    assert sqlite_chat.notify().repaired == 1  # redelivered: the claim is taken over
    assert len(sqlite_chat.store.list("failures")) == 1
    assert len([d for _, d in sqlite_chat.store.list("outbox") if d["to"] == REVIEWER]) == 2

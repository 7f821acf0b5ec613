"""The support desk's customer when a mail is forwarded (issue 37): a colleague's authenticated
manual forward is the writer's ticket (CRM lookup, ticket owner, the reply's recipient); the
same forward from an unauthenticated or outside sender stays the forwarder's, with the reason
recorded; a configured forwarding source counts like a colleague; a hostile block never
becomes the recipient (the no-relay rule: the desk is no way to email a third party)."""

from __future__ import annotations

import pytest

from inboxflow.graphs.support.settings import SupportSettings
from tests.harness.mail_auth import gmail_fail, gmail_pass
from tests.harness.support import MAILBOX, build, email, run, tickets

COLLEAGUE = "maya.chen@brightlane.io"
PARTNER = "desk@partner-shop.example"
SAM = "sam.okafor@example.org"  # cus_free_sam in the sample CRM
VICTIM = "victim@bank.example"


def _forward(sender: str, verdict: str | None, writer: str = f"Sam Okafor <{SAM}>") -> dict:
    body = (
        "Sam asked this on the phone too, can you answer him?\n\n"
        "---------- Forwarded message ---------\n"
        f"From: {writer}\nDate: Thu, 14 Jan 2027 at 08:12\n"
        f"Subject: How do I export a dashboard to PDF?\nTo: <{COLLEAGUE}>\n\n"
        "Hi,\nHow do I export a dashboard to PDF? Is there a way to schedule it?\nThanks, Sam\n"
    )
    headers = {} if verdict is None else {"authentication-results": verdict}
    return {
        "sender": sender,
        "subject": "Fwd: How do I export a dashboard to PDF?",
        "body": body,
        "headers": headers,
        "from_address": sender,
    }


def _state(tmp_path, message: dict, **settings) -> tuple[dict, object]:
    runtime = build(tmp_path)
    runtime.ports.graph_settings.use("support", SupportSettings(**settings))
    state = run(
        runtime,
        email(
            message["sender"],
            message["subject"],
            message["body"],
            "fwd-1@brightlane.io",
            headers=message["headers"],
            from_address=message["from_address"],
        ),
    )
    return state, runtime


def _replies(runtime) -> list[str]:
    workspace = runtime.ports.workspace
    return [m["to"] for m in workspace.drafts() + workspace.sent()]


def test_a_colleagues_authenticated_forward_is_the_writers_ticket(tmp_path) -> None:
    state, runtime = _state(tmp_path, _forward(COLLEAGUE, gmail_pass(COLLEAGUE)))
    assert state["customer"]["customer_id"] == "cus_free_sam" and state["customer_known"]
    assert state["writer"]["address"] == SAM
    assert state["sender"]["forward"].startswith(
        f"the forwarded message's writer, forwarded by {COLLEAGUE}"
    )
    [ticket] = tickets(runtime, "cus_free_sam")
    assert ticket.customer_email == SAM
    assert state["act"]["status"] == "drafted" and _replies(runtime) == [SAM]


@pytest.mark.parametrize(
    ("sender", "verdict", "why"),
    [
        (COLLEAGUE, None, "the forwarder is not authenticated"),
        (COLLEAGUE, gmail_fail(COLLEAGUE), "the forwarder is not authenticated"),
        (COLLEAGUE, gmail_pass(COLLEAGUE, "mx.evil.example"), "not authenticated"),
        (PARTNER, gmail_pass(PARTNER), "neither the mailbox's organisation"),
    ],
)
def test_the_same_forward_from_an_unauthenticated_or_outside_sender_is_the_forwarders(
    tmp_path, sender: str, verdict: str | None, why: str
) -> None:
    state, runtime = _state(tmp_path, _forward(sender, verdict))
    assert state["writer"] is None
    assert state["customer"]["email"] == sender and state["customer_known"] is False
    assert why in state["sender"]["forward"]
    assert tickets(runtime, "cus_free_sam") == []
    assert SAM not in _replies(runtime)


def test_a_configured_forwarding_source_is_read_like_a_colleague(tmp_path) -> None:
    state, runtime = _state(tmp_path, _forward(PARTNER, gmail_pass(PARTNER)), forwarders=[PARTNER])
    assert state["customer"]["customer_id"] == "cus_free_sam"
    assert _replies(runtime) == [SAM]


@pytest.mark.parametrize(
    "writer",
    [
        f"Sam <{SAM}>, {VICTIM}",
        f'"{VICTIM}" <mallory@evil.example>',
        f"Sam <{SAM}\r\nBcc: {VICTIM}>",
        f"Support <{MAILBOX}>",
        "Billing <billing@brightlane.io>",
        f"Sam\u2028Bcc: {VICTIM} <{SAM}>",
    ],
)
def test_a_hostile_block_never_becomes_the_recipient(tmp_path, writer: str) -> None:
    state, runtime = _state(
        tmp_path, _forward(COLLEAGUE, gmail_pass(COLLEAGUE), writer), auto_send=True
    )
    recipients = _replies(runtime)
    assert VICTIM not in recipients and MAILBOX not in recipients
    assert all("brightlane.io" not in r or r == COLLEAGUE for r in recipients)
    assert state["customer"]["email"] != VICTIM
    assert not any(c in (state.get("writer") or {}).get("name", "") for c in "\r\n")


def test_an_unreviewed_send_to_a_forwards_writer_waits_for_a_person(tmp_path) -> None:
    # the writer is no authenticated sender: with auto_send, the no-relay rule holds the reply
    state, runtime = _state(
        tmp_path,
        _forward(COLLEAGUE, gmail_pass(COLLEAGUE)),
        auto_send=True,
        auto_respond_confidence=0.0,
    )
    assert runtime.ports.workspace.sent() == []
    assert state["status"] == "waiting"

"""Whose mail a manual forward is (issue 37): the forwarded message's writer is the customer
only when an authenticated sender of the mailbox's organisation, or a configured forwarding
source, forwarded it; otherwise the forwarder stays the customer and the reason says why.

Forwards are generated (Gmail, Outlook, Apple Mail by ten languages by HTML or plain by a note
of any length above the block or none) by ``test_forwarded.forwards``; the forwarder is drawn
among the kinds the rule tells apart. Hostile blocks never make their address the customer."""

from __future__ import annotations

import html
from dataclasses import replace
from email.message import EmailMessage

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from inboxflow.mail import Email, email_from_eml, email_from_json
from inboxflow.mail.addresses import same_address
from inboxflow.mail.forward_writer import read_customer
from tests.harness.mail_auth import gmail_fail, gmail_pass
from tests.unit.mail.test_forwarded import _SENTENCE, Generated, forwards

MAILBOX = "desk@brightlane.io"
COLLEAGUE = "maya.chen@brightlane.io"
SOURCE = "info@partner-shop.example"
OUTSIDER = "someone@elsewhere.example"

FORWARDERS = {
    # kind: (From, Authentication-Results or None, the writer is taken)
    "colleague": (COLLEAGUE, gmail_pass(COLLEAGUE), True),
    "source": (SOURCE, gmail_pass(SOURCE), True),
    "outsider": (OUTSIDER, gmail_pass(OUTSIDER), False),
    "forged colleague": (COLLEAGUE, gmail_fail(COLLEAGUE), False),
    "no verdict": (COLLEAGUE, None, False),
    "another server's verdict": (COLLEAGUE, gmail_pass(COLLEAGUE, "mx.evil.example"), False),
}


def addressed(sent: Generated, recipient: str) -> Generated:
    """``sent`` with its forwarded message written to ``recipient`` (in a hypothesis test)."""
    assume(sent.text.count(sent.to) == 1 and sent.html.count(sent.to) == 1)
    return replace(
        sent,
        text=sent.text.replace(sent.to, recipient),
        html=sent.html.replace(sent.to, recipient),
        to=recipient,
    )


RECIPIENTS = {
    # the forwarded message's To: (address, it is ours)
    "the forwarder": (None, True),
    "the mailbox": (MAILBOX, True),
    "the organisation": ("sales@brightlane.io", True),
    "someone else": ("", False),
}


def forward_eml(
    sent: Generated,
    note: str,
    forwarder: str,
    verdict: str | None,
    html_only: bool,
    *,
    mailbox: str = MAILBOX,
    display: str = "Forwarder",
    message_id: str = "<fwd-1@brightlane.io>",
) -> bytes:
    """A manual forward of ``sent`` by ``forwarder`` to ``mailbox``, ``note`` above the block,
    with the ``Authentication-Results`` ``verdict`` (None: no verdict), HTML only or both."""
    message = EmailMessage()
    if verdict is not None:
        message["Authentication-Results"] = verdict
    message["From"] = f"{display} <{forwarder}>"
    message["To"] = mailbox
    message["Subject"] = sent.subject
    message["Message-ID"] = message_id
    page = f"<div>{html.escape(note)}</div><br>{sent.html}" if note else sent.html
    if html_only:
        message.set_content(page, subtype="html")
    else:
        message.set_content(f"{note}\n\n{sent.text}" if note else sent.text)
        message.add_alternative(page, subtype="html")
    return bytes(message)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    forwards(),
    st.sampled_from(sorted(FORWARDERS)),
    st.sampled_from(sorted(RECIPIENTS)),
    st.booleans(),
    st.lists(_SENTENCE, max_size=3).map(" ".join),
)
def test_the_writer_is_the_customer_only_when_a_trusted_forwarder_forwarded_it(
    sent: Generated, kind: str, recipient: str, html_only: bool, note: str
) -> None:
    """Taken only from a trusted forwarder, for a message written to us."""
    assume(sent.to != sent.address)
    assume(not sent.address.endswith(("brightlane.io", "partner-shop.example")))
    assume(not sent.to.endswith(("brightlane.io", "partner-shop.example")))
    forwarder, verdict, trusted = FORWARDERS[kind]
    to, ours = RECIPIENTS[recipient]
    sent = addressed(sent, forwarder if to is None else to or sent.to)
    taken = trusted and ours
    email = email_from_eml(forward_eml(sent, note, forwarder, verdict, html_only))
    reading = read_customer(email, [SOURCE])
    assert reading.taken is taken, (kind, reading.reason)
    if taken:
        assert same_address(reading.customer.address, sent.address)
        assert reading.customer.name == sent.name
        assert reading.forwarded_by == forwarder
        assert reading.forward is not None
        # what is judged is the forwarded message: no header block, no cover note
        assert reading.forward.text.strip() == sent.body
        assert reading.forward.subject == sent.original_subject
        if note:
            assert note in " ".join(reading.forward.note.split())
        assert sent.address not in reading.forward.note  # nor the header block
    else:
        assert reading.customer.address == forwarder and reading.forward is None
        assert reading.reason.startswith("the forwarded message's writer")
        if trusted:
            assert "the forwarded message was not written to us" in reading.reason
    # trust stays with From, whoever the customer is
    assert email.from_address == forwarder


def _forward(from_value: str, sender: str = COLLEAGUE) -> Email:
    """A colleague's authenticated Gmail forward whose block's From is ``from_value``."""
    return json_email(
        sender,
        "---------- Forwarded message ---------\n"
        f"From: {from_value}\nDate: Mon, 9 Nov 2026 at 10:15\nSubject: Help\n"
        f"To: {MAILBOX}\n\nPlease call me back.",
    )


def json_email(sender: str, body: str, verdict: bool = True) -> Email:
    return email_from_json(
        {
            "from": sender,
            "to": MAILBOX,
            "subject": "Fwd: Help",
            "headers": {"Authentication-Results": gmail_pass(sender)} if verdict else {},
            "body": body,
        }
    )


VICTIM = "victim@bank.example"


@pytest.mark.parametrize(
    "from_value",
    [
        f"Jan <jan@x.example>, {VICTIM}",  # several addresses
        f"{VICTIM}; jan@x.example",
        f'"{VICTIM}" <jan@x.example>',  # a display name holding an address
        f"Bank ({VICTIM}) <jan@x.example>",
        f"Jan <{MAILBOX}>",  # the mailbox itself
        "Billing <billing@brightlane.io>",  # the mailbox's organisation
        f"Maya <{COLLEAGUE}>",  # the forwarder itself
        f"Jan <jan@x.example\r\nBcc: {VICTIM}>",  # CRLF in the address
        f"Jan\u2028Bcc: {VICTIM} <jan@x.example>",
    ],
)
def test_a_hostile_block_never_makes_its_address_the_customer(from_value: str) -> None:
    reading = read_customer(_forward(from_value), [SOURCE])
    customer = reading.customer
    assert VICTIM not in customer.address and VICTIM not in customer.name
    assert not any(c in customer.address + customer.name for c in "\r\n\u2028")
    assert not same_address(customer.address, MAILBOX)
    if reading.taken:  # only a clean single address of someone else is ever taken
        assert customer.address == "jan@x.example" and "@" not in customer.name


def test_an_attached_message_with_a_crlf_in_its_writers_name_injects_nothing() -> None:
    raw = (
        f"Authentication-Results: {gmail_pass(COLLEAGUE)}\nFrom: Maya <{COLLEAGUE}>\n"
        f"To: {MAILBOX}\nSubject: Fwd: Q\nMessage-ID: <f1@brightlane.io>\nMIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\n'
        "see below\n--b\nContent-Type: message/rfc822\n\n"
        "From: =?utf-8?q?Jan=0D=0AX-Injected=3A_1?= <jan@x.example>\nTo: x@y.example\n"
        "Subject: Q\nDate: Mon, 9 Nov 2026 10:15:00 +0000\n\nQuestion\n--b--\n"
    )
    customer = read_customer(email_from_eml(raw.encode())).customer
    assert customer.address in (COLLEAGUE, "jan@x.example")
    assert not any(c in customer.name for c in "\r\n") and "Injected" not in customer.name


def test_a_colleagues_forward_names_the_writer_and_an_unauthenticated_one_says_why() -> None:
    taken = read_customer(_forward("Jan Novák <jan@x.example>"))
    assert taken.taken and taken.customer.address == "jan@x.example"
    assert taken.reason.startswith(f"the forwarded message's writer, forwarded by {COLLEAGUE}")
    body = _forward("Jan Novák <jan@x.example>").body_text
    unauthenticated = read_customer(json_email(COLLEAGUE, body, verdict=False))
    assert not unauthenticated.taken and unauthenticated.customer.address == COLLEAGUE
    assert "the forwarder is not authenticated" in unauthenticated.reason
    outsider = read_customer(json_email(OUTSIDER, body))
    assert "neither the mailbox's organisation nor a configured forwarding source" in (
        outsider.reason
    )
    assert read_customer(json_email(COLLEAGUE, "Just a question.")).reason == ""


@pytest.mark.parametrize(
    "from_value", ['"Bank <support>" <jan@x.example>', '"Jan\x07Novak" <jan@x.example>']
)
def test_a_display_name_posing_as_an_address_or_holding_control_characters_is_refused(
    from_value: str,
) -> None:
    reading = read_customer(_forward(from_value))
    assert not reading.taken and reading.customer.address == COLLEAGUE
    assert reading.reason.endswith("its display name holds an address or control characters")


@pytest.mark.parametrize(
    ("forwarder", "writer"),
    [(SOURCE, f"Desk <{SOURCE}>"), (SOURCE, "Other desk <other@helpdesk.example>")],
)
def test_a_forwarding_source_is_never_the_customer(forwarder: str, writer: str) -> None:
    reading = read_customer(_forward(writer, forwarder), [SOURCE, "other@helpdesk.example"])
    assert not reading.taken and reading.customer.address == forwarder
    assert reading.reason.endswith("it is the forwarder or a forwarding source")
